"""`F.scaled_dot_product_attention`'s backward on tpu. The device's
`_fused_sdp_choice_stub` (csrc/device/attention_choice.cc) picks PyTorch's
"overrideable" backend, as PyTorch's OpenReg backend does; its forward is
csrc/ops/attention_ops.cc, its backward is here.

Without it PyTorch runs its math path, which asks the host whether any row
of the mask is fully masked (`isneginf(mask).all(-1).any()` read with
`.item()`): one device sync per attention call, 30 per generated token for
a 30-layer decoder, which stalls the asynchronous launches. Here the same
answer comes from the values: a row whose scores are all -inf gets zero
probabilities (what the math path's `_safe_softmax` gives), with no host
read.

The backward recomputes the probabilities from the inputs, as one program
(its ~20 tpu ops are one launch). Dropout
(training with dropout_p > 0) stays on the math path: its mask would have
to be replayed in the backward.
"""

from __future__ import annotations

import math
from typing import List, Optional

import torch

from .modes import _in_one_region

_lib = torch.library.Library("aten", "IMPL")


def _bias(attn_bias: Optional[torch.Tensor], is_causal: bool, q: torch.Tensor, k: torch.Tensor):
    """The additive bias of the scores (None for none)."""
    bias = None
    if attn_bias is not None:
        if attn_bias.dtype == torch.bool:
            bias = torch.zeros(attn_bias.shape, dtype=q.dtype, device=q.device).masked_fill(
                attn_bias.logical_not(), float("-inf"))
        else:
            bias = attn_bias
    if is_causal:
        length, source = q.shape[-2], k.shape[-2]
        allowed = torch.ones(length, source, dtype=torch.bool, device=q.device).tril()
        causal = torch.zeros(length, source, dtype=q.dtype, device=q.device).masked_fill(
            allowed.logical_not(), float("-inf"))
        bias = causal if bias is None else bias + causal
    return bias


def _expand_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """Grouped-query attention: each key/value head serves heads/kv query heads."""
    if x.shape[1] == heads:
        return x
    groups = heads // x.shape[1]
    return x.repeat_interleave(groups, dim=1)


def _scores(q, k, bias, scale):
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    return s if bias is None else s + bias


def _probabilities(scores: torch.Tensor) -> torch.Tensor:
    """softmax over the last dimension, 0 for a fully masked row (the math
    path's `_safe_softmax`, in one op)."""
    return torch._safe_softmax(scores, -1)


def _sum_to(grad: torch.Tensor, shape) -> torch.Tensor:
    """grad summed over the dimensions a broadcast tensor of `shape` spread."""
    lead = grad.dim() - len(shape)
    if lead:
        grad = grad.sum(list(range(lead)))
    dims = [d for d, n in enumerate(shape) if n == 1 and grad.shape[d] != 1]
    return grad.sum(dims, keepdim=True) if dims else grad


def _like(reference: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """grad laid out as `torch.empty_like(reference)`: PyTorch's meta
    function for this backward promises that layout to compiled graphs."""
    out = torch.empty_like(reference, dtype=grad.dtype)
    return grad if out.stride() == grad.stride() else out.copy_(grad)


def _fold_heads(grad: torch.Tensor, kv_heads: int) -> torch.Tensor:
    if grad.shape[1] == kv_heads:
        return grad
    b, h, s, d = grad.shape
    return grad.view(b, kv_heads, h // kv_heads, s, d).sum(2)


def fused_attention_backward(*args, **kwargs):
    return _in_one_region(_backward, *args, **kwargs)


def _backward(grad_out, query, key, value, attn_bias, grad_input_mask: List[bool], out, logsumexp,
              cum_seq_q, cum_seq_k, max_q, max_k, dropout_p: float, is_causal: bool, philox_seed,
              philox_offset, *, scale: Optional[float] = None):
    heads = query.shape[1]
    k, v = _expand_heads(key, heads), _expand_heads(value, heads)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    bias = attn_bias if attn_bias is not None and attn_bias.numel() else None
    p = _probabilities(_scores(query, k, _bias(bias, is_causal, query, k), scale)).float()
    g = grad_out.float()
    grad_v = torch.matmul(p.transpose(-2, -1), g)
    grad_p = torch.matmul(g, v.float().transpose(-2, -1))
    row = (g * out.float()).sum(-1, keepdim=True)
    grad_s = p * (grad_p - row)
    grad_q = torch.matmul(grad_s, k.float()) * scale
    grad_k = torch.matmul(grad_s.transpose(-2, -1), query.float()) * scale
    kv_heads = key.shape[1]
    grads = [_like(query, grad_q.to(query.dtype)), _like(key, _fold_heads(grad_k, kv_heads).to(key.dtype)),
             _like(value, _fold_heads(grad_v, kv_heads).to(value.dtype))]
    if bias is not None and grad_input_mask[3] and bias.dtype != torch.bool:
        grads.append(_like(bias, _sum_to(grad_s, bias.shape).to(bias.dtype)))
    else:
        grads.append(None)
    return tuple(grads)


# Registered through module-level names, looked up per call.
_lib.impl("_scaled_dot_product_fused_attention_overrideable_backward",
          lambda *a, **k: fused_attention_backward(*a, **k), "PrivateUse1")
