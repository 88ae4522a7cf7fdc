"""Eager execution modes: strict (default), debug, defer_and_fuse."""

import contextlib

from . import _C


def set_eager_mode(mode: str) -> None:
    """Sets the process-wide eager mode ('strict', 'debug' or 'defer_and_fuse')."""
    _C._set_eager_mode(mode)


def get_eager_mode() -> str:
    """The mode in force for the calling thread."""
    return _C._get_eager_mode()


@contextlib.contextmanager
def eager_mode(mode: str):
    """Runs the block in `mode` on this thread, and in the work PyTorch
    carries over from it: autograd's backward pass (which runs tpu kernels on
    its own device thread) and `torch.jit.fork` tasks."""
    _C._push_eager_mode(mode)
    try:
        yield
    finally:
        _C._pop_eager_mode()


def _in_one_region(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, its tpu ops run as one program in Strict mode
    (one launch; one compile per new shape instead of one per op): the
    Python twin of csrc/ops/strict_ops_in_one_region.h. Its intermediates
    die with `fn`'s frame before the region runs, so only what it returns
    is written to memory. Debug and DeferAndFuse run it as any code."""
    if _C._get_eager_mode() != "strict":
        return fn(*args, **kwargs)
    _C._push_eager_mode("defer_and_fuse")
    try:
        result = fn(*args, **kwargs)
    except BaseException:
        try:
            _C._pop_eager_mode()
        except Exception:
            pass  # fn's own exception is the one to report
        raise
    _C._pop_eager_mode()  # runs the region (and raises what running it raises)
    return result
