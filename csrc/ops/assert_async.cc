// torch._assert_async(cond[, msg]): a check of a device value that does not
// stop the host. CPU reads the value and raises at once; tpu computes the
// finding on the device and raises CPU's RuntimeError (the message, or
// CPU's default one) at the next host read or synchronize, as every device
// finding is raised, and at the call in Debug mode. torch.export and
// Dynamo put these in graphs for data-dependent checks.
#include <string>

#include "core/dtype_map.h"
#include "ops/device_findings.h"
#include "ops/kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

void assert_on_device(const at::Tensor& self, const std::string& message) {
  // CPU's is_nonzero checks, on the host: they depend on the shape only.
  TORCH_CHECK(self.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  TORCH_CHECK(self.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  TensorProgram program("_assert_async", "assert_async");
  program.input(self);
  program.report_findings(message.c_str(), IndexErrorClass::kRuntimeError);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    return std::vector<hlo::Value>{assertion_finding(b, in[0])};
  });
}

}  // namespace

void assert_async(const at::Tensor& self) {
  assert_on_device(self, "Expected Tensor with single nonzero value, but got zero");
}

void assert_async_msg(const at::Tensor& self, c10::string_view assert_msg) {
  assert_on_device(self, std::string(assert_msg));
}

}  // namespace torch_tpu::ops
