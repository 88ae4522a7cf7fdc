// Host staging of a collective's tensors for a host engine (Gloo).
//
// The engine only sees contiguous CPU tensors: Gloo itself reduces the wrong
// elements of a strided CPU view, so even CPU inputs that are not contiguous
// go through a contiguous copy. Tensors the collective writes are written
// back into the caller's tensors (through their views) when it finishes.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <utility>
#include <vector>

namespace torch_tpu::dist {

class HostStaging {
 public:
  explicit HostStaging(const char* op) : op_(op) {}

  // A tensor the collective reads only.
  at::Tensor input(const at::Tensor& tensor);
  // A tensor the collective reads and writes (allreduce, broadcast).
  at::Tensor in_out(const at::Tensor& tensor);
  // A tensor the collective writes only: a host buffer, nothing copied over.
  at::Tensor output(const at::Tensor& tensor);

  std::vector<at::Tensor> inputs(const std::vector<at::Tensor>& tensors);
  std::vector<at::Tensor> in_outs(const std::vector<at::Tensor>& tensors);
  std::vector<at::Tensor> outputs(const std::vector<at::Tensor>& tensors);
  std::vector<std::vector<at::Tensor>> outputs(const std::vector<std::vector<at::Tensor>>& lists);
  std::vector<std::vector<at::Tensor>> inputs(const std::vector<std::vector<at::Tensor>>& lists);

  // Copies every written host tensor back into its caller's tensor. Taken
  // once, when the collective has been handed to the engine.
  std::function<void()> take_write_back();

 private:
  void check_device(const at::Tensor& tensor) const;

  const char* op_;
  // (caller's tensor, host tensor the engine writes)
  std::vector<std::pair<at::Tensor, at::Tensor>> written_;
};

}  // namespace torch_tpu::dist
