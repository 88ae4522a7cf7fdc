// Running PyTorch's own CPU kernels on tpu tensors, for the operators whose
// CPU kernels only call ATen operators (checked in PyTorch's source, op by
// op): the kernel is picked by a CPU dispatch key, and every operator it
// calls dispatches on the tensors, so the work runs on tpu. Used for nested
// and sparse tensors, whose kernels mostly rearrange member tensors.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/ArrayRef.h>
#include <torch/library.h>

namespace torch_tpu::ops {

template <c10::DispatchKey key>
void run_kernel_of(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  op.redispatchBoxed(c10::DispatchKeySet(key), stack);
}

// Registers each operator in `names` to run its `key` kernel.
template <c10::DispatchKey key>
void reuse_kernels_of(torch::Library& m, c10::ArrayRef<const char*> names) {
  for (const char* name : names) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&run_kernel_of<key>>());
  }
}

}  // namespace torch_tpu::ops
