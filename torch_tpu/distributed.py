"""The `tpu_dist` c10d backend: torch.distributed on tpu tensors.

Registered at import for the devices "tpu" and "cpu", so that

    dist.init_process_group("tpu_dist")                       # tpu and cpu tensors
    dist.init_process_group(device_id=torch.device("tpu", i)) # tpu -> tpu_dist, cpu -> gloo
    init_device_mesh("tpu", (n,))                             # FSDP2, DTensor

all pick it for tpu tensors. On the CPU plugin every collective is staged
through host memory and run by a Gloo backend of the same group (PyTorch's
own CPU engine, over TCP), see csrc/dist/tpu_dist_backend.h.
"""

import torch.distributed as dist

BACKEND_NAME = "tpu_dist"


def _create_backend(backend_opts, backend_options):
    """c10d's extended creator: one Gloo engine over the group's store."""
    from torch.distributed import ProcessGroupGloo

    from . import _dist

    engine = ProcessGroupGloo(
        backend_opts.store, backend_opts.group_rank, backend_opts.group_size,
        backend_opts.timeout,
    )
    engine.options.global_ranks_in_group = backend_opts.global_ranks_in_group
    engine.options.group_name = backend_opts.group_id
    return _dist.create_backend(engine, backend_opts.group_rank, backend_opts.group_size)


def is_available() -> bool:
    """Whether this PyTorch has torch.distributed and Gloo (tpu_dist's engine)."""
    return dist.is_available() and dist.is_gloo_available()


def _register() -> None:
    if not is_available() or BACKEND_NAME.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(
        BACKEND_NAME, _create_backend, extended_api=True, devices=["tpu", "cpu"]
    )


_register()
