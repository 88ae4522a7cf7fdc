"""Out-of-range indices in Strict mode (the default): each indexing program
checks its indices on the device, without a sync, and the first bad index
is raised as IndexError naming the op at the next host read or synchronize,
once; in the meantime a read clamps coordinates per dimension and a write
out of range is dropped, so no other row is ever read or written. Debug mode
raises at the op itself, in backward too."""

import pytest
import torch
import torch.nn.functional as F

import torch_tpu

DEV = "tpu"


def metrics():
    return torch_tpu.debug.metrics()


@pytest.fixture(autouse=True)
def clean_device():
    # Leave no unreported finding behind for the next test.
    try:
        torch.tpu.synchronize()
    except (IndexError, RuntimeError):
        pass
    yield
    try:
        torch.tpu.synchronize()
    except (IndexError, RuntimeError):
        pass


def weights():
    return torch.arange(12.0).view(4, 3)


# (name, op, runs the op on a device, valid-part check)
def run_embedding(dev):
    return F.embedding(torch.tensor([1, 100], device=dev), weights().to(dev))


def run_index_select(dev):
    return weights().to(dev).index_select(0, torch.tensor([2, 7], device=dev))


def run_gather(dev):
    return weights().to(dev).gather(1, torch.tensor([[0], [7], [1], [2]], device=dev))


def run_advanced_read(dev):
    return weights().to(dev)[torch.tensor([0, 4], device=dev)]


def run_advanced_negative(dev):
    return weights().to(dev)[:, torch.tensor([-1, -4], device=dev)]


def run_take(dev):
    return weights().to(dev).take(torch.tensor([0, 12], device=dev))


def run_scatter(dev):
    w = weights().to(dev)
    w.scatter_(1, torch.tensor([[5], [0], [1], [2]], device=dev),
               torch.full((4, 1), -1.0, device=dev))
    return w


def run_scatter_add(dev):
    w = weights().to(dev)
    return w.scatter_add(1, torch.tensor([[3], [0], [1], [2]], device=dev),
                         torch.full((4, 1), 100.0, device=dev))


def run_scatter_reduce(dev):
    w = weights().to(dev)
    return w.scatter_reduce(1, torch.tensor([[0], [9], [1], [2]], device=dev),
                            torch.full((4, 1), 100.0, device=dev), "amax")


def run_index_add(dev):
    w = weights().to(dev)
    return w.index_add(0, torch.tensor([1, 4], device=dev), torch.ones(2, 3, device=dev))


def run_index_put(dev):
    w = weights().to(dev)
    w.index_put_((torch.tensor([0, 1], device=dev), torch.tensor([4, 0], device=dev)),
                 torch.tensor([-5.0, -6.0], device=dev))
    return w


def run_setitem(dev):
    w = weights().to(dev)
    w[torch.tensor([5, 2], device=dev)] = -1.0
    return w


def run_put(dev):
    w = weights().to(dev)
    w.put_(torch.tensor([13, 0], device=dev), torch.tensor([-1.0, -2.0], device=dev))
    return w


def run_nll_loss(dev):
    x = torch.log_softmax(weights(), 1).to(dev)
    return F.nll_loss(x, torch.tensor([0, 1, 3, 2], device=dev), reduction="none")


def run_cross_entropy(dev):
    return F.cross_entropy(weights().to(dev), torch.tensor([0, -3, 1, 2], device=dev))


CASES = {
    "embedding": (run_embedding, "embedding", 100),
    "index_select": (run_index_select, "index_select", 7),
    "gather": (run_gather, "gather", 7),
    "advanced_read": (run_advanced_read, "index", 4),
    "advanced_negative": (run_advanced_negative, "index", -4),
    "take": (run_take, "take", 12),
    "scatter_": (run_scatter, "scatter", 5),
    "scatter_add": (run_scatter_add, "scatter_add", 3),
    "scatter_reduce": (run_scatter_reduce, "scatter_reduce", 9),
    "index_add": (run_index_add, "index_add", 4),
    "index_put_": (run_index_put, "index_put_", 4),
    "setitem": (run_setitem, "index_put_", 5),
    "put_": (run_put, "put_", 13),
    "nll_loss": (run_nll_loss, "nll_loss", 3),
    "cross_entropy": (run_cross_entropy, "nll_loss", -3),
}

# What each bad call may return before its error is raised: reads clamp
# per row/column, writes skip the bad element. The expected values are
# the same call on CPU with the bad index replaced by the clamped one (for
# reads) or the bad element removed (for writes).
EXPECTED = {
    "embedding": lambda: F.embedding(torch.tensor([1, 3]), weights()),
    "index_select": lambda: weights().index_select(0, torch.tensor([2, 3])),
    "gather": lambda: weights().gather(1, torch.tensor([[0], [2], [1], [2]])),
    "advanced_read": lambda: weights()[torch.tensor([0, 3])],
    "take": lambda: weights().take(torch.tensor([0, 11])),
    "scatter_": lambda: _scatter_rows(),
    "scatter_add": lambda: _rows_added(),
    "index_add": lambda: weights().index_add(0, torch.tensor([1]), torch.ones(1, 3)),
    "index_put_": lambda: _put_pairs(),
    "setitem": lambda: _setitem_valid(),
    "put_": lambda: weights().put_(torch.tensor([0]), torch.tensor([-2.0])),
}


