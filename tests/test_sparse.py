"""Sparse COO, CSR and CSC tensors on tpu, against the same calls on CPU.

A sparse tpu tensor is PyTorch's SparseTensorImpl over tpu indices and
values (a CSR/CSC tensor likewise over tpu compressed indices, plain indices
and values, csrc/ops/sparse_compressed.cc). Coalescing, conversion to dense, sums and products with another
tensor are tpu kernels (csrc/ops/sparse_coo.cc); the operators whose CPU
kernels only rearrange indices and values run those kernels
(csrc/ops/sparse_coo_generic.cc). The user flows: nn.Embedding(sparse=True)
trained by SGD, Adagrad and SparseAdam, gradient accumulation, and a graph
layer's sparse adjacency @ dense features, forward and backward.
"""

import copy

import pytest
import torch
import torch.nn as nn

import torch_tpu  # noqa: F401

DEV = "tpu"

pytestmark = [
    pytest.mark.usefixtures("cpu_fallback_off"),
    pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled"),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state"),
]

INDICES = torch.tensor([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])  # (0, 2) twice: uncoalesced
VALUES = torch.tensor([3.0, -4.0, 5.0, 1.0, 0.5])


def _sparse(device, values=VALUES, size=(3, 3)):
    return torch.sparse_coo_tensor(INDICES.to(device), values.to(device), size)


