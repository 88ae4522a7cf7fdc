"""Differential test: random sequences of views and in-place writes on tpu vs cpu.

Every sequence builds the same base tensor on the CPU and on the tpu device and
applies 3-6 random steps to both: taking a view, writing through the current
view, copying into it from another tpu view of the same base, or cloning it.
After every step the view metadata (sizes, strides, storage offset, dtype)
must agree; at the end the base tensor and the current view must be equal bit
for bit.

Writes only go through views whose elements address distinct memory
locations (writes through expanded or overlapping views are undefined in
PyTorch); tpu->tpu copies only read from views that share no memory location
with the destination, so the result does not depend on the copy order.

A subset of the seeds is replayed under the 'debug' and 'defer_and_fuse' eager
modes.

Shapes come from a small set so that the number of distinct XLA programs
(each compiled once, then cached) stays low.
"""

import random

import pytest
import torch

DEV = "tpu"
N_SEEDS = 200

BASE_SHAPES = [(24,), (4, 6), (6, 4), (2, 3, 4), (3, 1, 4), (2, 2, 3, 2), (5, 5), (1, 8)]

# (dtype, weight)
DTYPES = [
    (torch.float32, 8),
    (torch.int64, 2),
    (torch.float64, 2),
    (torch.bool, 1),
    (torch.bfloat16, 2),
    (torch.int8, 1),
    (torch.int32, 1),
    (torch.float16, 1),
    (torch.uint8, 1),
    (torch.int16, 1),
    (torch.complex64, 1),
]

# Same-element-size reinterpretations for view(dtype).
SAME_SIZE = {
    torch.float32: [torch.int32],
    torch.int32: [torch.float32],
    torch.float64: [torch.int64],
    torch.int64: [torch.float64],
    torch.bfloat16: [torch.int16, torch.float16],
    torch.float16: [torch.int16, torch.bfloat16],
    torch.int16: [torch.bfloat16, torch.float16],
    torch.int8: [torch.uint8],
    torch.uint8: [torch.int8],
    torch.bool: [],  # non-0/1 bytes in a bool tensor are undefined
    torch.complex64: [],
}

BITS = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}


class Skip(Exception):
    """The step is not applicable (or illegal on CPU); try another one."""


# ----------------------------------------------------------------------------
# helpers


def bits(t):
    """A CPU tensor whose torch.equal is a bitwise comparison of `t`."""
    t = t.contiguous()
    if t.dtype in BITS:
        return t.view(BITS[t.dtype])
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    if t.dtype == torch.complex64:
        return torch.view_as_real(t).contiguous().view(torch.int32)
    return t


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def storage_index(t):
    """Element offsets (in units of t's element size) that `t` addresses."""
    n_store = t.untyped_storage().nbytes() // t.element_size()
    return torch.arange(n_store).as_strided(t.size(), t.stride(), t.storage_offset())


def non_overlapping(t):
    idx = storage_index(t).reshape(-1)
    return idx.unique().numel() == idx.numel()


def fill_value(rng, dtype):
    if dtype == torch.bool:
        return rng.choice([True, False])
    if dtype == torch.uint8:
        return rng.randrange(0, 256)
    if dtype == torch.int8:
        return rng.randrange(-128, 128)
    if dtype == torch.int16:
        return rng.choice([rng.randrange(-1000, 1000), -32768, 32767])
    if dtype == torch.int32:
        return rng.choice([rng.randrange(-1000, 1000), -2**31, 2**31 - 1])
    if dtype == torch.int64:
        return rng.choice([rng.randrange(-1000, 1000), -2**63, 2**63 - 1, 2**40 + 3])
    if dtype == torch.complex64:
        return rng.choice([complex(1.5, -2.0), complex(0.1, 0.2), 3.0, -1.0])
    vals = [0.5, -3.25, 100.0, 0.1, 1.0 / 3.0, -0.0, 7.0, 1e-3]
    if dtype in (torch.float32, torch.float64):
        vals += [1e30, float("inf"), float("-inf"), float("nan")]
    return rng.choice(vals)


