"""Lets autograd's tpu device threads let go of finished backward passes
before the interpreter shuts down.

`backward()` stashes a `contextvars.Context` (a Python object) in PyTorch's
thread-local state, and every autograd GraphTask keeps a copy of that state.
Autograd runs tpu backward kernels on its own device thread, which may drop
the last reference to a finished GraphTask just after `backward()` has
returned on the main thread. If the main thread has meanwhile started to
finalize the interpreter, that drop needs the GIL, CPython makes the thread
exit from inside a noexcept destructor, and the process dies at exit with
"terminate called without an active exception" (exit code 134).

At exit (atexit runs before finalization) one trivial backward pass goes
through each tpu device thread (csrc/device/autograd_drain.cc). A device
thread only takes new work after it has released the GraphTask of its
previous work, and this pass is made in C++ so that it holds no Python
object itself: once it completes, no tpu autograd thread holds one.
"""

import atexit

from . import _C


def _release_autograd_device_threads() -> None:
    if not _C._runtime_initialized() or _C._is_in_bad_fork():
        return
    _C._drain_autograd_device_threads(_C._device_count())


def install() -> None:
    atexit.register(_release_autograd_device_threads)