def _dense(device, shape=(3, 3), seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(device)


def _check(actual, expected, atol=1e-6, rtol=1e-6):
    assert actual.device.type == DEV
    assert actual.layout == expected.layout and actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.is_sparse:
        assert actual.sparse_dim() == expected.sparse_dim()
        assert actual.dense_dim() == expected.dense_dim()
        if expected.is_coalesced():
            assert actual.is_coalesced()
            assert torch.equal(actual._indices().cpu(), expected._indices())
            torch.testing.assert_close(actual._values().cpu(), expected._values(), atol=atol,
                                       rtol=rtol)
        actual, expected = actual.to_dense(), expected.to_dense()
    torch.testing.assert_close(actual.cpu(), expected, atol=atol, rtol=rtol)


OPS = {
    "coalesce": lambda d: _sparse(d).coalesce(),
    "to_dense": lambda d: _sparse(d).to_dense(),
    "dense_plus_sparse": lambda d: _dense(d) + _sparse(d) * 2,
    "dense_add_alpha": lambda d: torch.add(_dense(d), _sparse(d), alpha=-0.5),
    "sparse_plus_sparse": lambda d: _sparse(d) + _sparse(d).coalesce(),
    "sparse_minus_sparse": lambda d: _sparse(d) - _sparse(d, VALUES * 2),
    "times_scalar": lambda d: _sparse(d) * 2.5,
    "times_dense": lambda d: _sparse(d) * _dense(d),
    "dense_times": lambda d: _dense(d) * _sparse(d),
    "times_broadcast_row": lambda d: _sparse(d) * torch.arange(3.0, device=d),
    "times_sparse": lambda d: _sparse(d) * _sparse(d, VALUES.flip(0)),
    "divide": lambda d: _sparse(d) / 4,
    "negate_abs_sqrt": lambda d: (-_sparse(d)).abs().sqrt(),
    "sin_tanh": lambda d: _sparse(d).sin().tanh(),
    "pow": lambda d: _sparse(d).pow(2),
    "sparse_at_dense": lambda d: _sparse(d) @ _dense(d, (3, 4)),
    "dense_at_sparse": lambda d: _dense(d, (4, 3)) @ _sparse(d),
    "sparse_mm": lambda d: torch.sparse.mm(_sparse(d), _dense(d, (3, 2))),
    "addmm": lambda d: torch.addmm(_dense(d, (3, 2), 1), _sparse(d), _dense(d, (3, 2)),
                                   beta=0.5, alpha=2.0),
    "addmm_beta0_ignores_nan": lambda d: torch.addmm(torch.full((3, 2), float("nan"), device=d),
                                                     _sparse(d), _dense(d, (3, 2)), beta=0),
    "matrix_vector": lambda d: torch.mv(_sparse(d), torch.arange(3.0, device=d)),
    "sum": lambda d: torch.sparse.sum(_sparse(d)),
    "sum_dim": lambda d: torch.sparse.sum(_sparse(d), 0),
    "tensor_sum": lambda d: _sparse(d).sum(),
    "sparse_mask": lambda d: _dense(d).sparse_mask(_sparse(d).coalesce()),
    "sparse_mask_empty": lambda d: _dense(d).sparse_mask(torch.sparse_coo_tensor(
        torch.zeros(2, 0, dtype=torch.long, device=d), torch.zeros(0, device=d), (3, 3))),
    "strided_dense_plus_sparse": lambda d: _dense(d).t().add_(_sparse(d), alpha=2.0),
    "to_sparse": lambda d: _dense(d).relu().to_sparse(),
    "to_sparse_one_dim": lambda d: _dense(d).relu().to_sparse(1),
    "transpose": lambda d: _sparse(d).t().coalesce(),
    "permute": lambda d: _sparse(d).permute(1, 0),
    "unsqueeze": lambda d: _sparse(d).unsqueeze(0),
    "cat": lambda d: torch.cat([_sparse(d), _sparse(d, VALUES * 3)], 1),
    "narrow_copy": lambda d: _sparse(d).narrow_copy(1, 1, 2),
    "clone_zero": lambda d: _sparse(d).clone().zero_(),
    "hybrid_to_dense": lambda d: torch.sparse_coo_tensor(
        INDICES[:1].to(d), torch.arange(10.0).view(5, 2).to(d), (3, 2)).coalesce(),
    "int_values": lambda d: _sparse(d, torch.tensor([1, 2, 3, 4, 5])).coalesce() * 3,
    "bool_values_to_dense": lambda d: _sparse(d, torch.tensor([True, False, True, True, False]))
    .to_dense(),
    "index_select_rows_repeated": lambda d: _sparse(d).index_select(0, torch.tensor([2, 0, 2, -3], device=d)),
    "index_select_columns": lambda d: _sparse(d).coalesce().index_select(1, torch.tensor([1], device=d)),
    "index_select_none": lambda d: _sparse(d).index_select(1, torch.tensor([], dtype=torch.long, device=d)),
    "index_select_dense_dim": lambda d: torch.sparse_coo_tensor(
        INDICES[:1].to(d), torch.arange(10.0).view(5, 2).to(d), (3, 2)).index_select(1, torch.tensor([1, 1, 0], device=d)),
    "sparse_mask_of_sparse": lambda d: _sparse(d, VALUES.flip(0)).sparse_mask(
        torch.sparse_coo_tensor(torch.tensor([[2, 0, 1], [1, 2, 1]]).to(d), torch.ones(3, device=d), (3, 3))),
    "softmax_sparse_dim": lambda d: torch.sparse.softmax(_sparse(d), 1),
    "log_softmax_sparse_dim": lambda d: torch.sparse.log_softmax(_sparse(d), 0),
    "softmax_hybrid_dense_dim": lambda d: torch.sparse.softmax(torch.sparse_coo_tensor(
        INDICES[:1].to(d), torch.arange(10.0).view(5, 2).to(d), (3, 2)), 1),
    "softmax_hybrid_sparse_dim": lambda d: torch.sparse.log_softmax(torch.sparse_coo_tensor(
        INDICES[:1].to(d), torch.arange(10.0).view(5, 2).to(d), (3, 2)), 0),
    "empty": lambda d: torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long),
                                               torch.zeros(0), (3, 3)).to(d).coalesce() * 2,
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_sparse_op_matches_cpu(name):
    _check(OPS[name](DEV), OPS[name]("cpu"), atol=1e-5, rtol=1e-5)


def test_sparse_tensor_moves_and_prints():
    s = _sparse("cpu")
    on_tpu = s.to(DEV)
    assert on_tpu.is_sparse and on_tpu.device.type == DEV and on_tpu._nnz() == 5
    assert "tpu" in repr(on_tpu)
    back = on_tpu.cpu()
    assert torch.equal(back._indices(), s._indices()) and torch.equal(back._values(), s._values())


# --- compressed (CSR/CSC) ----------------------------------------------------

MATRIX = torch.tensor([[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]])


def _check_compressed(actual, expected):
    assert actual.device.type == DEV and actual.layout == expected.layout
    if expected.layout == torch.sparse_csr:
        members = ("crow_indices", "col_indices", "values")
    else:
        members = ("ccol_indices", "row_indices", "values")
    for member in members:
        assert torch.equal(getattr(actual, member)().cpu(), getattr(expected, member)()), member
    torch.testing.assert_close(actual.to_dense().cpu(), expected.to_dense())


