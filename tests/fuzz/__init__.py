"""Fuzzers that compare the tpu device with PyTorch on the CPU.

* differential.py: random short programs over ~100 ops (random shapes, dtypes,
  views and edge values), each op checked against the CPU on the same inputs;
  a failing program is shrunk to a short runnable reproducer.
* bad_input.py: generated invalid calls; tpu must raise the exception class
  the CPU raises, never crash or hang, and stay usable after every call.

Both run their programs in child processes so that a crash or a hang is found
and pinned to one program. known.py lists the bug classes that are known to
fail today; the pytest entries (test_*.py here) fail on anything else.
"""
