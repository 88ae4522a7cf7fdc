"""torch_tpu: `torch.device("tpu")` as a native PyTorch device.

Every operation is lowered to StableHLO, compiled by XLA and run through the
PJRT C API, on whichever PJRT plugin is present (libtpu, the XLA CUDA plugin,
or the XLA CPU plugin by default). `import torch` is enough: this package is
loaded through PyTorch's `torch.backends` entry point.
"""

import site
import sys


def _autoload():
    """Entry point PyTorch calls during `import torch` (group torch.backends).

    Importing this package already did the work; the function only has to
    exist. TORCH_DEVICE_BACKEND_AUTOLOAD=0 makes PyTorch skip it.
    """


# `import torch` inside this import may call back into _autoload above while
# this module is still initializing (when the user imports torch_tpu first).
import torch  # noqa: E402

# The rename must come before anything asks PyTorch about the backend's name.
if torch._C._get_privateuse1_backend_name() != "tpu":
    torch.utils.rename_privateuse1_backend("tpu")

from . import _C  # noqa: E402


def _package_roots():
    roots = []
    for path in list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path:
        if path and path not in roots:
            roots.append(path)
    return roots


_C._init(_package_roots())

from . import device_module  # noqa: E402
from . import debug  # noqa: E402
from . import cache  # noqa: E402
from . import _autograd_exit  # noqa: E402
from . import _transformer_fast_path  # noqa: E402, F401
from . import _attention  # noqa: E402, F401
from . import _inductor_routing  # noqa: E402
from . import distributed  # noqa: E402
from . import shape_buckets  # noqa: E402
from .modes import eager_mode, get_eager_mode, set_eager_mode  # noqa: E402
from .shape_buckets import set_shape_buckets  # noqa: E402

torch._register_device_module("tpu", device_module)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
)
# torch.autocast("tpu") without a dtype means bfloat16, the TPU's matmul type
# (the policy itself is registered in C++: csrc/device/autocast.cc).
torch.set_autocast_dtype("tpu", torch.bfloat16)
_autograd_exit.install()
_inductor_routing.install()

__all__ = ["device_module", "debug", "cache", "distributed", "eager_mode", "get_eager_mode", "set_eager_mode",
           "shape_buckets", "set_shape_buckets"]

