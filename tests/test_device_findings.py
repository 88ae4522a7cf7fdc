"""Errors CPU raises from the data rather than from shapes or dtypes, beyond
out-of-range indices (tests/test_index_bounds.py): integer division by zero
and masked_scatter_ with too few source elements, and the exception class of
index_copy/index_fill's bad indices. Strict mode finds them on the device and
raises at the next host read, once; a scalar divisor of 0 and Debug mode
raise at the op, as CPU does."""

import pytest
import torch

import torch_tpu

DEV = "tpu"


@pytest.fixture(autouse=True)
def clean_device():
    # Leave no unreported finding behind for the next test.
    for _ in range(2):
        try:
            torch.tpu.synchronize()
        except (IndexError, RuntimeError):
            pass
    yield
    for _ in range(2):
        try:
            torch.tpu.synchronize()
        except (IndexError, RuntimeError):
            pass


INT_DIVISIONS = {
    "floor_divide": lambda a, b: a // b,
    "remainder": lambda a, b: a % b,
    "fmod": torch.fmod,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "floor_divide_inplace": lambda a, b: a.clone().floor_divide_(b),
    "remainder_out": lambda a, b: torch.remainder(a, b, out=torch.empty_like(a)),
}


def cpu_error(fn, *args):
    with pytest.raises(RuntimeError) as info:
        fn(*args)
    return str(info.value)


@pytest.mark.parametrize("name", sorted(INT_DIVISIONS))
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_integer_division_by_zero_tensor_raises_at_next_read(name, dtype):
    fn = INT_DIVISIONS[name]
    a = torch.tensor([7, 8, 9], dtype=dtype)
    b = torch.tensor([2, 0, 3], dtype=dtype)
    assert "ZeroDivisionError" in cpu_error(fn, a, b)
    r = fn(a.to(DEV), b.to(DEV))  # returns at once: no sync at the op
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        r.cpu()
    # Raised once; the device stays usable and later results are right.
    torch.tpu.synchronize()
    ok = torch.tensor([2, 1, 3], dtype=dtype)
    torch.testing.assert_close(fn(a.to(DEV), ok.to(DEV)).cpu(), fn(a, ok))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "div_trunc", "div_floor"])
def test_integer_division_by_zero_scalar_raises_at_the_op(name):
    fn = INT_DIVISIONS[name]
    a = torch.tensor([7, 8, 9])
    assert "ZeroDivisionError" in cpu_error(fn, a, 0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a.to(DEV), 0)
    torch.testing.assert_close(fn(a.to(DEV), 4).cpu(), fn(a, 4))