def _scatter_rows():
    w = weights()
    w[1, 0], w[2, 1], w[3, 2] = -1.0, -1.0, -1.0
    return w


def _rows_added():
    w = weights()
    w[1, 0] += 100
    w[2, 1] += 100
    w[3, 2] += 100
    return w


def _put_pairs():
    w = weights()
    w[1, 0] = -6.0
    return w


def _setitem_valid():
    w = weights()
    w[2] = -1.0
    return w


@pytest.mark.parametrize("name", sorted(CASES))
def test_strict_raises_at_next_host_read_once(name):
    run, op, bad = CASES[name]
    # The exception class is CPU's: IndexError for most ops, RuntimeError
    # for gather, the scatter family and index_add.
    with pytest.raises((IndexError, RuntimeError)) as cpu_error:
        run("cpu")
    d2h_before = metrics()["d2h_transfers"]
    out = run(DEV)  # launched: no error yet, and no device-to-host sync
    assert metrics()["d2h_transfers"] == d2h_before, "the op synced to check its indices"
    with pytest.raises(cpu_error.type) as tpu_error:
        out.cpu()
    message = str(tpu_error.value)
    assert message.startswith(op + ":"), message
    assert f"index {bad} is out of bounds" in message, message
    assert cpu_error.type is tpu_error.type
    # Raised once: the same tensor reads fine now, and the device is usable.
    out.cpu()
    assert (torch.ones(2, device=DEV) + 1).tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_strict_bad_index_touches_no_other_element(name):
    run, _, _ = CASES[name]
    out = run(DEV)
    with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
        torch.tpu.synchronize()
    torch.testing.assert_close(out.cpu(), EXPECTED[name]())


@pytest.mark.parametrize("sync", ["cpu", "item", "tolist", "synchronize", "print", "bool"])
def test_every_host_read_reports(sync):
    w = weights().to(DEV)
    out = w.index_select(0, torch.tensor([9], device=DEV)).sum()
    with pytest.raises(IndexError, match="index_select: index 9"):
        if sync == "cpu":
            out.cpu()
        elif sync == "item":
            out.item()
        elif sync == "tolist":
            out.tolist()
        elif sync == "synchronize":
            torch.tpu.synchronize()
        elif sync == "print":
            repr(out)
        else:
            bool(out > 0)


def test_first_bad_index_is_reported_and_later_ones_dropped():
    w = weights().to(DEV)
    a = w.index_select(0, torch.tensor([0, 6], device=DEV))
    b = w.take(torch.tensor([80], device=DEV))
    with pytest.raises(IndexError, match="index_select: index 6"):
        b.cpu()
    a.cpu()
    torch.tpu.synchronize()


def test_valid_indices_report_nothing_and_reuse_one_executable():
    w = weights().to(DEV)
    w.index_select(0, torch.tensor([0, 1], device=DEV)).cpu()
    compiles = metrics()["compiles"]
    for i in range(4):
        out = w.index_select(0, torch.tensor([i, 3 - i], device=DEV))
        torch.testing.assert_close(out.cpu(), weights().index_select(0, torch.tensor([i, 3 - i])))
    assert metrics()["compiles"] == compiles


def test_error_in_one_thread_reaches_the_next_host_read():
    import threading
    w = weights().to(DEV)
    results = []
    t = threading.Thread(target=lambda: results.append(w.index_select(0, torch.tensor([5], device=DEV))))
    t.start()
    t.join()
    with pytest.raises(IndexError, match="index 5"):
        torch.tpu.synchronize()


def test_debug_raises_at_the_op():
    w = weights().to(DEV)
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(IndexError, match="index_select: index 7 is out of bounds for dimension 0 with size 4"):
            w.index_select(0, torch.tensor([1, 7], device=DEV))
        with pytest.raises(IndexError, match="nll_loss: index 3"):
            F.nll_loss(weights().to(DEV), torch.tensor([0, 1, 3, 2], device=DEV))
        # ignore_index is not out of range
        F.nll_loss(weights().to(DEV), torch.tensor([0, -100, 2, 2], device=DEV))


def test_debug_mode_reaches_backward():
    """The eager mode follows PyTorch's thread-local state into autograd's
    device thread, so Debug's checks run in backward too."""
    w = weights().to(DEV).requires_grad_()
    bad = torch.tensor([0, 9], device=DEV)

    class IndexInBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            ctx_modes.append(torch_tpu.get_eager_mode())
            return torch.zeros(4, 3, device=DEV).index_add(0, bad, g[:2])

    ctx_modes = []
    with torch_tpu.eager_mode("debug"):
        with pytest.raises(RuntimeError, match="index_add: index 9"):
            IndexInBackward.apply(w).sum().backward()
    assert ctx_modes == ["debug"]
    # Outside the block backward runs in Strict mode: the error waits for a sync.
    ctx_modes.clear()
    IndexInBackward.apply(w).sum().backward()
    assert ctx_modes == ["strict"]
    with pytest.raises(RuntimeError, match="index_add: index 9"):
        torch.tpu.synchronize()


def test_embedding_backward_in_debug_mode_checks_indices():
    w = weights().to(DEV).requires_grad_()
    idx = torch.tensor([[0, 3], [1, 2]], device=DEV)
    with torch_tpu.eager_mode("debug"):
        F.embedding(idx, w).sum().backward()
    expected = torch.zeros(4, 3)
    expected[[0, 1, 2, 3]] = 1.0
    torch.testing.assert_close(w.grad.cpu(), expected)
