"""nn.TransformerEncoderLayer, nn.TransformerEncoder and nn.MultiheadAttention
in eval mode under no_grad take PyTorch's fused "fast path" on tpu as on CPU
(torch_tpu/_transformer_fast_path.py): their values equal CPU's, masks
included."""

import copy

import pytest
import torch
from torch import nn

from torch_tpu import _transformer_fast_path


def _same(module, *args, **kwargs):
    torch.manual_seed(0)
    module = module.eval()
    tpu = copy.deepcopy(module).to("tpu")
    moved = {}  # the same CPU tensor moves to the same tpu tensor (self-attention's q is k is v)

    def to_tpu(a):
        if not isinstance(a, torch.Tensor):
            return a
        return moved.setdefault(id(a), a.to("tpu"))

    with torch.no_grad():
        want = module(*args, **kwargs)
        got = tpu(*[to_tpu(a) for a in args], **{k: to_tpu(v) for k, v in kwargs.items()})
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        if w is None:  # need_weights=False: no weights, as on CPU
            assert g is None
            continue
        torch.testing.assert_close(g.cpu(), w, atol=1e-5, rtol=1e-5)


@pytest.fixture
def calls(monkeypatch):
    """Counts the fast-path kernels' calls (the path must really be taken)."""
    seen = []
    for name in ("native_multi_head_attention", "transformer_encoder_layer_fwd"):
        original = getattr(_transformer_fast_path, name)

        def spy(*a, _original=original, _name=name, **k):
            seen.append(_name)
            return _original(*a, **k)

        monkeypatch.setattr(_transformer_fast_path, name, spy)
    return seen


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer(norm_first, activation):
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation=activation, batch_first=True,
                                       norm_first=norm_first)
    x = torch.randn(3, 7, 32)
    causal = nn.Transformer.generate_square_subsequent_mask(7)
    padding = torch.zeros(3, 7, dtype=torch.bool)
    padding[1, 5:] = True
    _same(layer, x)
    _same(layer, x, src_mask=causal)
    _same(layer, x, src_key_padding_mask=padding)


def test_encoder_with_padding_mask_keeps_the_padded_batch():
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)
    x = torch.randn(3, 6, 32)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[0, 4:] = True
    padding[2, 2:] = True
    torch.manual_seed(0)
    encoder = encoder.eval()
    tpu = copy.deepcopy(encoder).to("tpu")
    with torch.no_grad():
        want = encoder(x, src_key_padding_mask=padding)
        got = tpu(x.to("tpu"), src_key_padding_mask=padding.to("tpu")).cpu()
    # CPU's nested path leaves padded positions 0; tpu computes them (as
    # the slow path does): compare the real positions
    real = ~padding
    torch.testing.assert_close(got[real], want[real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention(need_weights, average, calls):
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    q, k = torch.randn(2, 5, 16), torch.randn(2, 8, 16)
    padding = torch.zeros(2, 8, dtype=torch.bool)
    padding[1, 6:] = True
    self_padding = torch.zeros(2, 5, dtype=torch.bool)
    self_padding[0, 3:] = True
    _same(mha, q, q, q, need_weights=need_weights, average_attn_weights=average)
    _same(mha, q, q, q, key_padding_mask=self_padding, need_weights=need_weights,
          average_attn_weights=average)
    assert "native_multi_head_attention" in calls  # self-attention takes the fast path
    _same(mha, q, k, k, key_padding_mask=padding, need_weights=need_weights, average_attn_weights=average)


def test_encoder_layer_takes_the_fast_path(calls):
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    _same(layer, torch.randn(2, 4, 16))
    assert calls == ["transformer_encoder_layer_fwd", "native_multi_head_attention"]


@pytest.mark.parametrize("mode", ["strict", "debug"])
def test_the_fast_path_is_one_launch_in_strict_mode(mode):
    # As the fused CPU/CUDA kernel is one kernel: the layer's ~15 tpu ops
    # are one program in Strict mode (Debug keeps its per-op launches).
    import torch_tpu
    from metric_deltas import synced_delta

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval()
    tpu = copy.deepcopy(layer).to("tpu")
    x = torch.randn(2, 4, 16)
    tx = x.to("tpu")
    with torch.no_grad(), torch_tpu.eager_mode(mode):
        got, delta = synced_delta(lambda: tpu(tx))
        torch.testing.assert_close(got.cpu(), layer(x), atol=1e-5, rtol=1e-5)
    if mode == "strict":
        assert delta["executions"] == 1, delta
    else:
        assert delta["executions"] > 1, delta


def test_an_error_inside_the_fast_path_leaves_strict_mode():
    import torch_tpu

    x = torch.randn(2, 4, 16, device="tpu")
    w, b = torch.randn(48, 16, device="tpu"), torch.randn(48, device="tpu")
    with torch_tpu.eager_mode("strict"):
        with pytest.raises(RuntimeError, match="divisible"):
            torch._native_multi_head_attention(x, x, x, 16, 3, w, b, w[:16], b[:16])
        assert torch_tpu.get_eager_mode() == "strict"
