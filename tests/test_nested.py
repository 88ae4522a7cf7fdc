"""Nested tensors on tpu, against the same calls on CPU.

The jagged layout (`layout=torch.jagged`, the one PyTorch develops) keeps
its sequences packed in one dense `values` tensor, so most ops are dense
tpu ops; padding, reductions over the ragged dimension and their gradients
go through `_jagged_to_padded_dense_forward` / `_padded_dense_to_jagged_
forward` (tpu kernels with no host read), and scaled_dot_product_attention
converts to the strided layout, whose kernels are PyTorch's own nested
kernels run over tpu buffers (csrc/ops/nested_tensor.cc).
"""

import pytest
import torch
import torch.nn.functional as F

import torch_tpu  # noqa: F401

DEV = "tpu"

pytestmark = [
    pytest.mark.usefixtures("cpu_fallback_off"),
    pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors is in prototype stage"),
]


def _parts(lengths, width=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, width, generator=g) for n in lengths]


def _close(actual, expected, atol=1e-5, rtol=1e-5):
    if isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _close(a, e, atol, rtol)
        return
    assert actual.device.type == DEV
    torch.testing.assert_close(actual.cpu(), expected, atol=atol, rtol=rtol)


# --- the two jagged conversions -------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("max_length", [0, 1, 3, 5, 8])
def test_jagged_to_padded_dense_matches_cpu(dtype, max_length):
    values = (torch.randn(10, 3, generator=torch.Generator().manual_seed(1)) * 10).to(dtype)
    offsets = torch.tensor([0, 2, 2, 7, 10])  # an empty sequence; one of 5 cut at max_length < 5
    op = torch.ops.aten._jagged_to_padded_dense_forward
    expected = op(values, [offsets], [max_length], -1.5)
    actual = op(values.to(DEV), [offsets.to(DEV)], [max_length], -1.5)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert torch.equal(actual.cpu(), expected)


def test_jagged_to_padded_dense_of_1d_values_and_int32_offsets():
    values = torch.arange(6.0)
    offsets = torch.tensor([0, 1, 4, 6], dtype=torch.int32)
    op = torch.ops.aten._jagged_to_padded_dense_forward
    expected = op(values, [offsets], [4], 0.0)
    assert torch.equal(op(values.to(DEV), [offsets.to(DEV)], [4], 0.0).cpu(), expected)


@pytest.mark.parametrize("total", [None, 10])
def test_padded_dense_to_jagged_matches_cpu(total):
    dense = torch.randn(4, 6, 3)
    offsets = torch.tensor([0, 2, 2, 7, 10])
    op = torch.ops.aten._padded_dense_to_jagged_forward
    expected = op(dense, [offsets], total)
    actual = op(dense.to(DEV), [offsets.to(DEV)], total)
    assert torch.equal(actual.cpu(), expected)


def test_padded_dense_to_jagged_zeroes_rows_past_the_padded_length():
    # CPU refuses a sequence longer than the padding (after reading every
    # offset on the host); tpu reads none and, as CUDA, gives those rows 0.
    dense = torch.arange(12.0).view(2, 2, 3)
    offsets = torch.tensor([0, 3, 4])
    actual = torch.ops.aten._padded_dense_to_jagged_forward(dense.to(DEV), [offsets.to(DEV)], 4)
    expected = torch.stack([dense[0, 0], dense[0, 1], torch.zeros(3), dense[1, 0]])
    assert torch.equal(actual.cpu(), expected)


def test_jagged_conversions_check_their_arguments():
    values = torch.randn(4, 2, device=DEV)
    offsets = torch.tensor([0, 1, 4], device=DEV)
    with pytest.raises(RuntimeError, match="single jagged dim"):
        torch.ops.aten._jagged_to_padded_dense_forward(values, [offsets, offsets], [3], 0.0)
    with pytest.raises(RuntimeError, match="expected single max_length"):
        torch.ops.aten._jagged_to_padded_dense_forward(values, [offsets], [3, 3], 0.0)
    with pytest.raises(RuntimeError, match="expected 3 offsets for a batch of 2"):
        torch.ops.aten._padded_dense_to_jagged_forward(
            torch.randn(2, 3, device=DEV), [torch.tensor([0, 4], device=DEV)], 4)


# --- jagged nested tensors: a user's flow ----------------------------------