COMPRESSED = {
    "dense_to_csr": lambda d: MATRIX.to(d).to_sparse_csr(),
    "coo_to_csr": lambda d: MATRIX.to(d).to_sparse().to_sparse_csr(),
    "constructor": lambda d: torch.sparse_csr_tensor(
        torch.tensor([0, 2, 2, 4]), torch.tensor([1, 3, 0, 2]), torch.tensor([1.0, 2.0, 3.0, 4.0]),
        (3, 4), device=d),
    "host_to_device": lambda d: MATRIX.to_sparse_csr().to(d),
    "clone_times_scalar": lambda d: MATRIX.to(d).to_sparse_csr().clone() * 3,
    "unary": lambda d: (-MATRIX.to(d).to_sparse_csr()).abs().sqrt().sin(),
    "dense_to_csc": lambda d: MATRIX.to(d).to_sparse_csc(),
    "coo_to_csc": lambda d: MATRIX.to(d).to_sparse().to_sparse_csc(),
    "csr_to_csc": lambda d: MATRIX.to(d).to_sparse_csr().to_sparse_csc(),
    "csc_to_csr": lambda d: MATRIX.to(d).to_sparse_csc().to_sparse_csr(),
}


@pytest.mark.parametrize("name", sorted(COMPRESSED))
def test_compressed_layout_matches_cpu(name):
    _check_compressed(COMPRESSED[name](DEV), COMPRESSED[name]("cpu"))


def test_csr_products_and_conversions_match_cpu():
    def run(device):
        csr = MATRIX.to(device).to_sparse_csr()
        dense = torch.arange(8.0, device=device).view(4, 2)
        return [csr @ dense, torch.sparse.mm(csr, dense),
                torch.addmm(torch.ones(3, 2, device=device), csr, dense, beta=0.5, alpha=2.0),
                torch.arange(6.0, device=device).view(2, 3) @ csr,
                torch.mv(csr, torch.arange(4.0, device=device)),
                csr.t() @ torch.arange(6.0, device=device).view(3, 2),
                csr.to_sparse(), csr.to_dense(), torch.ones(3, 4, device=device) + csr]

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e)


def test_csr_sums_match_cpu():
    def run(device):
        a = MATRIX.to(device).to_sparse_csr()
        b = MATRIX.t().contiguous().t().roll(1, 0).to(device).to_sparse_csr()
        total = torch.add(a, b, alpha=-2.0)
        a.add_(a)
        return [total, a]

    for a, e in zip(run(DEV), run("cpu")):
        _check_compressed(a, e)


def test_csr_gradients_match_cpu():
    def run(device):
        values = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True)
        csr = torch.sparse_csr_tensor(torch.tensor([0, 2, 2, 4], device=device),
                                      torch.tensor([1, 3, 0, 2], device=device), values, (3, 4))
        x = torch.arange(8.0, device=device).view(4, 2).requires_grad_()
        ((csr @ x).pow(2).sum() + csr.to_dense().pow(3).sum()).backward()
        return [x.grad, values.grad]

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e)


def test_csr_index_conversions_match_cpu():
    rows = torch.tensor([0, 0, 2, 2, 3])
    crow, col = torch.tensor([0, 2, 2, 4, 5, 5]), torch.tensor([1, 3, 0, 2, 1])
    batched_crow = torch.tensor([[[0, 1, 2], [0, 2, 2]], [[0, 0, 2], [0, 1, 2]]])
    batched_col = torch.tensor([[[0, 1], [1, 0]], [[1, 1], [0, 0]]])
    for out_int32 in (False, True):
        calls = [lambda d: torch._convert_indices_from_coo_to_csr(rows.to(d), 5, out_int32=out_int32),
                 lambda d: torch._convert_indices_from_csr_to_coo(batched_crow.to(d), batched_col.to(d),
                                                                  out_int32=out_int32)]
        for transpose in (False, True):
            calls.append(lambda d, t=transpose: torch._convert_indices_from_csr_to_coo(
                crow.to(d), col.to(d), out_int32=out_int32, transpose=t))
        for call in calls:
            actual, expected = call(DEV), call("cpu")
            assert actual.dtype == expected.dtype and torch.equal(actual.cpu(), expected)


