"""torch._scaled_mm on tpu (issue 29): tensor-wise and row-wise float8
products against CPU's kernel (its checks, its exception classes, its
results), and the block-scaled MXFP8, MXFP4 and NVFP4 products (CUDA's,
which CPU lacks) against their exact dequantized definition; in Strict,
DeferAndFuse and compiled graphs, functional and out=."""

import pytest
import torch

import torch_tpu

DEV = "tpu"
F8 = torch.float8_e4m3fn
E5 = torch.float8_e5m2
F4 = torch.float4_e2m1fn_x2
E8M0 = torch.float8_e8m0fnu

# float4_e2m1fn_x2's 16 values by bit pattern (sign, 2 exponent bits, 1
# mantissa bit), written out: the reference the tpu decoding is checked by.
FP4_VALUES = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def tpu(x):
    return x.to(DEV) if isinstance(x, torch.Tensor) else x


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        return e


def float8_operands(m, k, n, a_dtype=F8, b_dtype=F8, integer=False, seed=0):
    """a [m, k] row-major and b [k, n] column-major (as CUDA wants them)."""
    g = torch.Generator().manual_seed(seed)
    if integer:
        a = torch.randint(-4, 5, (m, k), generator=g).float()
        b = torch.randint(-4, 5, (n, k), generator=g).float()
    else:
        a, b = torch.randn(m, k, generator=g) * 3, torch.randn(n, k, generator=g) * 3
    return a.to(a_dtype), b.to(b_dtype).t()


def run_both(a, b, sa, sb, **kw):
    cpu = torch._scaled_mm(a, b, sa, sb, **kw)
    got = torch._scaled_mm(tpu(a), tpu(b), tpu(sa), tpu(sb), **{k: tpu(v) for k, v in kw.items()})
    return cpu, got


OUT_DTYPES = [torch.float32, torch.bfloat16, torch.float16, F8, E5]


@pytest.fixture(params=["plugin", "f8dot"])
def form(request):
    """The product's form: the plugin's own (float32 operands on the CPU
    plugin) and the f8 dot that GPU and TPU plugins take, forced here."""
    torch_tpu._C._set_scaled_mm_native_f8(True if request.param == "f8dot" else None)
    yield request.param
    torch_tpu._C._set_scaled_mm_native_f8(None)


@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
@pytest.mark.parametrize("rowwise", [False, True], ids=["tensorwise", "rowwise"])
def test_exact_products_equal_cpu_bit_for_bit(out_dtype, rowwise, form):
    # small integers and power-of-two scales: every sum is exact, so both
    # devices must give the same bits in every output dtype
    a, b = float8_operands(24, 48, 40, integer=True)
    if rowwise:
        sa = 2.0 ** torch.randint(-3, 3, (24, 1)).float()
        sb = 2.0 ** torch.randint(-3, 3, (1, 40)).float()
    else:
        sa, sb = torch.tensor(0.25), torch.tensor(4.0)
    cpu, got = run_both(a, b, sa, sb, out_dtype=out_dtype)
    assert got.dtype == cpu.dtype == out_dtype and got.device.type == DEV
    assert torch.equal(got.cpu().view(torch.uint8), cpu.view(torch.uint8))


def close(cpu, got):
    """Equal to CPU's result within the rounding that a different order of
    float32 sums can move it: one unit in the last place of the output."""
    got = got.cpu()
    assert got.dtype == cpu.dtype and got.shape == cpu.shape
    if cpu.dtype in (F8, E5):
        # neighbouring float8 values: compare each with the CPU value's neighbours
        step = {F8: 2.0 ** -3, E5: 2.0 ** -2}[cpu.dtype]
        diff = (got.float() - cpu.float()).abs()
        assert (diff <= cpu.float().abs() * step + 2.0 ** -9).all()
    else:
        rtol = {torch.float32: 1e-5, torch.bfloat16: 8e-3, torch.float16: 1e-3}[cpu.dtype]
        torch.testing.assert_close(got.float(), cpu.float(), rtol=rtol, atol=1e-3)


