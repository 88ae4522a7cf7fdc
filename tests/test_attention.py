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


def _decode_step_inputs(length, requires_grad=False):
    gen = torch.Generator().manual_seed(length)
    q = torch.randn(1, 6, 1, 16, generator=gen)
    k = torch.randn(1, 2, length, 16, generator=gen)
    v = torch.randn(1, 2, length, 16, generator=gen)
    return [t.to("tpu").requires_grad_(requires_grad) for t in (q, k, v)], (q, k, v)


@pytest.mark.parametrize("mode", ["strict", "debug"])
def test_attention_is_one_launch_and_a_new_length_one_compile(mode):
    # A decoding loop calls attention with a key one longer every token: in
    # Strict mode each call is one program (one compile per new length, one
    # launch per call), not one per step (two products, the scale, the
    # softmax, the masked-row check, the head expansion). Debug keeps its
    # per-op launches.
    import torch_tpu
    from metric_deltas import synced_delta

    with torch_tpu.eager_mode(mode):
        for length in (33, 34, 35):
            (tq, tk, tv), (q, k, v) = _decode_step_inputs(length)
            got, delta = synced_delta(lambda: F.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True))
            want = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
            if mode == "strict":
                assert delta["executions"] == 1 and delta["compiles"] <= 1, delta
            else:
                assert delta["executions"] > 1, delta
        _, again = synced_delta(lambda: F.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True))
        assert again["compiles"] == 0


def test_attention_backward_is_one_launch():
    import torch_tpu
    from metric_deltas import synced_delta

    (tq, tk, tv), (q, k, v) = _decode_step_inputs(9, requires_grad=True)
    q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
    mask = torch.rand(1, 1, 1, 9) > 0.2
    got = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask.to("tpu"), enable_gqa=True)
    grad = torch.randn(got.shape)
    tgrad = grad.to("tpu")
    with torch_tpu.eager_mode("strict"):
        grads, delta = synced_delta(lambda: torch.autograd.grad(got, (tq, tk, tv), tgrad))
    assert delta["executions"] == 1, delta
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    for g, w in zip(grads, torch.autograd.grad(want, (q, k, v), grad)):
        torch.testing.assert_close(g.cpu(), w, atol=1e-5, rtol=1e-5)


def test_a_failing_step_inside_attention_leaves_strict_mode_intact():
    # A kernel that raises inside its one-program scope leaves the scope: the
    # ops after it run in Strict mode again.
    import torch_tpu

    q = torch.randn(1, 4, 3, 8, device="tpu")
    with torch_tpu.eager_mode("strict"):
        with pytest.raises(RuntimeError, match="must match the size"):
            F.scaled_dot_product_attention(q, q, q, attn_mask=torch.zeros(5, 5, device="tpu"))
        assert torch_tpu.get_eager_mode() == "strict"
        torch.testing.assert_close((q + 1).cpu(), q.cpu() + 1)
