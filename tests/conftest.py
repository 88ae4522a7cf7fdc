import atexit
import glob
import os
import shutil
import site
import sys
import tempfile
import types
import unittest

import pytest

# The suite counts compiles (metrics["compiles"]): a disk cache warmed by an
# earlier run would hide them. Tests of the disk cache itself set
# TORCH_TPU_CACHE_DIR in the processes they start.
os.environ.setdefault("TORCH_TPU_CACHE_DIR", "")
# Likewise PyTorch's own compile caches (AOTAutograd's, which keeps the tpu
# backend's graphs, and Inductor's): one directory per test process, so an
# earlier run's entries are not loaded instead of traced. Tests of those
# caches give their processes directories of their own.
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="torch_tpu_tests_")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], True)

# torch.testing._internal (the OpInfo suites) imports `expecttest`, a
# test-only dependency the torch wheel does not pull in. Only its TestCase
# base class and ACCEPT flag are used at import time, so a stand-in is
# enough.
try:
    import expecttest  # noqa: F401
except ImportError:
    _stub = types.ModuleType("expecttest")
    _stub.TestCase = unittest.TestCase
    _stub.ACCEPT = False
    sys.modules["expecttest"] = _stub


def _site_roots():
    return list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path


def find_plugin(relative):
    for root in _site_roots():
        hits = glob.glob(os.path.join(root, relative))
        if hits:
            return hits[0]
    return None


CPU_PLUGIN = find_plugin("xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so")
NEWER_CPU_PLUGIN = find_plugin("lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so")
PLUGINS = {"xla_cpu_pjrt-0.81": CPU_PLUGIN, "lammps_jax_cpu-0.115": NEWER_CPU_PLUGIN}


@pytest.fixture(params=sorted(PLUGINS))
def plugin_path(request):
    path = PLUGINS[request.param]
    if path is None:
        pytest.fail(f"plugin {request.param} is not installed (scripts/setup.sh installs it)")
    return path


@pytest.fixture(scope="module")
def cpu_fallback_off():
    """The CPU fallback off for a module's tests (a missing lowering must
    fail them), whatever TORCH_TPU_CPU_FALLBACK says; restored afterwards."""
    import torch_tpu

    c = torch_tpu._C
    prev = c._cpu_fallback_enabled()
    c._set_cpu_fallback(False)
    yield
    c._set_cpu_fallback(prev)