@pytest.mark.parametrize("out_dtype", OUT_DTYPES, ids=str)
def test_random_products_with_bias_and_scales_match_cpu(out_dtype, form):
    a, b = float8_operands(40, 64, 48)
    sa, sb = torch.tensor(0.37), torch.tensor(1.9)
    close(*run_both(a, b, sa, sb, out_dtype=out_dtype))
    bias = torch.randn(48).to(torch.bfloat16)
    close(*run_both(a, b, sa, sb, bias=bias, out_dtype=out_dtype))
    close(*run_both(a, b, torch.rand(40, 1) + 0.5, torch.rand(1, 48) + 0.5, bias=bias.float(),
                    out_dtype=out_dtype))


def test_scale_result_divides_where_out_dtype_names_a_float8_type_as_cpu():
    a, b = float8_operands(16, 32, 16)
    sa, sb, sr = torch.tensor(0.37), torch.tensor(1.9), torch.tensor(0.5)
    for kw in ({"out_dtype": F8}, {"out_dtype": E5}, {}, {"out_dtype": torch.float32},
               {"out_dtype": torch.bfloat16}):
        cpu, got = run_both(a, b, sa, sb, scale_result=sr, **kw)
        close(cpu, got)
    # and through out= (which CPU does not divide either)
    cpu_out, tpu_out = torch.empty(16, 16, dtype=F8), torch.empty(16, 16, dtype=F8, device=DEV)
    torch._scaled_mm(a, b, sa, sb, scale_result=sr, out=cpu_out)
    torch._scaled_mm(tpu(a), tpu(b), tpu(sa), tpu(sb), scale_result=tpu(sr), out=tpu_out)
    close(cpu_out, tpu_out)


@pytest.mark.parametrize("dtypes", [(F8, E5), (E5, F8), (E5, E5),
                                    (torch.float8_e4m3fnuz, torch.float8_e4m3fnuz),
                                    (torch.float8_e5m2fnuz, torch.float8_e4m3fnuz),
                                    (E8M0, E8M0)], ids=str)
def test_other_float8_dtypes_as_cpu(dtypes, form):
    if dtypes[0] == E8M0:  # e8m0 holds powers of two only
        a = (2.0 ** torch.randint(-4, 4, (16, 32)).float()).to(E8M0)
        b = (2.0 ** torch.randint(-4, 4, (24, 32)).float()).to(E8M0).t()
    else:
        a, b = float8_operands(16, 32, 24, *dtypes)
    close(*run_both(a, b, torch.tensor(0.5), torch.tensor(2.0), out_dtype=torch.float32))


def test_layouts_and_empty_shapes(form):
    a, b = float8_operands(16, 32, 24)
    s = torch.tensor(1.5)
    # CPU takes any layout (CUDA wants row-major a, column-major b)
    close(*run_both(a.t().contiguous().t(), b.contiguous(), s, s, out_dtype=torch.float32))
    close(*run_both(a[::2], b[:, 1::2], s, s, out_dtype=torch.float32))
    for m, k, n in ((0, 32, 24), (16, 0, 24), (16, 32, 0)):
        cpu, got = run_both(a[:m, :k], b[:k, :n], s, s, out_dtype=torch.bfloat16)
        assert got.shape == cpu.shape and torch.equal(got.cpu(), cpu)


def test_use_fast_accum_sums_in_float32():
    a, b = float8_operands(16, 64, 16)
    s = torch.tensor(1.0)
    slow = torch._scaled_mm(tpu(a), tpu(b), tpu(s), tpu(s), out_dtype=torch.float32)
    fast = torch._scaled_mm(tpu(a), tpu(b), tpu(s), tpu(s), out_dtype=torch.float32,
                            use_fast_accum=True)
    assert torch.equal(fast.cpu(), slow.cpu())