def random_data(rng, shape, dtype):
    """A random CPU tensor of `shape` and `dtype` (reproducible from rng)."""
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
    if dtype in (torch.int8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(dtype)
        lo, hi = max(info.min, -10**6), min(info.max, 10**6)
        return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)
    if dtype == torch.complex64:
        return torch.randn(shape, generator=g, dtype=torch.complex64)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * 100).to(dtype)


def conversion_data(rng, shape):
    """Small non-negative values, exactly representable in every dtype we use."""
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    src_dtype = rng.choice([torch.float64, torch.float32, torch.int64, torch.int32,
                            torch.bfloat16, torch.int16, torch.bool])
    vals = torch.randint(0, 100, shape, generator=g, dtype=torch.int64)
    if src_dtype.is_floating_point:
        return (vals.to(torch.float64) / 2).to(src_dtype)
    return vals.to(src_dtype)


def random_shape(rng, numel):
    """A random shape with `numel` elements (None if numel == 0)."""
    if numel == 0:
        return None
    factors = []
    n = numel
    p = 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    ndim = rng.randint(1, 4)
    dims = [1] * ndim
    for f in factors:
        dims[rng.randrange(ndim)] *= f
    if rng.random() < 0.3:
        dims[rng.randrange(ndim)] = -1
    return tuple(dims)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


# ----------------------------------------------------------------------------
# steps: each generator looks at the CPU twin `c` and returns (description, fn)
# where fn(cur, base, dev) returns the new current tensor.


def step_slice(rng, c, cb):
    if c.dim() == 0:
        raise Skip
    d = rng.randrange(c.dim())
    n = c.size(d)
    start = rng.randint(-n, n) if rng.random() < 0.7 else None
    stop = rng.randint(-n, n) if rng.random() < 0.5 else None
    step = rng.randint(1, 3)
    idx = (slice(None),) * d + (slice(start, stop, step),)
    return f"cur[{idx}]", lambda t, b, dev: t[idx]


def step_narrow(rng, c, cb):
    if c.dim() == 0:
        raise Skip
    d = rng.randrange(c.dim())
    n = c.size(d)
    start = rng.randint(0, n)
    length = rng.randint(0, n - start)
    return f"narrow({d},{start},{length})", lambda t, b, dev: t.narrow(d, start, length)


def step_select(rng, c, cb):
    if c.dim() == 0:
        raise Skip
    d = rng.randrange(c.dim())
    n = c.size(d)
    if n == 0:
        raise Skip
    i = rng.randint(-n, n - 1)
    return f"select({d},{i})", lambda t, b, dev: t.select(d, i)


def step_int_index(rng, c, cb):
    if c.dim() < 2:
        raise Skip
    n0 = c.size(0)
    if n0 == 0:
        raise Skip
    i = rng.randrange(n0)
    if c.size(-1) == 0:
        raise Skip
    j = rng.randrange(c.size(-1))
    return f"cur[{i}, ..., {j}]", lambda t, b, dev: t[i, ..., j]


def step_transpose(rng, c, cb):
    if c.dim() < 2:
        raise Skip
    d0, d1 = rng.randrange(c.dim()), rng.randrange(c.dim())
    return f"transpose({d0},{d1})", lambda t, b, dev: t.transpose(d0, d1)


def step_permute(rng, c, cb):
    if c.dim() < 2:
        raise Skip
    perm = list(range(c.dim()))
    rng.shuffle(perm)
    return f"permute({perm})", lambda t, b, dev: t.permute(perm)


def step_t(rng, c, cb):
    if c.dim() > 2:
        raise Skip
    return "t()", lambda t, b, dev: t.t()


def step_expand(rng, c, cb):
    if c.dim() > 3:
        raise Skip
    shape = [rng.randint(1, 3) if s == 1 else -1 for s in c.shape]
    if rng.random() < 0.5 or not shape:
        shape = [2] + shape
    return f"expand({shape})", lambda t, b, dev: t.expand(*shape)


def step_squeeze(rng, c, cb):
    if rng.random() < 0.4 or c.dim() == 0:
        return "squeeze()", lambda t, b, dev: t.squeeze()
    d = rng.randrange(c.dim())
    return f"squeeze({d})", lambda t, b, dev: t.squeeze(d)


