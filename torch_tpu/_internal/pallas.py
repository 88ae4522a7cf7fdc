"""What Inductor's Pallas TPU kernels import (`tpu_torch_pallas`).

Inductor compiles a graph on a "tpu" device to Pallas TPU kernels that it
exports with JAX for a TPU chip and runs through this module. torch_tpu
routes default-backend compiles of tpu graphs to its own backend instead
(torch_tpu/_inductor_routing.py), so Inductor reaches this import only when
that routing is off (TORCH_TPU_INDUCTOR_ROUTING=0) or Inductor is called
directly; the Pallas kernel path is not implemented, so the import says what
to use.
"""

raise NotImplementedError(
    "Inductor compiled a tpu graph to Pallas TPU kernels, which torch_tpu does not run: "
    "use torch.compile(model, backend='tpu') (one StableHLO program per graph, on every "
    "PJRT plugin), or leave TORCH_TPU_INDUCTOR_ROUTING unset so torch.compile's default "
    "backend hands tpu graphs to it")