def test_integer_division_by_zero_broadcast_and_zero_dim_divisor():
    a = torch.arange(6).view(2, 3)
    b = torch.tensor(0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        (a.to(DEV) // b.to(DEV)).cpu()
    col = torch.tensor([[1], [0]])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.remainder(a.to(DEV), col.to(DEV)).sum().item()


def test_float_division_by_zero_is_not_an_error():
    a = torch.tensor([1.0, -1.0, 0.0])
    b = torch.zeros(3)
    torch.testing.assert_close((a.to(DEV) // b.to(DEV)).cpu(), a // b, equal_nan=True)
    # int tensor with a float divisor computes in float: no error either
    torch.testing.assert_close((torch.tensor([3]).to(DEV) / 0).cpu(), torch.tensor([3]) / 0)


def test_integer_division_by_zero_in_debug_mode_raises_at_the_op():
    a = torch.tensor([7, 8]).to(DEV)
    b = torch.tensor([0, 1]).to(DEV)
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            a // b
    torch.tpu.synchronize()  # nothing left to raise


def test_masked_scatter_too_few_source_elements():
    self = torch.zeros(2, 3)
    mask = torch.ones(2, 3, dtype=torch.bool)
    src = torch.ones(4)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        self.clone().masked_scatter_(mask, src)
    t = self.to(DEV)
    t.masked_scatter_(mask.to(DEV), src.to(DEV))  # no sync at the op
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        t.cpu()
    # enough elements: no error, CPU's values
    m = torch.tensor([[True, False, True], [False, True, False]])
    torch.testing.assert_close(
        self.to(DEV).masked_scatter_(m.to(DEV), src.to(DEV)).cpu(),
        self.clone().masked_scatter_(m, src))


@pytest.mark.parametrize("mode", ["strict", "debug"])
def test_index_copy_and_index_fill_raise_index_error(mode):
    x = torch.zeros(3, 2)
    bad = torch.tensor([5])
    for fn in (lambda t, i: torch.index_copy(t, 0, i, torch.ones(1, 2, device=t.device)),
               lambda t, i: t.clone().index_fill_(0, i, 1.0)):
        with pytest.raises(IndexError):
            fn(x, bad)
        with torch_tpu.eager_mode(mode):
            with pytest.raises(IndexError, match="out of bounds"):
                fn(x.to(DEV), bad.to(DEV)).cpu()
    # index_add keeps CPU's RuntimeError
    with pytest.raises(RuntimeError, match="out of bounds") as info:
        with torch_tpu.eager_mode(mode):
            torch.index_add(x.to(DEV), 0, bad.to(DEV), torch.ones(1, 2, device=DEV)).cpu()
    assert not isinstance(info.value, IndexError)


@pytest.mark.parametrize("probs,message", [
    ([0.5, -1.0], "element < 0"),
    ([float("nan"), 1.0], "element < 0"),
    ([float("inf"), 1.0], "element < 0"),
    ([0.0, 0.0], "sum of probabilities <= 0"),
    ([[0.2, 0.8], [0.0, 0.0]], "sum of probabilities <= 0"),
])
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_invalid_distribution(probs, message, replacement):
    p = torch.tensor(probs)
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(")):
        torch.multinomial(p, 1, replacement=replacement)
    r = torch.multinomial(p.to(DEV), 1, replacement=replacement)  # no sync at the op
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(")):
        r.cpu()
    # a valid distribution afterwards samples normally
    ok = torch.multinomial(torch.tensor([0.0, 1.0], device=DEV), 2, replacement=True)
    assert ok.cpu().tolist() == [1, 1]


@pytest.mark.parametrize("dim,index", [(1, [0, -1]), (0, [1]), (1, [])])
def test_index_fill_into_an_expanded_view_writes_like_cpu(dim, index):
    results = []
    for dev in ("cpu", DEV):
        base = torch.zeros(3, device=dev)
        view = base.expand(2, 3)
        # (CPU warns once per process that this is deprecated; so does tpu)
        view.index_fill_(dim, torch.tensor(index, dtype=torch.long, device=dev), 5.0)
        view.index_fill_(dim, torch.tensor(index, dtype=torch.long, device=dev),
                         torch.tensor(5.0, device=dev))
        results.append(base.cpu())
    torch.testing.assert_close(results[1], results[0])



# ---------------------------------------------------------------------------
# torch._assert_async: a data check that does not stop the host
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("value,message", [
    (torch.tensor(False), None), (torch.tensor(0.0), "x must be positive"),
    (torch.tensor(0, dtype=torch.int8), None), (torch.tensor([0j]), "complex zero"),
])
def test_assert_async_raises_cpus_error_at_the_next_read(value, message):
    call = (lambda t: torch._assert_async(t)) if message is None else (
        lambda t: torch._assert_async(t, message))
    expected = message or "Expected Tensor with single nonzero value, but got zero"
    with pytest.raises(RuntimeError, match=expected):
        call(value)  # CPU raises at the call
    call(value.to(DEV))  # tpu: launched, nothing read yet
    with pytest.raises(RuntimeError, match=expected):
        torch.tpu.synchronize()
    x = torch.ones(3, device=DEV)
    assert x.sum().item() == 3.0  # raised once; the device goes on
    with torch_tpu.eager_mode("debug"), pytest.raises(RuntimeError, match=expected):
        call(value.to(DEV))


def test_assert_async_passes_nonzero_and_nan_and_checks_the_shape_like_cpu():
    for value in (torch.tensor(True), torch.tensor(3), torch.tensor(float("nan")), torch.tensor([2.0])):
        torch._assert_async(value)  # CPU: no error
        torch._assert_async(value.to(DEV), "never raised")
    torch.tpu.synchronize()
    for value in (torch.tensor([1, 1]), torch.tensor([])):
        with pytest.raises(RuntimeError, match="Boolean value of Tensor with"):
            torch._assert_async(value.to(DEV))


def test_exported_program_with_a_data_dependent_assert_runs_on_tpu():
    class Positive(torch.nn.Module):
        def forward(self, x):
            torch._assert_async(x.min() > 0, "inputs must be positive")
            return x.log()

    ep = torch.export.export(Positive(), (torch.rand(3) + 1,))
    assert "aten._assert_async.msg" in {str(n.target) for n in ep.graph.nodes}
    module = ep.module()
    x = torch.rand(3) + 1
    assert torch.allclose(module(x.to(DEV)).cpu(), x.log())
    module(torch.tensor([-1.0, 2.0, 3.0], device=DEV))
    with pytest.raises(RuntimeError, match="inputs must be positive"):
        torch.tpu.synchronize()
