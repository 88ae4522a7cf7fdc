// Python's << and >> (aten::__lshift__, __rshift__ and their in-place
// forms): the same computation as bitwise_left_shift/bitwise_right_shift,
// which lower through the elementwise table; ATen gives the operators their
// own CPU kernels, so the tpu needs these forwarding ones.
#include <ATen/ops/bitwise_left_shift.h>
#include <ATen/ops/bitwise_right_shift.h>

#include "ops/shift_operator_kernels.h"

namespace torch_tpu::ops {

at::Tensor lshift_tensor(const at::Tensor& self, const at::Tensor& other) {
  return at::bitwise_left_shift(self, other);
}
at::Tensor lshift_scalar(const at::Tensor& self, const at::Scalar& other) {
  return at::bitwise_left_shift(self, other);
}
at::Tensor& ilshift_tensor(at::Tensor& self, const at::Tensor& other) {
  return self.bitwise_left_shift_(other);
}
at::Tensor& ilshift_scalar(at::Tensor& self, const at::Scalar& other) {
  return self.bitwise_left_shift_(other);
}
at::Tensor rshift_tensor(const at::Tensor& self, const at::Tensor& other) {
  return at::bitwise_right_shift(self, other);
}
at::Tensor rshift_scalar(const at::Tensor& self, const at::Scalar& other) {
  return at::bitwise_right_shift(self, other);
}
at::Tensor& irshift_tensor(at::Tensor& self, const at::Tensor& other) {
  return self.bitwise_right_shift_(other);
}
at::Tensor& irshift_scalar(at::Tensor& self, const at::Scalar& other) {
  return self.bitwise_right_shift_(other);
}

}  // namespace torch_tpu::ops
