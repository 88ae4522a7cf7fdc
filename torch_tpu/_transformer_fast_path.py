"""The fused inference kernels `nn.TransformerEncoderLayer`,
`nn.TransformerEncoder` and `nn.MultiheadAttention` call in eval mode under
no_grad ("fast path"): PyTorch takes that path for every PrivateUse1
device, so without these a model that runs on CPU raised
NotImplementedError on tpu.

Each is the same math as the module's own slow path, in ATen ops that
lower to one program per op (or one region in DeferAndFuse). tpu has no
nested tensors, so `_nested_tensor_from_mask_left_aligned` answers False
and the encoder keeps its padded batch: the values are the same, as PyTorch
documents for the fast path.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from .modes import _in_one_region

_lib = torch.library.Library("aten", "IMPL")


def _additive(mask: Optional[torch.Tensor], dtype: torch.dtype) -> Optional[torch.Tensor]:
    if mask is None:
        return None
    if mask.dtype == torch.bool:  # True = not allowed to attend
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    return mask.to(dtype)


def _broadcast_mask(mask: Optional[torch.Tensor], mask_type: Optional[int], batch: int,
                    dtype: torch.dtype) -> Optional[torch.Tensor]:
    """The mask as an additive [B or 1, H or 1, L, S] term."""
    mask = _additive(mask, dtype)
    if mask is None:
        return None
    if mask_type == 1 or (mask_type is None and mask.dim() == 2 and mask.shape[0] == batch
                          and batch != mask.shape[1]):
        return mask.view(mask.shape[0], 1, 1, mask.shape[1])  # key padding [B, S]
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    return mask


def native_multi_head_attention(query, key, value, embed_dim: int, num_head: int, qkv_weight, qkv_bias,
                                proj_weight, proj_bias, mask=None, need_weights: bool = True,
                                average_attn_weights: bool = True,
                                mask_type: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    if query.dim() != 3:
        raise RuntimeError(f"_native_multi_head_attention: expected query of 3 dimensions, got {query.dim()}")
    if embed_dim % num_head != 0:
        raise RuntimeError("_native_multi_head_attention: embed_dim must be divisible by num_head")
    batch, length, _ = query.shape
    head = embed_dim // num_head
    wq, wk, wv = qkv_weight.chunk(3)
    bq, bk, bv = qkv_bias.chunk(3)
    q = F.linear(query, wq, bq)
    k = F.linear(key, wk, bk)
    v = F.linear(value, wv, bv)

    def heads(x):
        return x.view(x.shape[0], x.shape[1], num_head, head).transpose(1, 2)

    q, k, v = heads(q), heads(k), heads(v)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(head)
    bias = _broadcast_mask(mask, mask_type, batch, scores.dtype)
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1)
    out = torch.matmul(weights, v).transpose(1, 2).reshape(batch, length, embed_dim)
    out = F.linear(out, proj_weight, proj_bias)
    if not need_weights:
        return out, None  # an undefined tensor, as the CPU kernel returns
    return out, (weights.mean(1) if average_attn_weights else weights)


def transformer_encoder_layer_fwd(src, embed_dim: int, num_heads: int, qkv_weight, qkv_bias, proj_weight,
                                  proj_bias, use_gelu: bool, norm_first: bool, eps: float, norm_weight_1,
                                  norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1,
                                  ffn_weight_2, ffn_bias_2, mask=None, mask_type: Optional[int] = None):
    shape = (embed_dim,)
    x = F.layer_norm(src, shape, norm_weight_1, norm_bias_1, eps) if norm_first else src
    x = native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                    proj_bias, mask, False, True, mask_type)[0]
    x = x + src
    if not norm_first:
        x = F.layer_norm(x, shape, norm_weight_1, norm_bias_1, eps)
    residual = x
    if norm_first:
        x = F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps)
    x = F.linear(x, ffn_weight_1, ffn_bias_1)
    x = F.gelu(x) if use_gelu else F.relu(x)
    x = F.linear(x, ffn_weight_2, ffn_bias_2) + residual
    if not norm_first:
        x = F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps)
    return x


def nested_tensor_from_mask_left_aligned(t, mask) -> bool:
    return False


# Registered through module-level names, looked up per call (tests count
# the calls to prove the fast path is taken). Each runs as one program, as
# the fused CPU/CUDA kernels run as one kernel.
_lib.impl("_native_multi_head_attention",
          lambda *a, **k: _in_one_region(native_multi_head_attention, *a, **k), "PrivateUse1")
_lib.impl("_transformer_encoder_layer_fwd",
          lambda *a, **k: _in_one_region(transformer_encoder_layer_fwd, *a, **k), "PrivateUse1")
_lib.impl("_nested_tensor_from_mask_left_aligned",
          lambda *a, **k: nested_tensor_from_mask_left_aligned(*a, **k), "PrivateUse1")
