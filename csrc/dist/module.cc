// torch_tpu._dist: the Python side of the tpu_dist backend. A module of its
// own because it must share PyTorch's pybind11 (its c10d Backend type), which
// torch_tpu._C does not use.
#include <torch/csrc/utils/pybind.h>

#include "dist/tpu_dist_backend.h"

PYBIND11_MODULE(_dist, m) {
  m.doc() = "The tpu_dist c10d backend (collectives on tpu tensors, staged through Gloo).";
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Backend>& engine, int rank,
         int size) -> c10::intrusive_ptr<c10d::Backend> {
        return c10::make_intrusive<torch_tpu::dist::TpuDistBackend>(engine, rank, size);
      },
      pybind11::arg("engine"), pybind11::arg("rank"), pybind11::arg("size"),
      "A tpu_dist backend whose collectives run on `engine` (a Gloo backend of the same group).");
}