def _jagged_flow(device, lengths=(2, 5, 3)):
    parts = _parts(lengths)
    nt = torch.nested.nested_tensor([p.to(device) for p in parts], layout=torch.jagged,
                                    requires_grad=True)
    linear = torch.nn.Linear(8, 8).to(device)
    with torch.no_grad():
        linear.weight.copy_(torch.arange(64.0).view(8, 8).div(64).sub(0.5))
        linear.bias.fill_(0.1)
    h = F.layer_norm(linear((nt.sin() * 2 + 1).relu()), (8,))
    h = F.gelu(h).softmax(-1)
    per_sequence_sum = h.sum(dim=1)
    per_sequence_mean = h.mean(dim=1)
    q = h.unflatten(-1, (2, 4)).transpose(1, 2)  # [B, heads, j, head_dim]
    attended = F.scaled_dot_product_attention(q, q, q).transpose(1, 2).flatten(-2)
    padded = attended.to_padded_tensor(0.0)
    # (a loss through the per-sequence sums fails in backward on CPU too:
    # "SymIntArrayRef expected to contain only concrete integers")
    padded.square().sum().backward()
    return {
        "padded": padded.detach(),
        "sum": per_sequence_sum.detach(),
        "mean": per_sequence_mean.detach(),
        "unbind": [t.detach() for t in attended.unbind()],
        "grad": nt.grad.values(),
        "weight_grad": linear.weight.grad,
        "offsets": attended.offsets(),
    }


def test_jagged_flow_forward_backward_attention_matches_cpu():
    expected = _jagged_flow("cpu")
    actual = _jagged_flow(DEV)
    for key, value in expected.items():
        _close(actual[key], value, atol=2e-5, rtol=1e-4)


def test_jagged_from_padded_narrow_and_masked_views():
    padded = torch.randn(3, 6, 4)
    lengths = torch.tensor([3, 6, 1])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])

    def run(device):
        nt = torch.nested.nested_tensor_from_jagged(
            torch.cat([padded[i, :n] for i, n in enumerate(lengths.tolist())]).to(device),
            offsets.to(device))
        back = nt.to_padded_tensor(-2.0, output_size=(3, 7, 4))
        narrowed = torch.nested.narrow(padded.to(device), 1, torch.tensor([0, 1, 2], device=device),
                                       lengths.clamp(max=4).to(device), layout=torch.jagged)
        maxed = nt.amax(dim=1)
        return back, [t for t in narrowed.unbind()], maxed, (nt * nt).sum(dim=-1).to_padded_tensor(0)

    for a, e in zip(run(DEV), run("cpu")):
        _close(a, e)


def test_jagged_tensor_moves_between_devices():
    nt = torch.nested.nested_tensor(_parts((1, 4)), layout=torch.jagged)
    on_tpu = nt.to(DEV)
    assert on_tpu.is_nested and on_tpu.device.type == DEV
    back = on_tpu.cpu()
    for a, e in zip(back.unbind(), nt.unbind()):
        assert torch.equal(a, e)


# --- strided nested tensors --------------------------------------------------


def _strided(device, lengths=(2, 5, 3), requires_grad=False):
    return torch.nested.nested_tensor([p.to(device) for p in _parts(lengths)],
                                      requires_grad=requires_grad)


STRIDED_OPS = {
    "add": lambda a: a + a,
    "mul_scalar": lambda a: a * 3.0,
    "sub": lambda a: a - a * 0.5,
    "div": lambda a: a / 2.0,
    "relu_gelu_silu_tanh": lambda a: F.silu(F.gelu(a.relu())).tanh(),
    "abs_neg_sqrt": lambda a: (-a).abs().sqrt(),
    "softmax": lambda a: a.softmax(-1),
    "transpose_contiguous": lambda a: a.transpose(1, 2).contiguous(),
    "matmul": lambda a: torch.matmul(a, a.transpose(1, 2)),
    "bmm": lambda a: torch.bmm(a, a.transpose(1, 2)),
    "linear": lambda a: F.linear(a, torch.arange(24.0, device=a.device).view(3, 8), None),
    "masked_fill": lambda a: a.masked_fill(a > 0, 0.5),
    "compare_logical": lambda a: (a >= 0.5).logical_not(),
    "isnan_isinf": lambda a: (a / 0.0).isinf().logical_not(),
    "split": lambda a: a.split([3, 5], -1)[1],
    "dropout_off": lambda a: F.dropout(a, 0.0),
    "ones_like": lambda a: torch.ones_like(a) + a,
    "unsqueeze_squeeze": lambda a: a.unsqueeze(-1).squeeze(-1),
    "chunk": lambda a: a.chunk(2, dim=-1)[1],
    "narrow": lambda a: a.narrow(0, 1, 2),
    "cat": lambda a: torch.cat([a, a * 2], dim=0),
    "clone": lambda a: a.clone(),
}


