"""torch.distributions on tpu, the way users reach it: every distribution's
log_prob, entropy, moments, cdf/icdf and KL against CPU, and every sampler
(normal with tensor parameters, gamma, Dirichlet and what is built on them)
on tpu with the right law. Sample values come from tpu's generator and
cannot equal CPU's, so samplers are checked by their statistics."""

import math

import pytest
import torch
import torch.distributions as D

import torch_tpu  # noqa: F401

DEV = "tpu"


@pytest.fixture(autouse=True)
def clean_device():
    # a test that leaves a device finding behind must not fail the next one
    yield
    try:
        torch.tpu.synchronize()
    except RuntimeError:
        pass


def _distributions(dev):
    g = torch.Generator().manual_seed(0)

    def P(*s, pos=False):
        t = torch.randn(*s, generator=g)
        return (t.abs() + 0.5 if pos else t).to(dev)

    def R(*s, lo=0.0, hi=1.0):
        return (torch.rand(*s, generator=g) * (hi - lo) + lo).to(dev)

    def C(x):
        return torch.as_tensor(x).to(dev)

    cov = C(torch.eye(3) * 2 + 0.3)
    return {
        "Normal": D.Normal(P(4), P(4, pos=True)),
        "Gamma": D.Gamma(P(4, pos=True), P(4, pos=True)),
        "Beta": D.Beta(P(4, pos=True), P(4, pos=True)),
        "Dirichlet": D.Dirichlet(P(3, 4, pos=True)),
        "Bernoulli": D.Bernoulli(probs=R(4)),
        "Poisson": D.Poisson(P(4, pos=True) * 8),
        "Binomial": D.Binomial(C(torch.tensor([3.0, 10, 40, 200])), probs=R(4)),
        "Categorical": D.Categorical(logits=P(3, 5)),
        "Exponential": D.Exponential(P(4, pos=True)),
        "Laplace": D.Laplace(P(4), P(4, pos=True)),
        "Cauchy": D.Cauchy(P(4), P(4, pos=True)),
        "Chi2": D.Chi2(P(4, pos=True)),
        "StudentT": D.StudentT(P(4, pos=True)),
        "Uniform": D.Uniform(C(torch.zeros(4)), C(torch.ones(4))),
        "LogNormal": D.LogNormal(P(4), P(4, pos=True)),
        "Gumbel": D.Gumbel(P(4), P(4, pos=True)),
        "Geometric": D.Geometric(probs=R(4, lo=0.05, hi=0.95)),
        "MultivariateNormal": D.MultivariateNormal(
            P(3), scale_tril=C(torch.eye(3)) + torch.tril(R(3, 3) * 0.1, -1)),
        "MultivariateNormal(covariance)": D.MultivariateNormal(P(3), covariance_matrix=cov),
        "LowRankMultivariateNormal": D.LowRankMultivariateNormal(P(3), P(3, 2), P(3, pos=True)),
        "Weibull": D.Weibull(P(4, pos=True), P(4, pos=True)),
        "Kumaraswamy": D.Kumaraswamy(P(4, pos=True), P(4, pos=True)),
        "HalfNormal": D.HalfNormal(P(4, pos=True)),
        "Pareto": D.Pareto(P(4, pos=True), P(4, pos=True)),
        "FisherSnedecor": D.FisherSnedecor(P(4, pos=True), P(4, pos=True)),
        "OneHotCategorical": D.OneHotCategorical(probs=R(3, 4)),
        "ContinuousBernoulli": D.ContinuousBernoulli(probs=R(4, lo=0.1, hi=0.9)),
        "LKJCholesky": D.LKJCholesky(3, C(2.0)),
        "Wishart": D.Wishart(C(5.0), covariance_matrix=cov),
        "MixtureSameFamily": D.MixtureSameFamily(D.Categorical(R(3)), D.Normal(P(3), P(3, pos=True))),
        "Independent": D.Independent(D.Normal(P(3, 2), P(3, 2, pos=True)), 1),
        "InverseGamma": D.InverseGamma(P(4, pos=True), P(4, pos=True)),
        "LogisticNormal": D.LogisticNormal(P(3), P(3, pos=True)),
    }


