// Weight normalization, w = v * (g / ||v||) with the norm taken over every
// dim of v but `dim`, and its backward:
//   grad_g = sum(grad_w * v) / ||v||
//   grad_v = (g / ||v||) * (grad_w - v * sum(grad_w * v) / ||v||^2)
// (sums over the same dims as the norm). Half and bfloat16 are computed in
// float, as CPU's kernel does, and the norms are kept in float there too.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/WrapDimUtils.h>

#include <vector>

#include "ops/weight_norm_kernels.h"

namespace torch_tpu::ops {
namespace {

std::vector<int64_t> dims_except(const at::Tensor& v, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < v.dim(); ++d) {
    if (d != dim) dims.push_back(d);
  }
  return dims;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> weight_norm_interface(const at::Tensor& v, const at::Tensor& g,
                                                         int64_t dim) {
  TORCH_CHECK(v.device() == g.device(), "weight_norm: v and g must be on the same device");
  dim = at::maybe_wrap_dim(dim, v.dim());
  const at::ScalarType acc = at::toOpMathType(v.scalar_type());
  const at::Tensor v_acc = v.to(acc);
  const at::Tensor norms = v_acc.pow(2).sum(dims_except(v, dim), /*keepdim=*/true).sqrt();
  const at::Tensor w = (v_acc * (g.to(acc) / norms)).to(v.scalar_type());
  return {w, norms.reshape(g.sizes())};
}

std::tuple<at::Tensor, at::Tensor> weight_norm_interface_backward(const at::Tensor& grad_w,
                                                                  const at::Tensor& saved_v,
                                                                  const at::Tensor& saved_g,
                                                                  const at::Tensor& saved_norms,
                                                                  int64_t dim) {
  dim = at::maybe_wrap_dim(dim, saved_v.dim());
  const at::ScalarType acc = at::toOpMathType(saved_v.scalar_type());
  const at::Tensor v = saved_v.to(acc), g = saved_g.to(acc), gw = grad_w.to(acc);
  std::vector<int64_t> keep_shape(saved_v.dim(), 1);
  keep_shape[dim] = saved_v.size(dim);
  const at::Tensor norms = saved_norms.to(acc).reshape(keep_shape);
  const at::Tensor dot = (gw * v).sum(dims_except(saved_v, dim), /*keepdim=*/true);
  const at::Tensor grad_g = (dot / norms).reshape(saved_g.sizes()).to(saved_g.scalar_type());
  const at::Tensor grad_v = ((g.reshape(keep_shape) / norms) * (gw - v * (dot / (norms * norms))))
                                .to(saved_v.scalar_type());
  return {grad_v, grad_g};
}

}  // namespace torch_tpu::ops
