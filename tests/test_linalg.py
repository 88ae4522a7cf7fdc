"""Linear algebra on tpu against CPU: the Cholesky family, triangular
solves and the LU family (solve, inv, det, slogdet), with their batch
broadcasting, layouts, out= variants, errors and gradients, and the flows
that use them (a Gaussian process posterior, MultivariateNormal training).
tests/test_opinfo.py runs their OpInfo samples too."""

import copy

import pytest
import torch

import torch_tpu

DEV = "tpu"


def _same(actual, expected, atol=1e-4, rtol=1e-4):
    if isinstance(expected, (tuple, list)):
        for a, e in zip(actual, expected):
            _same(a, e, atol, rtol)
        return
    assert actual.device.type == DEV
    a = actual.cpu()
    assert a.dtype == expected.dtype and a.shape == expected.shape
    assert a.stride() == expected.stride(), "CPU's (column-major) layout"
    torch.testing.assert_close(a, expected, atol=atol, rtol=rtol, equal_nan=True)


def _both(fn, *args):
    return fn(*[a.to(DEV) if isinstance(a, torch.Tensor) else a for a in args]), fn(*args)


def _spd(*batch, n=5, dtype=torch.float32):
    a = torch.randn(*batch, n, n, dtype=dtype)
    return a @ a.mH + n * torch.eye(n, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_cholesky_family_matches_cpu(dtype):
    torch.manual_seed(0)
    S, B = _spd(3, dtype=dtype), torch.randn(3, 5, 2, dtype=dtype)
    for upper in (False, True):
        _same(*_both(lambda s: torch.linalg.cholesky(s, upper=upper), S))
        F = torch.linalg.cholesky(S, upper=upper)
        _same(*_both(lambda b, f: torch.cholesky_solve(b, f, upper=upper), B, F))
        _same(*_both(lambda f: torch.cholesky_inverse(f, upper=upper), F))
    # only the lower triangle is read, as LAPACK reads it
    junk = S + torch.triu(torch.randn(5, 5, dtype=dtype), 1)
    _same(*_both(torch.linalg.cholesky, junk))
    _same(*_both(lambda s: torch.linalg.cholesky(s, out=torch.empty(0, dtype=dtype, device=s.device)), S))


def test_cholesky_info_without_a_host_read():
    """info is LAPACK's (the order of the first leading minor that is not
    positive definite) and cholesky_ex does not sync."""
    m = torch.stack([_spd(n=3), torch.tensor([[1.0, 2, 3], [2, 1, 0], [3, 0, 1]]),
                     torch.tensor([[4.0, 2, 0], [2, float("nan"), 0], [0, 0, 1]]), -torch.eye(3)])
    x = m.to(DEV)
    before = torch_tpu.debug.metrics()["host_syncs"]
    L, info = torch.linalg.cholesky_ex(x)
    assert torch_tpu.debug.metrics()["host_syncs"] == before
    assert info.cpu().tolist() == torch.linalg.cholesky_ex(m).info.tolist() == [0, 2, 2, 1]
    torch.testing.assert_close(L[0].cpu(), torch.linalg.cholesky(m[0]))
    for device in ("cpu", DEV):
        with pytest.raises(torch.linalg.LinAlgError,
                           match=r"\(Batch element 1\): The factorization could not be completed "
                                 r"because the input is not positive-definite \(the leading minor "
                                 r"of order 2 is not positive-definite\)"):
            torch.linalg.cholesky(m.to(device))


def test_triangular_solves_match_cpu():
    torch.manual_seed(0)
    A = torch.randn(3, 5, 5) + 5 * torch.eye(5)
    B = torch.randn(3, 5, 2)
    for upper in (False, True):
        for unit in (False, True):
            _same(*_both(lambda a, b: torch.linalg.solve_triangular(
                a, b, upper=upper, unitriangular=unit), A, B))
        _same(*_both(lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper, left=False),
                     A, B.mT))
        for transpose in (False, True):
            _same(*_both(lambda b, a: torch.triangular_solve(b, a, upper=upper, transpose=transpose),
                         B, A))
    # batch broadcasting of A and B; B of another dtype takes A's
    _same(*_both(lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), A[0],
                 torch.randn(2, 1, 5, 3, dtype=torch.float64)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_lu_family_matches_cpu(dtype):
    torch.manual_seed(0)
    A, B = torch.randn(3, 5, 5, dtype=dtype), torch.randn(3, 5, 2, dtype=dtype)
    # LAPACK's factors and pivots, square and rectangular
    for shape in ((3, 5, 5), (2, 4, 6), (2, 6, 4)):
        _same(*_both(torch.linalg.lu_factor_ex, torch.randn(*shape, dtype=dtype)))
    for shape in ((3, 5, 5), (4, 3), (3, 4)):
        M = torch.randn(*shape, dtype=dtype)
        _same(*_both(torch.linalg.lu, M))
        _same(*_both(torch.lu_unpack, *torch.linalg.lu_factor(M)))
    LU, piv = torch.linalg.lu_factor(A)
    for left in (True, False):
        for adjoint in (False, True):
            rhs = B if left else B.mT
            _same(*_both(lambda l, p, b: torch.linalg.lu_solve(l, p, b, left=left, adjoint=adjoint),
                         LU, piv, rhs))
    _same(*_both(torch.linalg.solve, A, B))
    _same(*_both(torch.linalg.solve, A, B[..., 0]))  # NumPy's vector right-hand side
    _same(*_both(torch.linalg.solve, A[0], torch.randn(4, 1, 5, 2, dtype=dtype)))
    _same(*_both(lambda a, b: torch.linalg.solve(a, b, left=False), A, B.mT))
    _same(*_both(torch.linalg.inv, A))
    _same(*_both(torch.linalg.det, A))
    _same(*_both(torch.linalg.slogdet, A))
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=dtype)
    _same(*_both(torch.linalg.lu_factor_ex, singular))
    _same(*_both(torch.linalg.det, singular))
    for device in ("cpu", DEV):
        with pytest.raises(torch.linalg.LinAlgError, match="input matrix is singular"):
            torch.linalg.solve(singular.to(device), torch.ones(2, dtype=dtype, device=device))
        with pytest.raises(torch.linalg.LinAlgError, match="The diagonal element 2 is zero"):
            torch.linalg.inv(singular.to(device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_qr_matches_cpu(dtype):
    """LAPACK's Householder signs: Q and R equal CPU's, every mode."""
    torch.manual_seed(0)
    for shape in ((5, 3), (3, 5), (2, 4, 4)):
        for mode in ("reduced", "complete", "r"):
            _same(*_both(lambda a: torch.linalg.qr(a, mode=mode), torch.randn(*shape, dtype=dtype)))
    _same(*_both(torch.linalg.qr, torch.zeros(3, 2, dtype=dtype)))  # no reflector at all
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
            torch.linalg.qr(torch.ones(2, 2, device=device), mode="x")


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_householder_pieces_match_cpu(dtype):
    """geqrf, householder_product (orgqr) and ormqr: LAPACK's packed
    reflectors and their products, as CPU's."""
    torch.manual_seed(0)
    for shape in ((5, 3), (3, 5), (2, 4, 4)):
        _same(*_both(torch.geqrf, torch.randn(*shape, dtype=dtype)))
    a, tau = torch.geqrf(torch.randn(5, 3, dtype=dtype))
    _same(*_both(torch.linalg.householder_product, a, tau))
    _same(*_both(torch.linalg.householder_product, a[:, :2], tau[:1]))
    c = torch.randn(5, 4, dtype=dtype)
    for left in (True, False):
        for transpose in (False, True):
            _same(*_both(lambda x, t, o: torch.ormqr(x, t, o, left=left, transpose=transpose),
                         a, tau, c if left else c.mT))


def test_orthogonal_parametrization_trains_like_cpu():
    """nn.utils.parametrizations.orthogonal on a tall or wide weight: its
    Householder map (householder_product), forward and gradients."""
    torch.manual_seed(0)
    for shape in ((5, 3), (3, 5)):
        lin = torch.nn.Linear(shape[1], shape[0])
        torch.nn.utils.parametrizations.orthogonal(lin)
        x = torch.randn(4, shape[1])
        train_like_cpu = [copy.deepcopy(lin), copy.deepcopy(lin).to(DEV)]
        for model, device in zip(train_like_cpu, ("cpu", DEV)):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad()
                (model(x.to(device)) ** 2).sum().backward()
                opt.step()
        for a, e in zip(train_like_cpu[1].parameters(), train_like_cpu[0].parameters()):
            torch.testing.assert_close(a.detach().cpu(), e.detach(), atol=1e-5, rtol=1e-5)
        w = train_like_cpu[1].weight.detach().cpu()
        gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
        torch.testing.assert_close(gram, torch.eye(min(shape)), atol=1e-5, rtol=0)


def test_orthogonal_init_on_tpu():
    """nn.init.orthogonal_ on a tpu parameter (RNNs, RL policies): QR of a
    normal draw, made orthogonal."""
    torch.manual_seed(0)
    for shape in ((6, 4), (3, 8), (4, 2, 3)):
        w = torch.nn.init.orthogonal_(torch.empty(*shape, device=DEV)).cpu().flatten(1)
        gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
        torch.testing.assert_close(gram, torch.eye(gram.shape[0]), atol=1e-5, rtol=0)


@pytest.mark.parametrize("make", [lambda a: a, lambda a: a.mT], ids=["contiguous", "transposed"])
def test_linalg_gradients_match_cpu(make):
    """PyTorch's backward formulas read the saved factors (CPU factorizes
    A^T for det and slogdet of a contiguous real A): tpu saves the same."""
    torch.manual_seed(0)
    A0, S0 = torch.randn(5, 5), _spd(n=5)
    fns = {
        "det": lambda a, s: torch.linalg.det(make(a)),
        "slogdet": lambda a, s: torch.linalg.slogdet(make(a))[1],
        "inv": lambda a, s: (torch.linalg.inv(make(a)) ** 2).sum(),
        "solve": lambda a, s: torch.linalg.solve(make(a), torch.ones(5, 2, device=a.device)).sum(),
        "cholesky": lambda a, s: torch.linalg.cholesky(make(s)).sum(),
        "qr": lambda a, s: sum((t * t).sum() for t in torch.linalg.qr(make(a)[:, :3])),
        "lu": lambda a, s: sum((t * t).sum() for t in torch.linalg.lu(make(a))[1:]),
        "solve_triangular": lambda a, s: torch.linalg.solve_triangular(
            torch.linalg.cholesky(s), make(a), upper=False).sum(),
    }
    for name, fn in fns.items():
        grads = []
        for device in ("cpu", DEV):
            a = A0.to(device).requires_grad_()
            s = S0.to(device).requires_grad_()
            grads.append([g.cpu() for g in torch.autograd.grad(fn(a, s), (a, s), allow_unused=True)
                          if g is not None])
        for t, c in zip(grads[1], grads[0]):
            torch.testing.assert_close(t, c, atol=1e-4, rtol=1e-4, msg=lambda m: f"{name}: {m}")


def test_argument_errors_like_cpu():
    cases = [
        (lambda d: torch.linalg.cholesky(torch.randn(3, 4, device=d)), RuntimeError,
         "linalg.cholesky: A must be batches of square matrices, but they are 3 by 4 matrices"),
        (lambda d: torch.linalg.cholesky(torch.ones(3, 3, dtype=torch.long, device=d)), RuntimeError,
         "Expected a floating point or complex tensor as input. Got Long"),
        (lambda d: torch.linalg.cholesky(torch.eye(3, dtype=torch.half, device=d)), NotImplementedError,
         "\"cholesky_cpu\" not implemented for 'Half'"),
        (lambda d: torch.linalg.solve_triangular(torch.eye(3, device=d), torch.ones(4, 2, device=d),
                                                 upper=True), RuntimeError,
         r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)"),
        (lambda d: torch.triangular_solve(torch.ones(3, 2, device=d),
                                          torch.eye(3, dtype=torch.float64, device=d)), RuntimeError,
         "Expected b and A to have the same dtype"),
        (lambda d: torch.linalg.det(torch.randn(3, 4, device=d)), RuntimeError,
         "linalg.det: A must be batches of square matrices"),
        (lambda d: torch.linalg.solve(torch.eye(3, device=d), torch.ones(4, device=d)), RuntimeError,
         "Incompatible shapes of A and B"),
        (lambda d: torch.cholesky_inverse(torch.randn(3, 4, device=d)), RuntimeError,
         "cholesky_inverse: A must be batches of square matrices"),
        # where CPU has no floating-point check of its own, its LAPACK
        # kernel's dtype dispatch refuses an integer matrix
        (lambda d: torch.linalg.eigh(torch.ones(3, 3, dtype=torch.long, device=d)),
         NotImplementedError, "\"linalg_eigh_cpu\" not implemented for 'Long'"),
        (lambda d: torch.linalg.lu_factor(torch.ones(3, 3, dtype=torch.int32, device=d)),
         NotImplementedError, "\"lu_cpu\" not implemented for 'Int'"),
        (lambda d: torch.linalg.lstsq(torch.ones(3, 3, dtype=torch.long, device=d),
                                      torch.ones(3, 1, dtype=torch.long, device=d)),
         RuntimeError, "This function doesn't handle types other than float and double"),
        (lambda d: torch.linalg.lu_solve(torch.eye(3, dtype=torch.half, device=d),
                                         torch.ones(3, dtype=torch.int32, device=d),
                                         torch.ones(3, 1, dtype=torch.half, device=d)),
         NotImplementedError, "\"linalg.lu_solve_cpu\" not implemented for 'Half'"),
    ]
    for fn, exc, message in cases:
        for device in ("cpu", DEV):
            with pytest.raises(exc, match=message):
                fn(device)


def test_gaussian_process_posterior_and_mvn_fit_like_cpu():
    """A GP's posterior mean and variance (cholesky, cholesky_solve,
    solve_triangular) and a MultivariateNormal fitted by gradient descent."""
    torch.manual_seed(0)
    x = torch.linspace(0, 5, 40).unsqueeze(-1)
    y = torch.sin(x).squeeze(-1) + 0.05 * torch.randn(40)
    xs = torch.linspace(0, 5, 17).unsqueeze(-1)

    def posterior(x, y, xs):
        k = lambda a, b: torch.exp(-0.5 * (a - b.T) ** 2)
        L = torch.linalg.cholesky(k(x, x) + 0.01 * torch.eye(len(x), device=x.device))
        mean = k(xs, x) @ torch.cholesky_solve(y.unsqueeze(-1), L)
        v = torch.linalg.solve_triangular(L, k(x, xs), upper=False)
        return mean.squeeze(-1), 1 - (v * v).sum(0)

    actual, expected = _both(posterior, x, y, xs)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a.cpu(), e, atol=2e-4, rtol=1e-4)

    data = torch.randn(200, 3) @ torch.tensor([[1.0, 0, 0], [0.5, 1, 0], [0.2, 0.3, 0.5]])
    params = {}
    for device in ("cpu", DEV):
        loc = torch.zeros(3, device=device, requires_grad=True)
        raw = torch.eye(3, device=device).requires_grad_()
        opt = torch.optim.Adam([loc, raw], lr=0.05)
        for _ in range(5):
            tril = torch.tril(raw, -1) + torch.diag(raw.diagonal().exp())
            loss = -torch.distributions.MultivariateNormal(loc, scale_tril=tril).log_prob(
                data.to(device)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        params[device] = (loc.detach().cpu(), raw.detach().cpu())
    for a, e in zip(params[DEV], params["cpu"]):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)


def _sign_fixed(v):
    """Columns scaled so each one's largest-magnitude entry is real and
    positive: eigenvectors and singular vectors are unique only up to that
    sign (a unit phase for complex ones)."""
    idx = v.abs().argmax(-2, keepdim=True)
    s = torch.sgn(torch.gather(v, -2, idx))
    return v * torch.where(s == 0, torch.ones_like(s), s).conj()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
def test_eigh_matches_cpu(dtype):
    torch.manual_seed(0)
    for n in (1, 2, 6):
        A = torch.randn(3, n, n, dtype=dtype)
        for uplo in ("L", "U"):
            # only the chosen triangle is read
            w, v = torch.linalg.eigh(A, UPLO=uplo)
            wt, vt = torch.linalg.eigh(A.to(DEV), UPLO=uplo)
            _same(wt, w)
            assert vt.stride() == v.stride()
            torch.testing.assert_close(_sign_fixed(vt.cpu()), _sign_fixed(v), atol=1e-4, rtol=1e-4)
        _same(*_both(torch.linalg.eigvalsh, A))
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
            torch.linalg.eigh(torch.eye(2, device=device), UPLO="X")
        with pytest.raises(RuntimeError, match="linalg.eigh: A must be batches of square matrices"):
            torch.linalg.eigh(torch.ones(2, 3, device=device))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_svd_matches_cpu(dtype):
    torch.manual_seed(0)
    for shape in ((5, 3), (3, 5), (4, 4), (2, 7, 2)):
        A = torch.randn(*shape, dtype=dtype)
        for full in (False, True):
            U, S, Vh = torch.linalg.svd(A, full_matrices=full)
            Ut, St, Vht = torch.linalg.svd(A.to(DEV), full_matrices=full)
            _same(St, S)
            assert Ut.shape == U.shape and Vht.shape == Vh.shape
            assert Ut.stride() == U.stride() and Vht.stride() == Vh.stride()
            k = S.shape[-1]
            torch.testing.assert_close(_sign_fixed(Ut.cpu()[..., :k]), _sign_fixed(U[..., :k]),
                                       atol=1e-4, rtol=1e-4)
            eye = torch.eye(Ut.shape[-1], dtype=dtype)
            torch.testing.assert_close(Ut.cpu().mH @ Ut.cpu(), eye.expand_as(Ut.mH @ Ut), atol=1e-5, rtol=0)
            rebuilt = (Ut.cpu()[..., :k] * St.cpu().unsqueeze(-2).to(dtype)) @ Vht.cpu()[..., :k, :]
            torch.testing.assert_close(rebuilt, A, atol=1e-5, rtol=1e-5)
    # rank deficient: zero singular values, still orthonormal vectors
    A = (torch.randn(6, 2) @ torch.randn(2, 4)).to(dtype)
    Ut, St, Vht = torch.linalg.svd(A.to(DEV))
    torch.testing.assert_close(Ut.cpu().mH @ Ut.cpu(), torch.eye(6, dtype=dtype), atol=1e-5, rtol=0)
    _same(*_both(torch.linalg.matrix_rank, A))
    _same(*_both(torch.linalg.pinv, A))
    _same(*_both(lambda a: torch.linalg.matrix_norm(a, "nuc"), A))
    _same(*_both(lambda a: torch.linalg.matrix_norm(a, 2), A))
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="keyword argument `driver=` is only supported on CUDA"):
            torch.linalg.svd(torch.eye(2, device=device), driver="gesvd")


