// User kernels (torch_tpu.kernels): a StableHLO function someone else wrote
// (lowered from JAX or Pallas, or written by hand) run as a tpu op.
//
// Python lowers the function once per signature and defines it here; a call
// then reads its arguments through their views and writes new tensors, in
// one TensorProgram like any native op, so Strict runs it as one program,
// DeferAndFuse fuses it into the open region and torch.compile's graphs
// replay it. The kernel's text is emitted once per module however many
// calls use it (hlo::Builder::call).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch_tpu::ops {

struct KernelResult {
  c10::ScalarType dtype;
  std::vector<int64_t> sizes;
};

// Defines a lowered kernel and returns its handle. `callee` names the entry
// function of `functions` (private functions whose every name the kernel
// owns: it includes a hash of the text, so a changed kernel never meets a
// program of the old one in a cache). `params` are the argument types the
// entry takes, in order. The same callee defined again returns the same
// handle. `name` is the kernel's name for errors.
int64_t define_user_kernel(const std::string& name, const std::string& callee,
                           const std::string& functions, const std::vector<KernelResult>& params,
                           const std::vector<KernelResult>& results);

// Runs kernel `handle` on tpu tensors of exactly its parameter types (any
// view of them) and returns its results as new contiguous tpu tensors.
// Raises (naming the kernel) on another device, dtype or shape.
std::vector<at::Tensor> run_user_kernel(int64_t handle, const std::vector<at::Tensor>& args);

}  // namespace torch_tpu::ops