_CPU = _distributions("cpu")


def _methods(name, d):
    for what in ("log_prob", "entropy", "mean", "variance", "cdf", "icdf", "kl"):
        try:
            _evaluate(d, what, None)
        except NotImplementedError:
            continue  # the distribution itself does not define it
        yield what


def _evaluate(d, what, x):
    if what == "kl":
        return D.kl_divergence(d, d)
    if what in ("log_prob", "cdf", "icdf"):
        if x is None:
            x = torch.rand(5, *d.batch_shape) if what == "icdf" else d.sample((5,))
        return getattr(d, what)(x)
    value = getattr(d, what)
    return value() if callable(value) else value


@pytest.mark.parametrize("name", list(_CPU))
def test_distribution_matches_cpu(name):
    """Every method the distribution has, on tpu, equals CPU's."""
    cpu, tpu = _CPU[name], _distributions(DEV)[name]
    torch.manual_seed(0)
    for what in _methods(name, cpu):
        x = None
        if what in ("log_prob", "cdf"):
            x = cpu.sample((5,))
        elif what == "icdf":
            x = torch.rand(5, *cpu.batch_shape)
        expected = _evaluate(cpu, what, x)
        actual = _evaluate(tpu, what, None if x is None else x.to(DEV))
        assert actual.device.type == DEV, what
        torch.testing.assert_close(actual.cpu(), expected, atol=1e-4, rtol=1e-4,
                                   equal_nan=True, msg=lambda m: f"{name}.{what}: {m}")


@pytest.mark.parametrize("name", list(_CPU))
def test_distribution_samples_on_tpu(name):
    d = _distributions(DEV)[name]
    torch.manual_seed(0)
    s = d.sample((200,))
    assert s.device.type == DEV and s.shape == (200, *d.batch_shape, *d.event_shape)
    assert torch.isfinite(d.log_prob(s)).all().item(), f"{name}: a sample outside the support"
    if d.has_rsample:
        r = d.rsample((3,))
        assert r.device.type == DEV and r.shape == (3, *d.batch_shape, *d.event_shape)


def test_normal_with_tensor_parameters():
    torch.manual_seed(0)
    mean = torch.tensor([[-3.0], [0.0], [5.0]], device=DEV)
    std = torch.tensor([0.5, 1.0, 2.0, 4.0], device=DEV)
    x = torch.normal(mean.expand(3, 50_000).unsqueeze(-1).expand(3, 50_000, 4),
                     std.expand(3, 50_000, 4)).cpu().double()
    assert x.shape == (3, 50_000, 4)
    torch.testing.assert_close(x.mean(1), torch.tensor([-3.0, 0.0, 5.0], dtype=torch.double)
                               .unsqueeze(-1).expand(3, 4), atol=0.06, rtol=0)
    torch.testing.assert_close(x.std(1), torch.tensor([0.5, 1.0, 2.0, 4.0], dtype=torch.double)
                               .expand(3, 4), atol=0.04, rtol=0.01)
    # the three overloads, broadcasting, dtypes and out= as on CPU
    for device in ("cpu", DEV):
        m, s = torch.zeros(2, 1, device=device), torch.ones(3, device=device)
        assert torch.normal(m, s).shape == (2, 3)
        assert torch.normal(m.double(), s).dtype == torch.float64
        assert torch.normal(m, 2.0).shape == (2, 1)
        assert torch.normal(1.0, s).shape == (3,)
        assert torch.normal(m.bfloat16(), 1.0).dtype == torch.bfloat16
        out = torch.empty(3, dtype=torch.float64, device=device)
        assert torch.normal(torch.zeros(3, device=device), s, out=out) is out
        with pytest.raises(RuntimeError, match="must match the size"):
            torch.normal(torch.zeros(2, device=device), s)
        with pytest.raises(RuntimeError, match=r"normal expects std >= 0.0, but found std -1"):
            torch.normal(s, -1.0)
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            torch.normal(torch.tensor([1, 2], device=device), 1.0)
    g = torch.Generator(device=DEV).manual_seed(7)
    a = torch.normal(torch.zeros(5, device=DEV), torch.ones(5, device=DEV), generator=g).cpu()
    g.manual_seed(7)
    b = torch.normal(torch.zeros(5, device=DEV), torch.ones(5, device=DEV), generator=g).cpu()
    assert torch.equal(a, b), "a seeded generator gives the same values"
    assert torch.equal(torch.normal(torch.zeros(4, device=DEV), torch.zeros(4, device=DEV)).cpu(),
                       torch.zeros(4))


