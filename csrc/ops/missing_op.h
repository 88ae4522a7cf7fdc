// What happens to an operator with no tpu lowering: NotImplementedError
// naming it, or, with TORCH_TPU_CPU_FALLBACK=1, a run on the CPU (warned
// once per operator and counted in torch_tpu.debug.metrics()).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>

namespace torch_tpu::ops {

void missing_op(const c10::OperatorHandle& op, torch::jit::Stack* stack);
bool cpu_fallback_enabled();
void set_cpu_fallback_enabled(bool enabled);
// Operator name -> number of CPU fallback runs.
std::map<std::string, int64_t> fallback_counts();
// Zeroes the counts (torch_tpu.debug.reset_metrics); the once-per-operator
// warning is not repeated.
void reset_fallback_counts();

}  // namespace torch_tpu::ops