@pytest.mark.parametrize("name", sorted(STRIDED_OPS))
def test_strided_nested_op_matches_cpu(name):
    fn = STRIDED_OPS[name]
    expected = fn(_strided("cpu"))
    actual = fn(_strided(DEV))
    assert actual.is_nested and actual.device.type == DEV
    _close(list(actual.unbind()), list(expected.unbind()), atol=1e-4, rtol=1e-5)
    if actual.is_contiguous() and actual.dim() == 3:
        _close(actual.to_padded_tensor(-1.0), expected.to_padded_tensor(-1.0), atol=1e-4, rtol=1e-5)


def test_strided_nested_select_and_embedding_match_cpu():
    assert torch.equal(_strided(DEV).select(0, 1).cpu(), _strided("cpu").select(0, 1))
    table = torch.randn(5, 4)
    ids = [torch.tensor([1, 2, 4]), torch.tensor([0])]

    def run(device):
        return F.embedding(torch.nested.nested_tensor([i.to(device) for i in ids]), table.to(device))

    _close(list(run(DEV).unbind()), list(run("cpu").unbind()))


def test_strided_nested_gradients_match_cpu():
    def run(device):
        nt = _strided(device, requires_grad=True)
        w = torch.arange(64.0, device=device).view(8, 8).div(64).requires_grad_()
        out = torch.matmul(F.linear(nt, w).softmax(-1), nt.transpose(1, 2))
        out.to_padded_tensor(0.0).sum().backward()
        return [g for g in nt.grad.unbind()] + [w.grad]

    _close(run(DEV), run("cpu"), atol=1e-4, rtol=1e-5)


def test_strided_nested_tensor_with_grad_is_created_not_aborted():
    # Autograd asks for the nested sizes when it records the constructor;
    # without a tpu kernel for `_nested_tensor_size` that ended the process.
    x = torch.randn(7, 8, device=DEV, requires_grad=True)
    nt = torch.nested.as_nested_tensor(list(x.sin().split([2, 5])))
    assert nt.requires_grad and nt.grad_fn is not None
    nt.to_padded_tensor(0.0).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), x.detach().cpu().cos())


def test_strided_nested_op_without_a_kernel_names_it():
    nt = _strided(DEV)
    with pytest.raises(NotImplementedError, match="aten::sum.dim_IntList.*NestedTensortpu"):
        nt.sum(dim=-1)
    with pytest.raises(NotImplementedError, match="NestedTensortpu"):
        F.layer_norm(nt, (8,))


def test_strided_nested_moves_between_devices_and_prints():
    nt = _strided("cpu")
    on_tpu = nt.to(DEV)
    assert "tpu" in repr(on_tpu)
    for a, e in zip(on_tpu.cpu().unbind(), nt.unbind()):
        assert torch.equal(a, e)


def test_jagged_tensor_through_torch_compile_matches_cpu():
    # The ragged size reaches the compiled graph as a nested int, which shape
    # buckets cannot pad to: an inference graph runs at exact sizes.
    torch._dynamo.reset()
    linear = torch.nn.Linear(8, 8)

    def fn(nt, layer):
        return F.gelu(layer(nt.sin() + 1)).softmax(-1)

    def pointwise(nt):
        return (nt.cos() * 2 + 1).relu()

    compiled = torch.compile(fn, backend="tpu")
    compiled_pointwise = torch.compile(pointwise, backend="tpu")
    layer_tpu = torch.nn.Linear(8, 8).to(DEV)
    layer_tpu.load_state_dict(linear.state_dict())
    for requires_grad in (False, True):
        for lengths in ((2, 5, 3), (4, 1), (3, 3, 6)):
            parts = _parts(lengths)
            with torch.no_grad():
                expected = fn(torch.nested.nested_tensor(parts, layout=torch.jagged), linear)
            nt = torch.nested.nested_tensor([p.to(DEV) for p in parts], layout=torch.jagged,
                                            requires_grad=requires_grad)
            actual = compiled(nt, layer_tpu)
            assert actual.is_nested and actual.device.type == DEV
            _close([t.detach() for t in compiled_pointwise(nt).unbind()],
                   list(pointwise(torch.nested.nested_tensor(parts, layout=torch.jagged)).unbind()))
            _close([t.detach() for t in actual.unbind()], list(expected.unbind()),
                   atol=1e-5, rtol=1e-5)
            if requires_grad:
                actual.values().sum().backward()
                assert nt.grad is not None and nt.grad.values().device.type == DEV
