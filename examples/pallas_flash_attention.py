"""A blockwise (flash-style) attention forward written in Pallas, called on
tpu tensors through torch_tpu.kernels.

Each program of the grid computes one block of queries for one (batch,
head): it walks the keys a block at a time, keeping the running row maximum,
the softmax denominator and the weighted sum of values (the online softmax),
so the full (queries x keys) score matrix never exists. On a TPU Pallas
lowers this to a Mosaic kernel; on the CPU and GPU plugins torch_tpu lowers
it in Pallas' interpret mode, the same math as plain StableHLO.

    python examples/pallas_flash_attention.py     # checks it against SDPA
"""

import functools
import math

import torch

import torch_tpu.kernels


def _attention_block(q_ref, k_ref, v_ref, o_ref, *, block_k, scale, causal):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    block_q = q_ref.shape[0]
    q = q_ref[...].astype(jnp.float32) * scale
    first_query = pl.program_id(1) * block_q

    def visit(j, carry):
        row_max, denominator, acc = carry
        k = k_ref[pl.ds(j * block_k, block_k), :].astype(jnp.float32)
        v = v_ref[pl.ds(j * block_k, block_k), :].astype(jnp.float32)
        s = q @ k.T
        if causal:
            rows = first_query + jax.lax.broadcasted_iota(jnp.int32, s.shape, 0)
            cols = j * block_k + jax.lax.broadcasted_iota(jnp.int32, s.shape, 1)
            s = jnp.where(cols <= rows, s, -jnp.inf)
        new_max = jnp.maximum(row_max, s.max(axis=1))
        p = jnp.exp(s - new_max[:, None])
        correction = jnp.exp(row_max - new_max)
        denominator = denominator * correction + p.sum(axis=1)
        acc = acc * correction[:, None] + p @ v
        return new_max, denominator, acc

    blocks = k_ref.shape[0] // block_k
    if causal:  # key blocks after this query block's last row contribute nothing
        blocks = jnp.minimum(blocks, (first_query + block_q + block_k - 1) // block_k)
    init = (jnp.full((block_q,), -jnp.inf, jnp.float32), jnp.zeros((block_q,), jnp.float32),
            jnp.zeros(q.shape, jnp.float32))
    _, denominator, acc = jax.lax.fori_loop(0, blocks, visit, init)
    o_ref[...] = (acc / denominator[:, None]).astype(o_ref.dtype)


@torch_tpu.kernels.jax_kernel
def flash_attention(q, k, v, causal=False, block_q=64, block_k=64):
    """softmax(q @ k^T / sqrt(d)) @ v for (batch, heads, seq, d) tensors, as
    F.scaled_dot_product_attention computes it (`causal`: is_causal=True).
    The sequence lengths must be multiples of the block sizes (a smaller
    sequence is one block)."""
    import jax
    from jax.experimental import pallas as pl

    batch, heads, seq_q, d = q.shape
    seq_k = k.shape[2]
    block_q, block_k = min(block_q, seq_q), min(block_k, seq_k)
    if seq_q % block_q or seq_k % block_k:
        raise ValueError(f"sequence lengths {seq_q}, {seq_k} are not multiples of the "
                         f"blocks {block_q}, {block_k}")
    flat = lambda x: x.reshape(batch * heads, x.shape[2], d)
    kernel = functools.partial(_attention_block, block_k=block_k, scale=1 / math.sqrt(d),
                               causal=causal)
    whole = lambda b, i: (b, 0, 0)
    out = pl.pallas_call(
        kernel,
        grid=(batch * heads, seq_q // block_q),
        in_specs=[pl.BlockSpec((pl.squeezed, block_q, d), lambda b, i: (b, i, 0)),
                  pl.BlockSpec((pl.squeezed, seq_k, d), whole),
                  pl.BlockSpec((pl.squeezed, seq_k, d), whole)],
        out_specs=pl.BlockSpec((pl.squeezed, block_q, d), lambda b, i: (b, i, 0)),
        out_shape=jax.ShapeDtypeStruct((batch * heads, seq_q, d), q.dtype),
    )(flat(q), flat(k), flat(v))
    return out.reshape(batch, heads, seq_q, d)


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 256, 64) for _ in range(3))
    for causal in (False, True):
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        got = flash_attention(q.to("tpu"), k.to("tpu"), v.to("tpu"), causal).cpu()
        error = (got - expected).abs().max().item()
        print(f"causal={causal}: max |flash - sdpa| = {error:.2e}")
        assert error < 1e-4


if __name__ == "__main__":
    main()