def step_unsqueeze(rng, c, cb):
    if c.dim() >= 5:
        raise Skip
    d = rng.randint(-c.dim() - 1, c.dim())
    return f"unsqueeze({d})", lambda t, b, dev: t.unsqueeze(d)


def step_diagonal(rng, c, cb):
    if c.dim() < 2:
        raise Skip
    d1, d2 = rng.sample(range(c.dim()), 2)
    off = rng.randint(-2, 2)
    return (f"diagonal({off},{d1},{d2})",
            lambda t, b, dev: t.diagonal(offset=off, dim1=d1, dim2=d2))


def step_unfold(rng, c, cb):
    if c.dim() == 0 or c.dim() > 3:
        raise Skip
    d = rng.randrange(c.dim())
    n = c.size(d)
    if n == 0:
        raise Skip
    size = rng.randint(1, min(n, 3))
    step = rng.randint(1, 3)
    return f"unfold({d},{size},{step})", lambda t, b, dev: t.unfold(d, size, step)


def step_as_strided(rng, c, cb):
    n_store = c.untyped_storage().nbytes() // c.element_size()
    if n_store == 0:
        raise Skip
    for _ in range(20):
        ndim = rng.randint(1, 3)
        sizes = [rng.randint(1, 4) for _ in range(ndim)]
        if rng.random() < 0.5:
            # a permuted dense layout: non-overlapping, so it can be written
            strides = [0] * ndim
            acc = 1
            order = list(range(ndim))
            rng.shuffle(order)
            for k in order:
                strides[k] = acc
                acc *= sizes[k]
        else:
            strides = [rng.randint(0, max(1, n_store // 3)) for _ in range(ndim)]
        span = sum((s - 1) * st for s, st in zip(sizes, strides))
        if span < n_store:
            off = rng.randint(0, n_store - 1 - span)
            return (f"as_strided({sizes},{strides},{off})",
                    lambda t, b, dev: t.as_strided(sizes, strides, off))
    raise Skip


def step_view(rng, c, cb):
    shape = random_shape(rng, c.numel())
    if shape is None:
        raise Skip
    if rng.random() < 0.5:
        return f"view({shape})", lambda t, b, dev: t.view(shape)
    return f"reshape({shape})", lambda t, b, dev: t.reshape(shape)


def step_flatten(rng, c, cb):
    if c.dim() < 2:
        if c.dim() == 0:
            return "flatten()", lambda t, b, dev: t.flatten()
        raise Skip
    s = rng.randrange(c.dim())
    e = rng.randint(s, c.dim() - 1)
    return f"flatten({s},{e})", lambda t, b, dev: t.flatten(s, e)


def step_unflatten(rng, c, cb):
    if c.dim() == 0 or c.dim() > 3:
        raise Skip
    d = rng.randrange(c.dim())
    n = c.size(d)
    if n == 0:
        raise Skip
    a = rng.choice(divisors(n))
    sizes = (a, n // a)
    return f"unflatten({d},{sizes})", lambda t, b, dev: t.unflatten(d, sizes)


def step_view_dtype(rng, c, cb):
    choices = SAME_SIZE[c.dtype]
    if not choices:
        raise Skip
    dt = rng.choice(choices)
    return f"view({dt})", lambda t, b, dev: t.view(dt)


def step_clone(rng, c, cb):
    kind = rng.choice(["clone", "contiguous", "clone_contig"])
    if kind == "clone":
        return "clone()", lambda t, b, dev: t.clone()
    if kind == "contiguous":
        return "contiguous()", lambda t, b, dev: t.contiguous()
    return ("clone(contiguous_format)",
            lambda t, b, dev: t.clone(memory_format=torch.contiguous_format))


def _require_writable(c):
    if not non_overlapping(c):
        raise Skip


def step_fill(rng, c, cb):
    _require_writable(c)
    v = fill_value(rng, c.dtype)
    if rng.random() < 0.2:
        return "zero_()", lambda t, b, dev: t.zero_()
    return f"fill_({v!r})", lambda t, b, dev: t.fill_(v)


def step_copy_cpu(rng, c, cb):
    _require_writable(c)
    r = rng.random()
    if r < 0.5:
        data = random_data(rng, c.shape, c.dtype)
        desc = f"copy_(random {c.dtype} {tuple(c.shape)} from cpu)"
    elif r < 0.75:
        data = conversion_data(rng, c.shape)
        desc = f"copy_(random {data.dtype} {tuple(c.shape)} from cpu, dtype conversion)"
    else:
        # broadcasting source: some dims set to 1, maybe leading dims dropped
        shape = [1 if rng.random() < 0.5 else s for s in c.shape]
        if shape and rng.random() < 0.3:
            shape = shape[1:]
        data = random_data(rng, shape, c.dtype)
        desc = f"copy_(broadcast {c.dtype} {tuple(shape)} from cpu)"
    if rng.random() < 0.3 and data.dim() >= 2:
        # non-contiguous CPU source
        data = data.transpose(0, 1).contiguous().transpose(0, 1)
        desc += " [non-contiguous src]"
    if rng.random() < 0.3:
        src_on_tpu = True
        desc = desc.replace("from cpu", "from a separate tpu tensor")
    else:
        src_on_tpu = False

    def fn(t, b, dev):
        src = data.to(dev) if src_on_tpu else data
        return t.copy_(src)

    return desc, fn


def step_setitem(rng, c, cb):
    _require_writable(c)
    if c.dim() == 0:
        v = fill_value(rng, c.dtype)
        return f"cur[...] = {v!r}", lambda t, b, dev: t.__setitem__(Ellipsis, v) or t
    n = c.size(0)
    r = rng.random()
    if r < 0.35 and n > 0:
        idx = rng.randrange(-n, n)
    elif r < 0.7:
        idx = slice(rng.randint(0, n), None, rng.randint(1, 3))
    else:
        idx = (Ellipsis, rng.randrange(c.size(-1))) if c.size(-1) > 0 else Ellipsis
    target_shape = c[idx].shape
    if rng.random() < 0.5:
        v = fill_value(rng, c.dtype)
        desc = f"cur[{idx!r}] = {v!r}"
    else:
        v = random_data(rng, target_shape, c.dtype)
        desc = f"cur[{idx!r}] = random cpu {c.dtype} {tuple(target_shape)}"

    def fn(t, b, dev):
        t[idx] = v
        return t

    return desc, fn


def step_copy_from_base_view(rng, c, cb):
    """tpu->tpu copy_ into the current view from another view of the same base."""
    _require_writable(c)
    n_store = cb.untyped_storage().nbytes() // c.element_size()
    if c.untyped_storage().data_ptr() == cb.untyped_storage().data_ptr():
        dst = set(storage_index(c).reshape(-1).tolist())
    else:
        dst = set()  # the current tensor is a clone: no memory shared with the base
    shape = list(c.shape)
    for _ in range(30):
        # a random strided source of the same shape (read-only: may overlap itself)
        strides = [rng.randint(0, 4) for _ in shape]
        if rng.random() < 0.5:
            # a transposed dense layout
            acc = 1
            for k in range(len(shape)):
                strides[k] = acc
                acc *= max(shape[k], 1)
        span = sum((s - 1) * st for s, st in zip(shape, strides) if s > 0)
        if span >= n_store:
            continue
        off = rng.randint(0, n_store - 1 - span)
        src_idx = set(torch.arange(n_store).as_strided(shape, strides, off).reshape(-1).tolist())
        if src_idx & dst:
            continue
        dtype = c.dtype

        def fn(t, b, dev, shape=shape, strides=strides, off=off, dtype=dtype):
            src = b.view(dtype).as_strided(shape, strides, off)
            return t.copy_(src)

        return f"copy_(base.view({dtype}).as_strided({shape},{strides},{off}))", fn
    raise Skip


VIEW_STEPS = [step_slice, step_narrow, step_select, step_int_index, step_transpose,
              step_permute, step_t, step_expand, step_squeeze, step_unsqueeze,
              step_diagonal, step_unfold, step_as_strided, step_view, step_flatten,
              step_unflatten, step_view_dtype]
WRITE_STEPS = [step_fill, step_copy_cpu, step_setitem, step_copy_from_base_view]
OTHER_STEPS = [step_clone]


def pick_step(rng):
    r = rng.random()
    if r < 0.55:
        return rng.choice(VIEW_STEPS)
    if r < 0.93:
        return rng.choice(WRITE_STEPS)
    return rng.choice(OTHER_STEPS)


# ----------------------------------------------------------------------------


def make_base(rng):
    dtypes, weights = zip(*DTYPES)
    dtype = rng.choices(dtypes, weights)[0]
    shape = rng.choice(BASE_SHAPES)
    n = 1
    for s in shape:
        n *= s
    how = rng.choice(["arange", "arange", "random", "full"])
    if how == "full" or (how == "arange" and dtype == torch.bool):
        v = fill_value(rng, dtype)
        desc = f"torch.full({shape}, {v!r}, dtype={dtype})"
        cpu = torch.full(shape, v, dtype=dtype)
        tpu = torch.full(shape, v, dtype=dtype, device=DEV)  # created on device
    elif how == "arange":
        desc = f"torch.arange({n}).reshape({shape}).to({dtype})"
        cpu = torch.arange(n).reshape(shape).to(dtype)
        if dtype in (torch.int64, torch.float32, torch.float64):
            tpu = torch.arange(n, dtype=dtype, device=DEV).reshape(shape)
        else:
            tpu = cpu.to(DEV)
    else:
        cpu = random_data(rng, shape, dtype)
        desc = f"random {dtype} {shape} (copied cpu->tpu)"
        tpu = cpu.to(DEV)
    return desc, cpu, tpu


def run_sequence(seed):
    rng = random.Random(seed)
    desc, cpu_base, tpu_base = make_base(rng)
    log = [desc]
    cpu_cur, tpu_cur = cpu_base, tpu_base
    n_steps = rng.randint(3, 6)

    def fail(msg):
        steps = "\n  ".join(log)
        pytest.fail(f"seed {seed}: {msg}\nsteps:\n  {steps}", pytrace=False)

    done = 0
    attempts = 0
    while done < n_steps and attempts < 100:
        attempts += 1
        gen = pick_step(rng)
        try:
            step_desc, fn = gen(rng, cpu_cur, cpu_base)
        except Skip:
            continue
        try:
            new_cpu = fn(cpu_cur, cpu_base, "cpu")
        except (RuntimeError, IndexError, ValueError):
            continue  # illegal in PyTorch itself: skip the step on both
        log.append(step_desc)
        try:
            new_tpu = fn(tpu_cur, tpu_base, DEV)
        except Exception as e:  # noqa: BLE001
            fail(f"tpu raised {type(e).__name__}: {e} (cpu did not)")
        cpu_cur, tpu_cur = new_cpu, new_tpu
        done += 1
        if tpu_cur.device.type != DEV:
            fail(f"result is on {tpu_cur.device}")
        meta_c = (tuple(cpu_cur.shape), cpu_cur.stride(), cpu_cur.storage_offset(), cpu_cur.dtype)
        meta_t = (tuple(tpu_cur.shape), tpu_cur.stride(), tpu_cur.storage_offset(), tpu_cur.dtype)
        if meta_c != meta_t:
            fail(f"metadata differs after '{step_desc}': cpu {meta_c} vs tpu {meta_t}")
        aliases_c = cpu_cur.untyped_storage().data_ptr() == cpu_base.untyped_storage().data_ptr()
        aliases_t = tpu_cur.untyped_storage().data_ptr() == tpu_base.untyped_storage().data_ptr()
        if aliases_c != aliases_t:
            fail(f"aliasing of the base differs after '{step_desc}': "
                 f"cpu {aliases_c} vs tpu {aliases_t}")

    got_base = tpu_base.cpu()
    if not same(cpu_base, got_base):
        fail(f"base differs:\ncpu {cpu_base}\ntpu {got_base}")
    got_cur = tpu_cur.cpu()
    if not same(cpu_cur, got_cur):
        fail(f"current view differs:\ncpu {cpu_cur}\ntpu {got_cur}")
    return log


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_random_view_sequence(seed):
    run_sequence(seed)


def test_generator_covers_all_steps():
    """Sanity check of the generator itself (CPU only): every kind of step occurs."""
    seen = set()
    for seed in range(N_SEEDS):
        rng = random.Random(seed)
        _, c, _ = make_base_cpu_only(rng)
        base = c
        for _ in range(6):
            gen = pick_step(rng)
            try:
                _, fn = gen(rng, c, base)
                c = fn(c, base, "cpu")
            except (Skip, RuntimeError, IndexError, ValueError):
                continue
            seen.add(gen.__name__)
    all_steps = {g.__name__ for g in VIEW_STEPS + WRITE_STEPS + OTHER_STEPS}
    assert all_steps <= seen, all_steps - seen


def make_base_cpu_only(rng):
    dtypes, weights = zip(*DTYPES)
    dtype = rng.choices(dtypes, weights)[0]
    shape = rng.choice(BASE_SHAPES)
    return None, random_data(rng, shape, dtype), None


@pytest.mark.parametrize("mode", ["debug", "defer_and_fuse"])
@pytest.mark.parametrize("seed", range(0, N_SEEDS, 4))
def test_random_view_sequence_other_eager_modes(seed, mode):
    """The same sequences under the non-default eager modes (programs are cached)."""
    import torch_tpu

    with torch_tpu.eager_mode(mode):
        run_sequence(seed)


# ----------------------------------------------------------------------------
# view(dtype) between every pair of same-size dtypes, including the bool and
# complex64 reinterpretations the random sequences leave out.

SAME_SIZE_PAIRS = [
    (torch.float32, torch.int32), (torch.int32, torch.float32),
    (torch.float64, torch.int64), (torch.int64, torch.float64),
    (torch.bfloat16, torch.int16), (torch.float16, torch.bfloat16), (torch.int16, torch.float16),
    (torch.int8, torch.uint8), (torch.uint8, torch.int8),
    (torch.bool, torch.uint8), (torch.bool, torch.int8), (torch.uint8, torch.bool),
    (torch.complex64, torch.float64), (torch.complex64, torch.int64),
    (torch.float64, torch.complex64),
]


@pytest.mark.parametrize("src_dtype,dst_dtype", SAME_SIZE_PAIRS,
                         ids=[f"{a}->{b}".replace("torch.", "") for a, b in SAME_SIZE_PAIRS])
def test_view_dtype_same_size(src_dtype, dst_dtype):
    if src_dtype == torch.bool:
        cpu = torch.arange(12).reshape(3, 4) % 3 == 0
    elif dst_dtype == torch.bool:
        cpu = (torch.arange(12).reshape(3, 4) % 2).to(src_dtype)  # only 0/1 bytes
    else:
        cpu = random_data(random.Random(7), (3, 4), src_dtype)
    tpu = cpu.to(DEV)
    assert same(cpu.view(dst_dtype), tpu.view(dst_dtype).cpu())
    # through a non-contiguous view, and writing through the reinterpreted view
    assert same(cpu.t().view(dst_dtype), tpu.t().view(dst_dtype).cpu())
    v_c, v_t = cpu[:, 1::2].view(dst_dtype), tpu[:, 1::2].view(dst_dtype)
    v_c.fill_(1)
    v_t.fill_(1)
    assert same(cpu, tpu.cpu())


def test_complex_real_imag_views():
    cpu = torch.complex(torch.arange(6.0), -torch.arange(6.0)).reshape(2, 3)
    tpu = cpu.to(DEV)
    assert same(torch.view_as_real(cpu), torch.view_as_real(tpu).cpu())
    assert same(cpu.real, tpu.real.cpu())
    assert same(cpu.imag, tpu.imag.cpu())
    tpu.imag.fill_(5.0)
    cpu.imag.fill_(5.0)
    assert same(cpu, tpu.cpu())
