// The names a boxed kernel reports for the overload it serves, worked out
// once per overload: boxed kernels run on every call, and building these
// strings from the schema each time is measurable next to a small launch.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <string>

namespace torch_tpu::ops {

struct OverloadNames {
  std::string name;     // "add_" for aten::add_.Tensor
  std::string op_name;  // "aten::add_.Tensor", for messages
};

const OverloadNames& overload_names(const c10::OperatorHandle& op);

}  // namespace torch_tpu::ops