def test_out_variant_as_cpu():
    a, b = float8_operands(16, 32, 24)
    s = torch.tensor(0.75)
    for dtype in (torch.bfloat16, torch.float32):
        cpu_out, tpu_out = torch.empty(0, dtype=dtype), torch.empty(0, dtype=dtype, device=DEV)
        r = torch._scaled_mm(tpu(a), tpu(b), tpu(s), tpu(s), out_dtype=dtype, out=tpu_out)
        torch._scaled_mm(a, b, s, s, out_dtype=dtype, out=cpu_out)
        assert r is tpu_out
        close(cpu_out, tpu_out)
    # out_dtype must match out's dtype: ValueError on both
    for dev in ("cpu", DEV):
        e = outcome(lambda: torch._scaled_mm(a.to(dev), b.to(dev), s.to(dev), s.to(dev),
                                             out_dtype=torch.float32,
                                             out=torch.empty(16, 24, dtype=torch.bfloat16,
                                                             device=dev)))
        assert isinstance(e, ValueError) and "out_dtype must match" in str(e)


def bad_cases():
    a, b = float8_operands(16, 32, 24)
    s = torch.tensor(1.0)
    f4a = torch.zeros(16, 16, dtype=torch.uint8).view(F4)
    f4b = torch.zeros(24, 16, dtype=torch.uint8).view(F4).t()
    return {
        "3-d input": lambda d: (a[None], b, s, s, {}),
        "shapes": lambda d: (a, b[:5], s, s, {}),
        "float32 inputs": lambda d: (a.float(), b.float(), s, s, {}),
        "int8 inputs": lambda d: (a.view(torch.int8), b.view(torch.int8), s, s, {}),
        "two scales": lambda d: (a, b, torch.ones(2), s, {}),
        "bfloat16 scale": lambda d: (a, b, s.bfloat16(), s, {}),
        "float64 scale": lambda d: (a, b, s.double(), s, {}),
        "1-d row scales": lambda d: (a, b, torch.ones(16), torch.ones(24), {}),
        "row scales transposed": lambda d: (a, b, torch.ones(1, 16).t(), torch.ones(1, 24), {}),
        "half row scales": lambda d: (a, b, torch.ones(1, 1), torch.ones(1, 24), {}),
        "bias size": lambda d: (a, b, s, s, {"bias": torch.randn(7), "out_dtype": torch.float32}),
        "float4 tensorwise": lambda d: (f4a, f4b, s, s, {"out_dtype": torch.float32}),
    }