@pytest.mark.parametrize("n", [5, 33, 64])
def test_parallel_jacobi_sizes_like_cpu(n):
    """Sizes past the small ones above, odd (a padding index the rounds
    must never touch) and even: eigenvalues and singular values as CPU's,
    vectors orthonormal and reconstructing the matrix."""
    torch.manual_seed(n)
    a = torch.randn(n, n, dtype=torch.float64)
    sym = a + a.T
    w, v = torch.linalg.eigh(sym.to(DEV))
    torch.testing.assert_close(w.cpu(), torch.linalg.eigvalsh(sym), atol=1e-10, rtol=1e-10)
    v = v.cpu()
    torch.testing.assert_close(v @ torch.diag(w.cpu()) @ v.T, sym, atol=1e-10, rtol=0)
    torch.testing.assert_close(v.T @ v, torch.eye(n, dtype=torch.float64), atol=1e-12, rtol=0)
    tall = a[:, : n // 2 + 1]
    u, s, vh = (t.cpu() for t in torch.linalg.svd(tall.to(DEV), full_matrices=False))
    torch.testing.assert_close(s, torch.linalg.svdvals(tall), atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(u @ torch.diag(s) @ vh, tall, atol=1e-10, rtol=0)
    torch.testing.assert_close(vh @ vh.T, torch.eye(vh.shape[0], dtype=torch.float64), atol=1e-12,
                               rtol=0)


def test_complex_decomposition_gradients():
    """PyTorch's eigh and SVD backward formulas on tpu's complex factors,
    through losses that do not depend on the vectors' phases."""
    torch.manual_seed(0)
    A = torch.randn(4, 4, dtype=torch.complex128)

    def eigh_loss(x):
        w, v = torch.linalg.eigh(x)
        return w.pow(2).sum() + (v.abs() ** 4).sum()

    def svd_loss(x):
        u, s, vh = torch.linalg.svd(x, full_matrices=False)
        return s.sum() + (u @ vh).abs().sum()

    for loss, x in ((eigh_loss, A + A.mH), (svd_loss, A[:, :3])):
        grads = []
        for device in ("cpu", DEV):
            leaf = x.clone().to(device).requires_grad_()
            loss(leaf).backward()
            grads.append(leaf.grad.cpu())
        torch.testing.assert_close(grads[1], grads[0], atol=1e-10, rtol=1e-10)


def test_pca_and_whitening_flows_like_cpu():
    """torch.pca_lowrank (its QR, its SVD; with q the full rank its random
    projection, drawn by each device's generator, cannot change the result)
    and a whitening transform from the covariance's eigendecomposition."""
    torch.manual_seed(0)
    X = torch.randn(200, 6) @ torch.randn(6, 6)
    torch.manual_seed(1)
    _, s_cpu, _ = torch.pca_lowrank(X, q=6)
    torch.manual_seed(1)
    _, s_tpu, _ = torch.pca_lowrank(X.to(DEV), q=6)
    torch.testing.assert_close(s_tpu.cpu(), s_cpu, atol=1e-3, rtol=1e-4)

    def whiten(x):
        xc = x - x.mean(0)
        w, v = torch.linalg.eigh(xc.T @ xc / (len(x) - 1))
        return xc @ v @ torch.diag(w.rsqrt()) @ v.T  # invariant to the vectors' signs

    Z = whiten(X.to(DEV)).cpu()
    torch.testing.assert_close(Z, whiten(X), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(Z.T @ Z / 199, torch.eye(6), atol=1e-4, rtol=0)


def test_lstsq_matches_cpu():
    """linalg.lstsq through the SVD: every driver's outputs as CPU's (which
    ones are empty, the rank, the residuals, the singular values), vector
    and batched right-hand sides, wide and rank-deficient matrices."""
    torch.manual_seed(0)
    A, B = torch.randn(6, 3), torch.randn(6, 2)

    def same(actual, expected):
        for a, e in zip(actual, expected):
            assert a.shape == e.shape and a.dtype == e.dtype
            torch.testing.assert_close(a.cpu(), e, atol=1e-4, rtol=1e-4)

    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        same(torch.linalg.lstsq(A.to(DEV), B.to(DEV), driver=driver), torch.linalg.lstsq(A, B, driver=driver))
    A3, b3 = torch.randn(2, 6, 3), torch.randn(2, 6)
    same(torch.linalg.lstsq(A3.to(DEV), b3.unsqueeze(-1).to(DEV)), torch.linalg.lstsq(A3, b3.unsqueeze(-1)))
    same(torch.linalg.lstsq(A.T.to(DEV), B[:3].to(DEV)), torch.linalg.lstsq(A.T, B[:3]))
    Ac, Bc = torch.randn(6, 3, dtype=torch.complex64), torch.randn(6, 2, dtype=torch.complex64)
    for driver in ("gels", "gelsd"):
        same(torch.linalg.lstsq(Ac.to(DEV), Bc.to(DEV), driver=driver),
             torch.linalg.lstsq(Ac, Bc, driver=driver))
    low_rank = torch.randn(6, 2) @ torch.randn(2, 3)
    same(torch.linalg.lstsq(low_rank.to(DEV), B.to(DEV), driver="gelsd"),
         torch.linalg.lstsq(low_rank, B, driver="gelsd"))
    for device in ("cpu", DEV):
        with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
            torch.linalg.lstsq(A.to(device), B.to(device), driver="x")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_matrix_exp_matches_cpu(dtype):
    """Scaling and squaring: small, moderate and large norms, batches,
    gradients, and the orthogonal parametrization of a square weight."""
    torch.manual_seed(0)
    for scale in (0.01, 1.0, 10.0):
        A = (torch.randn(3, 4, 4) * scale / 4).to(dtype)
        expected = torch.linalg.matrix_exp(A)
        actual = torch.linalg.matrix_exp(A.to(DEV)).cpu()
        tol = 1e-12 if dtype == torch.float64 else 2e-6
        assert ((actual - expected).abs().max() / expected.abs().max()).item() < tol, scale
    assert torch.linalg.matrix_exp(torch.zeros(2, 0, 0, device=DEV)).shape == (2, 0, 0)
    if dtype == torch.float32:
        A = torch.randn(4, 4)
        grads = []
        for device in ("cpu", DEV):
            a = A.to(device).requires_grad_()
            grads.append(torch.autograd.grad(torch.linalg.matrix_exp(a).sum(), a)[0].cpu())
        torch.testing.assert_close(grads[1], grads[0], atol=1e-4, rtol=1e-4)
        lin = torch.nn.Linear(4, 4)
        torch.nn.utils.parametrizations.orthogonal(lin)  # matrix_exp for square weights
        x = torch.randn(2, 4)
        torch.testing.assert_close(copy.deepcopy(lin).to(DEV)(x.to(DEV)).cpu(), lin(x), atol=1e-5, rtol=1e-5)


def _matched(actual, expected):
    """actual's eigenvalues reordered to pair with expected's (nearest
    first): PyTorch does not fix their order, and tpu's differs from
    LAPACK's. Returns the permutation of actual's last dim."""
    a, e = actual.reshape(-1, actual.shape[-1]), expected.reshape(-1, expected.shape[-1])
    orders = []
    for row_a, row_e in zip(a, e):
        free = list(range(row_a.shape[0]))
        order = []
        for value in row_e:
            best = min(free, key=lambda i: abs(complex(row_a[i]) - complex(value)))
            free.remove(best)
            order.append(best)
        orders.append(order)
    return torch.tensor(orders).reshape(expected.shape)


def _check_eig(A, atol):
    """tpu's eig of A against CPU's and against its definition."""
    w, v = torch.linalg.eig(A)
    wt, vt = (t.cpu() for t in torch.linalg.eig(A.to(DEV)))
    assert (wt.dtype, wt.shape, vt.dtype, vt.shape) == (w.dtype, w.shape, v.dtype, v.shape)
    assert vt.stride() == v.stride(), "CPU's (column-major) eigenvectors"
    # (each matrix's values relative to its scale)
    scale = A.abs().amax((-2, -1)).clamp(min=1.0)
    order = _matched(wt, w)
    assert ((wt.gather(-1, order) - w).abs() <= atol * scale.unsqueeze(-1)).all()
    # A V = V diag(w), unit columns whose largest entry is real and positive
    residual = A.to(vt.dtype) @ vt - vt * wt.unsqueeze(-2)
    assert (residual.abs().amax((-2, -1)) <= atol * scale).all()
    torch.testing.assert_close(vt.norm(dim=-2), torch.ones(wt.shape, dtype=w.real.dtype),
                               atol=atol, rtol=0)
    largest = vt.gather(-2, vt.abs().argmax(-2, keepdim=True))
    assert (largest.imag.abs() <= atol).all() and (largest.real > 0).all()
    # eigvals: the same values in the same order
    torch.testing.assert_close(torch.linalg.eigvals(A.to(DEV)).cpu(), wt)
    return wt, vt


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
def test_eig_matches_cpu(dtype):
    torch.manual_seed(0)
    atol = 1e-4 if dtype in (torch.float32, torch.complex64) else 1e-11
    _check_eig(torch.randn(1, 1, dtype=dtype), atol)
    _check_eig(torch.randn(24, 24, dtype=dtype), atol)
    # a batch, with matrices of large and small scale in it
    A = torch.randn(2, 3, 5, 5, dtype=dtype)
    A[0, 1] *= 1e6
    A[1, 2] *= 1e-6
    _check_eig(A, atol)
    # empty and batches of empty matrices, as CPU
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        A = torch.randn(*shape, dtype=dtype)
        w, v = torch.linalg.eig(A)
        wt, vt = torch.linalg.eig(A.to(DEV))
        assert (wt.shape, vt.shape, wt.dtype) == (w.shape, v.shape, w.dtype)


def test_eig_of_matrices_qr_iterations_find_hard():
    """Cases where plain shifted QR stalls or divides by zero: a cyclic
    permutation (every shift from a 2x2 corner is 0: the exceptional shift
    breaks it), a rotation, Jordan blocks and a nilpotent matrix (repeated
    eigenvalues: the back substitution's divisors are zero, and its vectors
    must stay finite), identity, zeros, triangles, a symmetric matrix and a
    companion matrix."""
    f64 = torch.float64
    cases = {
        "cyclic": torch.roll(torch.eye(7, dtype=f64), 1, 0),
        "swap": torch.tensor([[0.0, 1], [1, 0]], dtype=f64),
        "rotation": torch.tensor([[0.0, -1], [1, 0]], dtype=f64),
        "jordan": 2 * torch.eye(4, dtype=f64) + torch.diag(torch.ones(3, dtype=f64), 1),
        "nilpotent": torch.diag(torch.ones(3, dtype=f64), 1),
        "identity": torch.eye(4, dtype=f64),
        "zeros": torch.zeros(3, 3, dtype=f64),
        "upper": torch.triu(torch.randn(5, 5, dtype=f64)),
        "lower": torch.tril(torch.randn(5, 5, dtype=f64)),
        "symmetric": (lambda x: x + x.T)(torch.randn(5, 5, dtype=f64)),
        "companion": torch.tensor([[0.0, 0, -6], [1, 0, 11], [0, 1, -6]], dtype=f64),
    }
    torch.manual_seed(0)
    for name, A in cases.items():
        defective = name in ("jordan", "nilpotent")
        w, v = torch.linalg.eig(A)
        wt, vt = (t.cpu() for t in torch.linalg.eig(A.to(DEV)))
        assert torch.isfinite(torch.view_as_real(vt)).all(), name
        order = _matched(wt, w)
        torch.testing.assert_close(wt.gather(-1, order), w, atol=1e-12, rtol=0, msg=name)
        residual = A.to(vt.dtype) @ vt - vt * wt.unsqueeze(-2)
        assert residual.abs().max().item() < 1e-12, name
        if defective:
            # one eigenvector direction (e_1), as CPU's columns
            torch.testing.assert_close(vt.abs(), v.abs(), atol=1e-12, rtol=0, msg=name)


def test_eig_gradients_match_cpu():
    """linalg.eig's backward (and eigvals', which PyTorch computes through
    eig when a gradient is needed) on functions that do not depend on the
    eigenvalues' order or the eigenvectors' phases."""
    torch.manual_seed(0)
    A0 = torch.randn(5, 5, dtype=torch.float64)
    losses = {
        "values": lambda w, v: (w.real ** 2 - w.imag ** 2).sum(),
        "vectors": lambda w, v: (w.real * v.abs()[0] ** 2).sum(),
    }
    for name, loss in losses.items():
        grads = []
        for device in ("cpu", DEV):
            a = A0.to(device).requires_grad_()
            grads.append(torch.autograd.grad(loss(*torch.linalg.eig(a)), a)[0].cpu())
        torch.testing.assert_close(grads[1], grads[0], atol=1e-9, rtol=1e-9, msg=name)
    grads = []
    for device in ("cpu", DEV):
        a = A0.to(device).requires_grad_()
        grads.append(torch.autograd.grad(torch.linalg.eigvals(a).abs().sum(), a)[0].cpu())
    torch.testing.assert_close(grads[1], grads[0], atol=1e-9, rtol=1e-9)


def test_eig_errors_and_out_like_cpu():
    nan = torch.tensor([[1.0, float("nan")], [0, 1]])
    cases = [
        (lambda d: torch.linalg.eig(nan.to(d)), RuntimeError,
         "torch.linalg.eig: input tensor should not contain infs or NaNs."),
        (lambda d: torch.linalg.eig(torch.ones(2, 3, device=d)), RuntimeError,
         "linalg.eig: A must be batches of square matrices, but they are 2 by 3 matrices"),
        (lambda d: torch.linalg.eigvals(torch.ones(3, device=d)), RuntimeError,
         "linalg.eigvals: The input tensor A must have at least 2 dimensions."),
        (lambda d: torch.linalg.eig(torch.ones(3, 3, dtype=torch.long, device=d)), RuntimeError,
         "Unknown Complex ScalarType for Long"),
        (lambda d: torch.linalg.eigvals(torch.ones(3, 3, dtype=torch.half, device=d)),
         NotImplementedError, "\"linalg_eig_out_cpu\" not implemented for 'Half'"),
        (lambda d: torch.linalg.eig(torch.eye(3, device=d),
                                    out=(torch.empty(0, device=d), torch.empty(0, device=d))),
         RuntimeError, "torch.linalg.eig: Expected eigenvalues to be safely castable from "
                       "ComplexFloat dtype, but got eigenvalues with dtype Float"),
        (lambda d: torch.linalg.eigvals(torch.eye(3, device=d), out=torch.empty(0, device=d)),
         RuntimeError, "torch.linalg.eigvals: Expected eigenvalues to be safely castable"),
    ]
    for fn, exc, message in cases:
        for device in ("cpu", DEV):
            with pytest.raises(exc, match=message):
                fn(device)
    # eigvals does not check for infs or NaNs: the eigenvalues of such a
    # matrix come out as NaN, as from CPU's LAPACK (for NaN entries CPU's
    # MKL stops the process, so only tpu is asked)
    inf = torch.tensor([[1.0, float("inf")], [2, 1]])
    assert torch.isnan(torch.linalg.eigvals(inf)).all()
    for m in (inf, torch.tensor([[float("nan"), 1.0], [2, 1]]),
              torch.tensor([[1.0, 2, 3], [4, float("inf"), 6], [7, 8, 9]]),
              torch.tensor([[1.0, float("inf")], [0, 1]])):
        assert torch.isnan(torch.linalg.eigvals(m.to(DEV)).cpu()).all()
    # out= of a wider complex type, resized from empty, column-major vectors
    A = torch.randn(4, 4)
    outs = {}
    for device in ("cpu", DEV):
        w = torch.empty(0, dtype=torch.complex128, device=device)
        v = torch.empty(0, dtype=torch.complex64, device=device)
        torch.linalg.eig(A.to(device), out=(w, v))
        e = torch.empty(0, dtype=torch.complex128, device=device)
        torch.linalg.eigvals(A.to(device), out=e)
        outs[device] = (w.cpu(), v.cpu(), e.cpu())
    (w, v, e), (wt, vt, et) = outs["cpu"], outs[DEV]
    assert (wt.dtype, vt.dtype, et.dtype) == (w.dtype, v.dtype, e.dtype)
    assert vt.stride() == v.stride()
    order = _matched(wt, w)
    torch.testing.assert_close(wt.gather(-1, order), w, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(et, wt)
