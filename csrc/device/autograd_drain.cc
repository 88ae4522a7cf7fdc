#include "device/autograd_drain.h"

#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/autograd.h>

namespace torch_tpu {

void drain_autograd_device_threads(int device_count) {
  for (int i = 0; i < device_count; ++i) {
    const auto options = at::TensorOptions().device(
        c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(i)));
    // A view's backward and a leaf's grad accumulation launch no program.
    at::Tensor leaf = at::zeros({}, options).requires_grad_(true);
    torch::autograd::backward({leaf.view(at::IntArrayRef{})}, {at::ones({}, options)},
                              /*retain_graph=*/false,
                              /*create_graph=*/false, {leaf});
  }
}

}  // namespace torch_tpu