INDICES_3D = torch.tensor([[0, 1, 1, 2, 0], [2, 0, 2, 1, 2], [1, 1, 0, 3, 1]])  # one repeat


@pytest.mark.parametrize("dims", [[0], [1], [2], [0, 1], [0, 2], [0, 1, 2]])
def test_sparse_sum_over_dims_gradient_matches_cpu(dims):
    def run(device):
        values = torch.linspace(-1.0, 2.0, 5, device=device).requires_grad_()
        s = torch.sparse_coo_tensor(INDICES_3D.to(device), values, (3, 3, 4))
        total = torch.sparse.sum(s, dims)
        dense = total.to_dense() if total.is_sparse else total
        (dense * torch.arange(float(dense.numel()), device=device).view(dense.shape)).sum().backward()
        return total.detach(), values.grad

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e)


@pytest.mark.parametrize("dims", [[0], [2], [1, 2], [0, 1]])
def test_hybrid_sparse_sum_gradient_matches_cpu(dims):
    def run(device):
        values = torch.arange(15.0, device=device).view(5, 3).requires_grad_()
        s = torch.sparse_coo_tensor(INDICES_3D[:2].to(device), values, (3, 3, 3))
        total = torch.sparse.sum(s, dims)
        dense = total.to_dense() if total.is_sparse else total
        dense.pow(2).sum().backward()
        return total.detach(), values.grad

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e)


def test_sparse_times_sparse_matrix_and_its_gradient():
    other = torch.sparse_coo_tensor(torch.tensor([[1, 0, 2, 1], [0, 3, 3, 0]]),
                                    torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 4))

    def run(device):
        values = VALUES.to(device).requires_grad_()
        a = torch.sparse_coo_tensor(INDICES.to(device), values, (3, 3))
        b = other.to(device)
        products = [torch.sparse.mm(a, b), a @ b, torch.sparse.mm(a, a)]
        products[2].to_dense().pow(2).sum().backward()
        return [p.detach() for p in products] + [values.grad]

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e, atol=1e-5, rtol=1e-5)


def test_batched_sparse_times_dense_and_its_gradient():
    indices = torch.tensor([[0, 0, 1, 1, 1], [0, 1, 1, 0, 1], [1, 0, 1, 2, 1]])

    def run(device):
        a = torch.sparse_coo_tensor(indices.to(device), torch.arange(1.0, 6.0, device=device),
                                    (2, 2, 3))
        x = torch.arange(24.0, device=device).view(2, 3, 4).requires_grad_()
        out = torch.bmm(a, x)
        out.pow(2).sum().backward()
        return out.detach(), x.grad

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e)


def test_sparse_mask_projection_matches_cpu():
    mask = torch.sparse_coo_tensor(torch.tensor([[0, 2, 1], [1, 1, 0]]), torch.ones(3), (3, 3))
    for accumulate in (False, True):
        for coalesce in (False, True):
            def run(device):
                s = _sparse(device)
                s = s.coalesce() if coalesce else s
                return torch.ops.aten._sparse_mask_projection(s, mask.to(device), accumulate)

            actual, expected = run(DEV), run("cpu")
            assert torch.equal(actual._indices().cpu(), expected._indices())
            assert torch.equal(actual._values().cpu(), expected._values())


def test_sparse_errors_match_cpu():
    for d in ("cpu", DEV):
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            _sparse(d) + _dense(d)
        with pytest.raises(RuntimeError, match="dtype argument is not supported by sparse_to_dense"):
            _sparse(d)._to_dense(dtype=torch.float64)
        with pytest.raises(IndexError, match="index contains 3 that is out of range"):
            _sparse(d).index_select(0, torch.tensor([0, 3], device=d))
        with pytest.raises(RuntimeError, match=r"addmm: Argument #3 \(dense\): Expected dim 0 size 3, got 4"):
            _sparse(d) @ _dense(d, (4, 2))


def _embedding_training(device, optimizer, steps=3, **options):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4, sparse=True), nn.Flatten(), nn.Linear(12, 2))
    model = copy.deepcopy(model).to(device)
    sparse_params = list(model[0].parameters())
    dense_params = list(model[2].parameters())
    opt = optimizer(sparse_params, **options)
    dense_opt = torch.optim.SGD(dense_params, lr=0.1)
    batches = torch.tensor([[[1, 2, 1], [7, 7, 0]], [[3, 1, 9], [2, 2, 2]], [[5, 6, 1], [0, 0, 9]]])
    for step in range(steps):
        opt.zero_grad()
        dense_opt.zero_grad()
        loss = model(batches[step].to(device)).square().mean()
        loss.backward()
        grad = model[0].weight.grad
        assert grad.is_sparse and grad.device.type == torch.device(device).type
        opt.step()
        dense_opt.step()
    return [p.detach() for p in model.parameters()]