@pytest.mark.parametrize("std", [[1.0, -0.5], [float("nan"), 1.0]])
def test_normal_negative_std_is_a_device_finding(std):
    """CPU reads std on the host and raises; tpu finds it on the device and
    raises CPU's RuntimeError at the next host read (no sync at the op)."""
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(torch.zeros(2), torch.tensor(std))
    x = torch.normal(torch.zeros(2, device=DEV), torch.tensor(std, device=DEV))
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        x.cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_standard_gamma_law(dtype):
    """Marsaglia-Tsang on the device: mean and variance alpha for every
    alpha, boosted below 1; CPU's clamp to the smallest normal number."""
    torch.manual_seed(0)
    for a in (0.1, 0.5, 1.0, 3.0, 50.0):
        s = torch._standard_gamma(torch.full((100_000,), a, dtype=dtype, device=DEV)).cpu()
        assert s.dtype == dtype and (s > 0).all()
        assert abs(s.mean().item() - a) < 0.02 * a + 0.01, (a, s.mean())
        assert abs(s.var().item() - a) < 0.05 * a + 0.01, (a, s.var())
    tiny = torch.finfo(dtype).tiny
    edge = torch._standard_gamma(torch.tensor([0.0, 1e-30, float("nan")], dtype=dtype, device=DEV)).cpu()
    assert edge[0] == tiny and edge[1] == tiny and math.isnan(edge[2])
    for device in ("cpu", DEV):
        with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Long'"):
            torch._standard_gamma(torch.tensor([1, 2], device=device))


def test_dirichlet_and_beta_laws():
    torch.manual_seed(0)
    alpha = torch.tensor([1.0, 2.0, 3.0])
    x = torch._sample_dirichlet(alpha.expand(100_000, 3).contiguous().to(DEV)).cpu()
    torch.testing.assert_close(x.sum(1), torch.ones(100_000))
    torch.testing.assert_close(x.mean(0), alpha / alpha.sum(), atol=0.005, rtol=0)
    # CPU's clamp: tiny alphas, whose gammas underflow, give equal shares
    assert torch.equal(torch._sample_dirichlet(torch.tensor([[1e-3, 1e-3]], device=DEV)).cpu(),
                       torch.tensor([[0.5, 0.5]]))
    b = D.Beta(torch.tensor([2.0], device=DEV), torch.tensor([5.0], device=DEV)).sample((100_000,)).cpu()
    assert abs(b.mean().item() - 2 / 7) < 0.003 and abs(b.var().item() - 10 / (49 * 8)) < 0.002
    t = D.StudentT(torch.tensor([5.0], device=DEV)).sample((100_000,)).cpu()
    assert abs(t.var().item() - 5 / 3) < 0.08