@pytest.mark.parametrize("case", list(bad_cases()), ids=str)
def test_bad_input_raises_what_cpu_raises(case):
    make = bad_cases()[case]

    def call(dev):
        a, b, sa, sb, kw = make(dev)
        kw = {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        return torch._scaled_mm(a.to(dev), b.to(dev), sa.to(dev), sb.to(dev), **kw)

    cpu, got = outcome(lambda: call("cpu")), outcome(lambda: call(DEV))
    assert isinstance(cpu, Exception), case
    assert type(got) is type(cpu), (case, got, cpu)
    assert str(got).split("\n")[0] == str(cpu).split("\n")[0] or case == "float4 tensorwise"


# --- block scaling: MXFP8, MXFP4, NVFP4 -------------------------------------

def swizzle(scales):
    """[rows, blocks] scales into CUDA's layout: 128x4 tiles, each stored
    as [row % 32][row // 32][block], padded with zeros."""
    rows, blocks = scales.shape
    padded_rows, padded_blocks = -(-rows // 128) * 128, -(-blocks // 4) * 4
    p = torch.zeros(padded_rows, padded_blocks, dtype=torch.uint8)
    p[:rows, :blocks] = scales.view(torch.uint8)
    tiles = p.view(padded_rows // 128, 4, 32, padded_blocks // 4, 4).permute(0, 3, 2, 1, 4)
    return tiles.flatten().view(scales.dtype)


def test_swizzle_is_cublas_layout():
    # cuBLAS's block-scaling-factors layout, element by element: the offset
    # of (row, block) is 512 * tile + (row % 32) * 16 + ((row % 128) // 32) * 4 + block % 4
    rows, blocks = 200, 7
    s = torch.randint(0, 255, (rows, blocks), dtype=torch.uint8)
    flat = swizzle(s)
    tiles_per_row = -(-blocks // 4)
    for r in range(0, rows, 7):
        for c in range(blocks):
            tile = (r // 128) * tiles_per_row + c // 4
            offset = 512 * tile + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4
            assert flat[offset] == s[r, c]


def unpack_float4(x):
    """[r, c] float4_e2m1fn_x2 -> [r, 2c] float32, low nibble first."""
    u = x.view(torch.uint8).long()
    return torch.stack([FP4_VALUES[u & 15], FP4_VALUES[u >> 4]], -1).flatten(-2)


def block_operands(kind, m, k, n, seed=0):
    """(a, b as [k, n], swizzled scale_a, scale_b, the exact dequantized a and b [n, k])."""
    g = torch.Generator().manual_seed(seed)
    block = 16 if kind == "nvfp4" else 32
    if kind == "mxfp8":
        a = (torch.randn(m, k, generator=g) * 2).to(F8)
        b = (torch.randn(n, k, generator=g) * 2).to(F8)
        af, bf = a.float(), b.float()
    else:
        a = torch.randint(0, 256, (m, k // 2), dtype=torch.uint8, generator=g).view(F4)
        b = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, generator=g).view(F4)
        af, bf = unpack_float4(a), unpack_float4(b)
    if kind == "nvfp4":
        sa = (torch.rand(m, k // block, generator=g) * 4).to(F8)
        sb = (torch.rand(n, k // block, generator=g) * 4).to(F8)
    else:
        sa = torch.randint(118, 136, (m, k // block), dtype=torch.uint8, generator=g).view(E8M0)
        sb = torch.randint(118, 136, (n, k // block), dtype=torch.uint8, generator=g).view(E8M0)
    af = af * sa.float().repeat_interleave(block, 1)
    bf = bf * sb.float().repeat_interleave(block, 1)
    return a, b.t(), swizzle(sa), swizzle(sb), af, bf


KINDS = ["mxfp8", "mxfp4", "nvfp4"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(40, 96, 136), (130, 64, 8), (1, 256, 1)], ids=str)
def test_block_scaled_products_are_the_exact_dequantized_product(kind, shape):
    m, k, n = shape
    a, b, sa, sb, af, bf = block_operands(kind, m, k, n)
    ref = (af.double() @ bf.double().t()).float()
    # each product is exact in float32; the sums may round in another order:
    # a few float32 ulps of the sum of magnitudes
    bound = (af.abs() @ bf.abs().t()) * 2.0 ** -21 + 1e-30
    got = torch._scaled_mm(tpu(a), tpu(b), tpu(sa), tpu(sb), out_dtype=torch.float32)
    assert ((got.cpu() - ref).abs() <= bound).all()
    got16 = torch._scaled_mm(tpu(a), tpu(b), tpu(sa), tpu(sb), out_dtype=torch.bfloat16)
    torch.testing.assert_close(got16.cpu().float(), ref.bfloat16().float(), rtol=8e-3,
                               atol=bound.max().item())
    bias = torch.randn(n).bfloat16()
    with_bias = torch._scaled_mm(tpu(a), tpu(b), tpu(sa), tpu(sb), bias=tpu(bias),
                                 out_dtype=torch.float32)
    assert ((with_bias.cpu() - (ref + bias.float())).abs() <= bound * 2 + 1e-6).all()


@pytest.mark.parametrize("kind", KINDS)
def test_block_scaled_bad_input(kind):
    a, b, sa, sb, _, _ = block_operands(kind, 40, 64, 24)
    short = sa[:-1]
    e = outcome(lambda: torch._scaled_mm(tpu(a), tpu(b), tpu(short), tpu(sb),
                                         out_dtype=torch.float32))
    assert isinstance(e, ValueError) and "scale_a should have" in str(e)
    # a k that is not a multiple of the block
    block = 16 if kind == "nvfp4" else 32
    cut = (block // 2) // (2 if kind != "mxfp8" else 1)
    e = outcome(lambda: torch._scaled_mm(tpu(a)[:, :-cut], tpu(b)[:-cut], tpu(sa), tpu(sb),
                                         out_dtype=torch.float32))
    assert isinstance(e, ValueError) and "multiple of its block size" in str(e)
    # e8m0 scales for float4 data are MXFP4; float8_e4m3fn scales for float8 data are not a format
    if kind == "mxfp8":
        e = outcome(lambda: torch._scaled_mm(tpu(a), tpu(b), tpu(sa.view(F8)), tpu(sb.view(F8)),
                                             out_dtype=torch.float32))
        assert isinstance(e, ValueError) and "Invalid scaling configuration" in str(e)


def test_every_float4_value_decodes():
    # all 256 bytes, each a pair of nibbles, as a [1, 256] x [256, 1]... one
    # column of b at a time: a picks out b's k-th element
    b = torch.arange(256, dtype=torch.uint8).view(1, 256).view(F4)  # [n=1, k/2=256]
    a_bytes = torch.zeros(512, 256, dtype=torch.uint8)
    idx = torch.arange(512)
    # a's row i is 1.0 (0x2) at element i, 0 elsewhere
    a_bytes[idx, idx // 2] = torch.where(idx % 2 == 0, 0x02, 0x20).to(torch.uint8)
    a = a_bytes.view(F4)
    ones = torch.full((512, 512 // 32), 127, dtype=torch.uint8).view(E8M0)  # 2**0
    got = torch._scaled_mm(tpu(a), tpu(b.t()), tpu(swizzle(ones)), tpu(swizzle(ones[:1])),
                           out_dtype=torch.float32)
    assert torch.equal(got.cpu().flatten(), unpack_float4(b).flatten())


# --- eager modes and torch.compile -------------------------------------------

def products(a, b, sa, sb, ra, rb, xa, xb, xsa, xsb):
    return (torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16),
            torch._scaled_mm(a, b, ra, rb, out_dtype=torch.float32),
            torch._scaled_mm(xa, xb, xsa, xsb, out_dtype=torch.float32))


def product_inputs():
    a, b = float8_operands(32, 64, 48, integer=True)
    xa, xb, xsa, xsb, af, bf = block_operands("mxfp4", 32, 64, 48)
    ra = 2.0 ** torch.randint(-2, 2, (32, 1)).float()
    rb = 2.0 ** torch.randint(-2, 2, (1, 48)).float()
    return (a, b, torch.tensor(0.5), torch.tensor(2.0), ra, rb, xa, xb, xsa, xsb)


def test_defer_and_fuse_and_compiled_give_strict_results():
    inputs = [tpu(x) for x in product_inputs()]
    strict = [t.cpu() for t in products(*inputs)]
    with torch_tpu.eager_mode("defer_and_fuse"):
        deferred = [t.cpu() for t in products(*inputs)]
    torch._dynamo.reset()
    compiled = [t.cpu() for t in torch.compile(products, backend="tpu", fullgraph=True)(*inputs)]
    for got in (deferred, compiled):
        for g, s in zip(got, strict):
            assert g.dtype == s.dtype and torch.equal(g, s)


# --- torch.nn.functional.scaled_mm (aten._scaled_mm_v2) ----------------------

from torch.nn.functional import ScalingType, SwizzleType  # noqa: E402


def v2(a, b, sa, ra, sb, rb, **kw):
    return torch.nn.functional.scaled_mm(a, b, sa, ra, sb, rb, **kw)


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_v2_tensorwise_and_rowwise_equal_cpu(recipe):
    a, b = float8_operands(24, 48, 40, integer=True)
    if recipe == "rowwise":
        sa, sb, r = 2.0 ** torch.randint(-3, 3, (24, 1)).float(), \
            2.0 ** torch.randint(-3, 3, (1, 40)).float(), ScalingType.RowWise
    else:
        sa, sb, r = torch.tensor(0.25), torch.tensor(4.0), ScalingType.TensorWise
    bias = torch.randint(-3, 3, (40,)).bfloat16()
    for kw in ({}, {"output_dtype": torch.float32}, {"bias": bias}):
        cpu = v2(a, b, sa, r, sb, r, **kw)
        got = v2(tpu(a), tpu(b), tpu(sa), r, tpu(sb), r, **{k: tpu(v) for k, v in kw.items()})
        assert got.dtype == cpu.dtype and torch.equal(got.cpu(), cpu)


@pytest.mark.parametrize("kind", KINDS)
def test_v2_block_recipes_are_the_exact_dequantized_product(kind):
    m, k, n = 40, 96, 136
    a, b, sa, sb, af, bf = block_operands(kind, m, k, n)
    recipe = ScalingType.BlockWise1x16 if kind == "nvfp4" else ScalingType.BlockWise1x32
    swz = SwizzleType.SWIZZLE_32_4_4
    ref = (af.double() @ bf.double().t()).float()
    bound = (af.abs() @ bf.abs().t()) * 2.0 ** -21 + 1e-30
    got = v2(tpu(a), tpu(b), tpu(sa), recipe, tpu(sb), recipe, swizzle_a=swz, swizzle_b=swz,
             output_dtype=torch.float32)
    assert ((got.cpu() - ref).abs() <= bound).all()
    if kind == "nvfp4":  # two levels: block scales and one float32 scale per operand
        ga, gb = torch.tensor(0.5), torch.tensor(3.0)
        both = [ScalingType.BlockWise1x16, ScalingType.TensorWise]
        got = v2(tpu(a), tpu(b), [tpu(sa), tpu(ga)], both, [tpu(sb), tpu(gb)], both,
                 swizzle_a=swz, swizzle_b=swz, output_dtype=torch.float32)
        assert ((got.cpu() - ref * 1.5).abs() <= bound * 2).all()
    # unswizzled block scales are not CUDA's layout: refused
    e = outcome(lambda: v2(tpu(a), tpu(b), tpu(sa), recipe, tpu(sb), recipe,
                           output_dtype=torch.float32))
    assert isinstance(e, ValueError) and "swizzled" in str(e)


def test_v2_bad_input_raises_what_cpu_raises():
    a, b = float8_operands(16, 32, 24)
    T, R = ScalingType.TensorWise, ScalingType.RowWise
    cases = [(torch.ones(2), T, torch.tensor(1.0), T), (torch.ones(16, 2), R, torch.ones(1, 24), R),
             (torch.ones(16), R, torch.ones(1, 24), R), (torch.tensor(1.0), T, torch.ones(1, 24), R)]
    for sa, ra, sb, rb in cases:
        cpu = outcome(lambda: v2(a, b, sa, ra, sb, rb, output_dtype=torch.float32))
        got = outcome(lambda: v2(tpu(a), tpu(b), tpu(sa), ra, tpu(sb), rb,
                                 output_dtype=torch.float32))
        assert isinstance(cpu, Exception) and type(got) is type(cpu), (got, cpu)
        assert str(got).split("\n")[0] == str(cpu).split("\n")[0]
    e = outcome(lambda: v2(tpu(a), tpu(b), tpu(torch.ones(16, 1)), ScalingType.BlockWise1x128,
                           tpu(torch.ones(24, 1)), ScalingType.BlockWise1x128))
    assert isinstance(e, NotImplementedError) and "1x128" in str(e)
