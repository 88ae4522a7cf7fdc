"""What the training workers share: comparing a distributed model's
parameters with the CPU reference, and ending the process group."""

import torch.distributed as dist


def full(p):
    """A parameter's whole value (a DTensor's gathered from every rank)."""
    return p.full_tensor() if hasattr(p, "full_tensor") else p


def check_parameters(named_params, reference: dict, what: str, tol: float) -> None:
    """Raises when a parameter differs from the same-named CPU parameter by
    more than `tol`; prints "PASS <what> max_err=<e>" otherwise. Wrapper
    prefixes (DDP's "module.") are dropped from the names."""
    err = 0.0
    for name, p in named_params:
        name = name.replace("module.", "").replace("_fsdp_wrapped_module.", "")
        got = full(p.detach()).cpu()
        err = max(err, (got - reference[name].detach()).abs().max().item())
    if not err <= tol:
        raise AssertionError(f"{what}: parameters differ from CPU by {err}")
    print(f"PASS {what} max_err={err:.2e}", flush=True)


def finish() -> None:
    """Every rank is done before the group goes."""
    dist.barrier()
    dist.destroy_process_group()