def test_incomplete_gamma_matches_cpu_and_mpmath():
    """igamma/igammac (Gamma's and Chi2's cdf, special.gammainc): float32 as
    CPU's, the edges as CPU's, and float64 to double precision (mpmath; CPU's
    own float64 values near a = x for large a are off by up to 1e-9)."""
    import mpmath

    torch.manual_seed(0)
    a = (torch.rand(500) * 30) ** 1.5
    x = (torch.rand(500) * 60) ** 1.3
    edges_a = torch.tensor([1.0, 2, 0, 0, -1, 3, float("inf"), 2, 1e-3, 0.5, float("nan"), 5])
    edges_x = torch.tensor([1.0, 0, 0, 1, 1, -1, 1, float("inf"), 1e-4, 1e-8, 1, float("nan")])
    a, x = torch.cat([a, edges_a]), torch.cat([x, edges_x])
    for fn in (torch.igamma, torch.igammac, torch.special.gammainc):
        torch.testing.assert_close(fn(a.to(DEV), x.to(DEV)).cpu(), fn(a, x), atol=1e-6, rtol=1e-5,
                                   equal_nan=True)
    pairs = [(89.11519184439653, 91.37363251492268), (114.25670975903931, 82.37641852938054),
             (0.5, 0.1), (3.0, 40.0), (1e-3, 2.0)]
    a64 = torch.tensor([p[0] for p in pairs], dtype=torch.float64)
    x64 = torch.tensor([p[1] for p in pairs], dtype=torch.float64)
    mpmath.mp.dps = 30
    ref = torch.tensor([float(mpmath.gammainc(p, 0, q, regularized=True)) for p, q in pairs],
                       dtype=torch.float64)
    torch.testing.assert_close(torch.igamma(a64.to(DEV), x64.to(DEV)).cpu(), ref, atol=0, rtol=1e-13)
    torch.testing.assert_close(torch.igammac(a64.to(DEV), x64.to(DEV)).cpu(), 1 - ref, atol=1e-15, rtol=1e-12)
    for device in ("cpu", DEV):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            torch.igamma(torch.tensor([1, 2], device=device), torch.tensor([1, 2], device=device))


def test_gamma_rsample_gradient():
    """_standard_gamma_grad, the reparameterized gradient of Gamma (Chi2,
    StudentT) samples: -(dP/dalpha)/(dP/dx), against mpmath (CPU's
    approximation is within 4e-4 of it) and the mean's known derivative."""
    import mpmath

    alpha = torch.tensor([0.05, 0.3, 1.0, 2.5, 7.0, 30.0, 200.0, 0.5, 3.0], dtype=torch.float64)
    x = torch.tensor([1e-3, 0.2, 1.0, 2.0, 9.0, 25.0, 210.0, 5.0, 0.01], dtype=torch.float64)
    mpmath.mp.dps = 30
    ref = []
    for a, v in zip(alpha.tolist(), x.tolist()):
        dp = mpmath.diff(lambda s: mpmath.gammainc(s, 0, v, regularized=True), a)
        density = mpmath.mpf(v) ** (a - 1) * mpmath.exp(-v) / mpmath.gamma(a)
        ref.append(float(-dp / density))
    ref = torch.tensor(ref, dtype=torch.float64)
    got = torch._standard_gamma_grad(alpha.to(DEV), x.to(DEV)).cpu()
    torch.testing.assert_close(got, ref, rtol=1e-10, atol=0)
    torch.testing.assert_close(torch._standard_gamma_grad(alpha.float().to(DEV), x.float().to(DEV)).cpu(),
                               torch._standard_gamma_grad(alpha.float(), x.float()), rtol=1e-3, atol=0)
    torch.manual_seed(0)
    conc = torch.tensor([2.0, 0.5], device=DEV, requires_grad=True)
    rate = torch.tensor([1.0, 3.0], device=DEV)
    D.Gamma(conc, rate).rsample((20_000,)).mean(0).sum().backward()
    # d E[x] / d concentration = 1 / rate
    torch.testing.assert_close(conc.grad.cpu(), torch.tensor([1.0, 1 / 3]), atol=0.02, rtol=0)