@pytest.mark.parametrize("optimizer, options", [
    (torch.optim.SGD, {"lr": 0.5}),
    (torch.optim.SGD, {"lr": 0.5, "momentum": 0.9}),
    (torch.optim.SGD, {"lr": 0.5, "momentum": 0.9, "nesterov": True, "foreach": False}),
    (torch.optim.Adagrad, {"lr": 0.3}),
    (torch.optim.SparseAdam, {"lr": 0.1}),
    (torch.optim.SparseAdam, {"lr": 0.1, "maximize": True}),
], ids=["sgd", "sgd_momentum", "sgd_nesterov", "adagrad", "sparse_adam", "sparse_adam_maximize"])
def test_sparse_embedding_training_matches_cpu(optimizer, options):
    expected = _embedding_training("cpu", optimizer, **options)
    actual = _embedding_training(DEV, optimizer, **options)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a.cpu(), e, atol=1e-5, rtol=1e-5)


def test_sparse_gradients_accumulate_over_two_backwards():
    def run(device):
        emb = nn.Embedding(6, 3, sparse=True, padding_idx=0).to(device)
        with torch.no_grad():
            emb.weight.copy_(torch.arange(18.0).view(6, 3))
        emb(torch.tensor([0, 1, 4, 1], device=device)).sum().backward()
        emb(torch.tensor([[4, 5]], device=device)).pow(2).sum().backward()
        return emb.weight.grad

    _check(run(DEV), run("cpu"))


def test_graph_layer_sparse_adjacency_forward_backward():
    # A GCN-style layer: normalized sparse adjacency @ (features @ weight).
    edges = torch.tensor([[0, 1, 1, 2, 3, 3, 0], [1, 0, 2, 1, 0, 3, 3]])

    def run(device):
        torch.manual_seed(0)
        weight = torch.randn(5, 4).to(device).requires_grad_()
        features = torch.randn(4, 5).to(device).requires_grad_()
        values = torch.full((edges.size(1),), 0.5, device=device)
        adjacency = torch.sparse_coo_tensor(edges.to(device), values, (4, 4)).coalesce()
        hidden = torch.sparse.mm(adjacency, features @ weight).relu()
        out = torch.sparse.mm(adjacency, hidden).sum(1)
        out.square().sum().backward()
        return out.detach(), weight.grad, features.grad

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_sparse_embedding_bag_gradient_matches_cpu(mode):
    def run(device):
        torch.manual_seed(0)
        bag = nn.EmbeddingBag(10, 3, mode=mode, sparse=True, padding_idx=2).to(device)
        indices = torch.tensor([1, 2, 4, 5, 4, 3, 1], device=device)
        offsets = torch.tensor([0, 3, 3], device=device)  # an empty bag in the middle
        weights = torch.linspace(0.5, 2.0, 7, device=device) if mode == "sum" else None
        bag(indices, offsets, per_sample_weights=weights).square().sum().backward()
        return bag.weight.grad

    _check(run(DEV), run("cpu"))


def test_graph_attention_learns_edge_weights():
    # GAT-style: learnable scores per edge, a softmax over each node's
    # neighbours (torch.sparse.softmax), messages by sparse @ dense; the
    # gradient reaches the scores through the sparse constructor.
    edges = torch.tensor([[0, 0, 1, 2, 2, 2, 3], [1, 3, 0, 0, 1, 3, 2]])

    def run(device):
        scores = torch.linspace(-1.0, 2.0, edges.size(1), device=device).requires_grad_()
        features = torch.arange(8.0, device=device).view(4, 2).requires_grad_()
        attention = torch.sparse.softmax(torch.sparse_coo_tensor(edges.to(device), scores, (4, 4)), 1)
        out = torch.sparse.mm(attention, features)
        (out.square().sum() + attention.to_dense().pow(3).sum()).backward()
        return out.detach(), scores.grad, features.grad

    for a, e in zip(run(DEV), run("cpu")):
        _check(a, e, atol=1e-5, rtol=1e-5)
