"""F.scaled_dot_product_attention on tpu takes PyTorch's "overrideable"
backend (csrc/device/attention_choice.cc, csrc/ops/attention_ops.cc,
torch_tpu/_attention.py): values and gradients equal CPU's for every mask
form, and no host read happens inside (the math path read one per call)."""

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile


def _cases():
    gen = torch.Generator().manual_seed(0)
    bool_mask = torch.rand(2, 1, 5, 7, generator=gen) > 0.3
    bool_mask[0, 0, 2] = False  # a fully masked row: zero probabilities, as the math path gives
    return {
        "plain": {},
        "causal": dict(is_causal=True),
        "scale": dict(scale=0.3),
        "float_mask": dict(attn_mask=torch.randn(5, 7, generator=gen)),
        "bool_mask": dict(attn_mask=bool_mask),
        "mask_grad": dict(attn_mask=torch.randn(2, 4, 5, 7, generator=gen).requires_grad_()),
        "gqa": dict(enable_gqa=True, kv_heads=2),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_values_and_gradients_equal_cpu(name):
    kw = dict(_cases()[name])
    kv_heads = kw.pop("kv_heads", 4)
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(2, 4, 5, 8, generator=gen, requires_grad=True)
    k = torch.randn(2, kv_heads, 7, 8, generator=gen, requires_grad=True)
    v = torch.randn(2, kv_heads, 7, 8, generator=gen, requires_grad=True)
    want = F.scaled_dot_product_attention(q, k, v, **kw)
    grad = torch.randn(want.shape, generator=gen)
    want.backward(grad)
    tkw = dict(kw)
    mask = kw.get("attn_mask")
    if mask is not None:
        tkw["attn_mask"] = mask.detach().to("tpu").requires_grad_(mask.requires_grad)
    tq, tk, tv = (t.detach().to("tpu").requires_grad_() for t in (q, k, v))
    got = F.scaled_dot_product_attention(tq, tk, tv, **tkw)
    got.backward(grad.to("tpu"))
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    for t, c in ((tq, q), (tk, k), (tv, v)) + (((tkw["attn_mask"], mask),) if mask is not None and mask.requires_grad else ()):
        torch.testing.assert_close(t.grad.cpu(), c.grad, atol=1e-5, rtol=1e-5)


def test_no_math_path_and_no_host_read():
    q = torch.randn(2, 4, 1, 8, device="tpu")
    k = torch.randn(2, 4, 9, 8, device="tpu")
    mask = torch.zeros(2, 1, 1, 9, device="tpu")
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU]) as prof:
        F.scaled_dot_product_attention(q, k, k, attn_mask=mask)
    names = {e.name for e in prof.events()}
    assert "aten::_scaled_dot_product_fused_attention_overrideable" in names
    assert "aten::_scaled_dot_product_attention_math" not in names
    # a host read (the math path's `.item()` of its mask check) would show
    reads = [e for e in prof.events() if e.name == "aten::_local_scalar_dense"]
    assert reads == []


def test_dropout_in_training_takes_the_math_path():
    torch.manual_seed(0)
    q = torch.randn(2, 2, 4, 8, device="tpu", requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    out.sum().backward()
    assert out.shape == q.shape and torch.isfinite(q.grad.cpu()).all()


def test_mismatched_heads_raise_pytorchs_error():
    q = torch.randn(1, 4, 3, 8, device="tpu")
    k = torch.randn(1, 3, 3, 8, device="tpu")
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, k, k)