def test_dirichlet_and_beta_rsample_gradient():
    """_dirichlet_grad, as PyTorch defines it (Dirichlet's backward
    multiplies it by g - sum(x g)): for x ~ Beta(alpha, total - alpha), the
    reparameterized dx/dalpha with beta held, over 1 - x; against mpmath
    (CPU's approximation is within 1e-4 of it) and the means' derivatives."""
    import mpmath

    pts = [(0.3, 2.0, 5.0), (0.9, 0.5, 1.0), (0.05, 0.3, 4.0), (0.7, 30.0, 45.0),
           (0.999, 3.0, 3.2), (0.5, 100.0, 200.0), (1e-4, 0.1, 0.5), (0.6, 2.0, 3.0)]
    x, a, total = (torch.tensor(col, dtype=torch.float64) for col in zip(*pts))
    mpmath.mp.dps = 30
    ref = []
    for xv, av, tv in pts:
        bv = tv - av
        di = mpmath.diff(lambda s: mpmath.betainc(s, bv, 0, xv, regularized=True), av)
        density = mpmath.mpf(xv) ** (av - 1) * (1 - mpmath.mpf(xv)) ** (bv - 1) / mpmath.beta(av, bv)
        ref.append(float(-di / density / (1 - xv)))
    got = torch._dirichlet_grad(x.to(DEV), a.to(DEV), total.to(DEV)).cpu()
    torch.testing.assert_close(got, torch.tensor(ref, dtype=torch.float64), rtol=1e-10, atol=0)
    torch.testing.assert_close(got, torch._dirichlet_grad(x, a, total), rtol=2e-4, atol=0)
    torch.manual_seed(0)
    conc = torch.tensor([1.0, 2.0, 3.0], device=DEV, requires_grad=True)
    D.Dirichlet(conc).rsample((20_000,)).mean(0)[0].backward()
    # d E[x_0] / d alpha = (sum - alpha_0) / sum^2 for j = 0, -alpha_0 / sum^2 otherwise
    torch.testing.assert_close(conc.grad.cpu(), torch.tensor([5 / 36, -1 / 36, -1 / 36]), atol=2e-3, rtol=0)


def test_poisson_law_and_rate_check():
    """torch.poisson on the device: CPU's two algorithms (product of uniforms
    below rate 10, transformed rejection from 10), integer counts with mean
    and variance the rate; a negative rate is a device finding raised as
    CPU's RuntimeError."""
    torch.manual_seed(0)
    for rate in (0.0, 0.3, 4.5, 9.99, 10.0, 60.0, 1e5):
        x = torch.poisson(torch.full((100_000,), rate, device=DEV)).cpu().double()
        assert torch.equal(x, x.round()) and (x >= 0).all()
        tol = 0.03 * rate + 0.01
        assert abs(x.mean().item() - rate) < tol and abs(x.var().item() - rate) < 4 * tol, rate
    assert torch.poisson(torch.ones(3, dtype=torch.float64, device=DEV)).dtype == torch.float64
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        torch.poisson(torch.tensor([1.0, -1.0]))
    y = torch.poisson(torch.tensor([1.0, -1.0], device=DEV))
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        y.cpu()
    for device in ("cpu", DEV):
        with pytest.raises(NotImplementedError, match="\"poisson_cpu\" not implemented for 'Long'"):
            torch.poisson(torch.tensor([1, 2], device=device))


def test_binomial_law():
    """torch.binomial on the device: inversion below n q = 10, BTRS from
    10 (q = min(p, 1 - p)); CPU's edge values (n <= 0 or p <= 0: 0; p >= 1: n)."""
    torch.manual_seed(0)
    for n, p in ((10, 0.3), (100, 0.97), (1000, 0.5), (30, 0.01), (3.0, 0.999)):
        x = torch.binomial(torch.full((100_000,), float(n), device=DEV),
                           torch.full((100_000,), p, device=DEV)).cpu().double()
        assert torch.equal(x, x.round()) and (x >= 0).all() and (x <= n).all()
        mean, var = n * p, n * p * (1 - p)
        assert abs(x.mean().item() - mean) < 0.01 * mean + 0.01, (n, p)
        assert abs(x.var().item() - var) < 0.05 * var + 0.01, (n, p)
    edges = torch.binomial(torch.tensor([10.0, 0, 5, -1, 4], device=DEV),
                           torch.tensor([0.0, 0.5, 1.0, 0.5, 1.5], device=DEV)).cpu()
    assert edges.tolist() == [0.0, 0.0, 5.0, 0.0, 4.0]
    for device in ("cpu", DEV):
        with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count"):
            torch.binomial(torch.tensor([1, 2], device=device), torch.tensor([0.5, 0.5], device=device))
