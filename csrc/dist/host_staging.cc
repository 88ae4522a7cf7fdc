#include "dist/host_staging.h"

#include <c10/util/Exception.h>

namespace torch_tpu::dist {
namespace {

bool usable_as_is(const at::Tensor& tensor) {
  return tensor.device().is_cpu() && tensor.is_contiguous();
}

}  // namespace

void HostStaging::check_device(const at::Tensor& tensor) const {
  TORCH_CHECK(tensor.defined(), "tpu_dist ", op_, ": got an undefined tensor");
  auto type = tensor.device().type();
  TORCH_CHECK(type == c10::DeviceType::PrivateUse1 || type == c10::DeviceType::CPU, "tpu_dist ",
              op_, ": expected tpu or cpu tensors, got a tensor on ", tensor.device());
  TORCH_CHECK(!tensor.is_sparse(), "tpu_dist ", op_, ": sparse tensors are not supported");
}

at::Tensor HostStaging::input(const at::Tensor& tensor) {
  check_device(tensor);
  if (usable_as_is(tensor)) return tensor;
  // Not `to(kCPU, ..., Contiguous)`: for a CPU tensor that returns the
  // strided view itself.
  at::Tensor host = tensor.device().is_cpu() ? tensor : tensor.to(at::kCPU);
  return host.contiguous();
}

at::Tensor HostStaging::in_out(const at::Tensor& tensor) {
  at::Tensor host = input(tensor);
  if (!host.is_same(tensor)) written_.emplace_back(tensor, host);
  return host;
}

at::Tensor HostStaging::output(const at::Tensor& tensor) {
  check_device(tensor);
  if (usable_as_is(tensor)) return tensor;
  at::Tensor host = at::empty(tensor.sizes(), tensor.options().device(at::kCPU));
  written_.emplace_back(tensor, host);
  return host;
}

namespace {

// Stages each tensor of a list (or of a list of lists) the same way.
template <typename Stage>
std::vector<at::Tensor> each(const std::vector<at::Tensor>& tensors, Stage&& stage) {
  std::vector<at::Tensor> host;
  host.reserve(tensors.size());
  for (const auto& t : tensors) host.push_back(stage(t));
  return host;
}

template <typename Stage>
std::vector<std::vector<at::Tensor>> each(const std::vector<std::vector<at::Tensor>>& lists,
                                          Stage&& stage) {
  std::vector<std::vector<at::Tensor>> host;
  host.reserve(lists.size());
  for (const auto& list : lists) host.push_back(each(list, stage));
  return host;
}

}  // namespace

std::vector<at::Tensor> HostStaging::inputs(const std::vector<at::Tensor>& tensors) {
  return each(tensors, [this](const at::Tensor& t) { return input(t); });
}

std::vector<at::Tensor> HostStaging::in_outs(const std::vector<at::Tensor>& tensors) {
  return each(tensors, [this](const at::Tensor& t) { return in_out(t); });
}

std::vector<at::Tensor> HostStaging::outputs(const std::vector<at::Tensor>& tensors) {
  return each(tensors, [this](const at::Tensor& t) { return output(t); });
}

std::vector<std::vector<at::Tensor>> HostStaging::outputs(
    const std::vector<std::vector<at::Tensor>>& lists) {
  return each(lists, [this](const at::Tensor& t) { return output(t); });
}

std::vector<std::vector<at::Tensor>> HostStaging::inputs(
    const std::vector<std::vector<at::Tensor>>& lists) {
  return each(lists, [this](const at::Tensor& t) { return input(t); });
}

std::function<void()> HostStaging::take_write_back() {
  return [written = std::move(written_)] {
    for (const auto& [caller, host] : written) caller.copy_(host);
  };
}

}  // namespace torch_tpu::dist
