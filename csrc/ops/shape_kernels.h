// Ordering, scans and structural ops (ops/shape_ops.cc), and ops composed of
// other tpu kernels (ops/composite_ops.cc).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>
#include <tuple>

namespace torch_tpu::ops {

// shape_ops.cc
std::tuple<at::Tensor&, at::Tensor&> sort_stable_out(const at::Tensor& self,
                                                     std::optional<bool> stable, int64_t dim,
                                                     bool descending, at::Tensor& values,
                                                     at::Tensor& indices);
std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, int64_t k, int64_t dim,
                                              bool largest, bool sorted, at::Tensor& values,
                                              at::Tensor& indices);
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                       at::Tensor& out);
at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                        at::Tensor& out);
// aten::_cummax_helper / _cummin_helper: ATen's cummax/cummin (and their
// out= and named-dim forms) size the outputs and call these.
void cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim);
void cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim);
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims);
at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims);
at::Tensor& eye_out(int64_t n, int64_t m, at::Tensor& out);
at::Tensor& eye_n_out(int64_t n, at::Tensor& out);
at::Tensor& tril_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out);
at::Tensor& triu_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out);

// composite_ops.cc
at::Tensor count_nonzero(const at::Tensor& self, at::IntArrayRef dims);
// torch.norm's out= forms (norm_except_dim, pairwise_distance reach them),
// all linalg.vector_norm.
at::Tensor& norm_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                     at::IntArrayRef dim, bool keepdim, at::Tensor& out);
at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                           at::IntArrayRef dim, bool keepdim, at::ScalarType dtype,
                           at::Tensor& out);
// glu: first half * sigmoid(second half) along dim.
at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out);
at::Tensor& glu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim,
                             at::Tensor& grad_input);
at::Tensor glu_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim);
// The gradient of Tensor.unfold(dim, size, step) (stft/istft's framing,
// im2col-style patching in Python).
at::Tensor unfold_backward(const at::Tensor& grad_in, at::IntArrayRef input_sizes, int64_t dim,
                           int64_t size, int64_t step);
at::Tensor& norm_scalar_out(const at::Tensor& self, const at::Scalar& p, at::Tensor& out);
at::Tensor& norm_scalar_opt_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                                      at::ScalarType dtype, at::Tensor& out);
at::Tensor trace(const at::Tensor& self);
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self);
at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                const at::Tensor& buffer);
at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                               double beta, at::Tensor& out);
at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                        const at::Tensor& target, int64_t reduction, double beta,
                                        at::Tensor& grad_input);
at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                      double delta);
at::Tensor huber_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, int64_t reduction, double delta);
at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction);
at::Tensor binary_cross_entropy_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                         const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight,
                                         int64_t reduction);
at::Tensor& reflection_pad_out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& out);
at::Tensor& reflection_pad_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                        at::IntArrayRef padding, at::Tensor& grad_input);
at::Tensor& replication_pad_out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& out);
at::Tensor& replication_pad_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                         at::IntArrayRef padding, at::Tensor& grad_input);
at::Tensor reflection_pad(const at::Tensor& self, at::IntArrayRef padding);
at::Tensor reflection_pad_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                   at::IntArrayRef padding);
at::Tensor replication_pad(const at::Tensor& self, at::IntArrayRef padding);
at::Tensor replication_pad_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                    at::IntArrayRef padding);
std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(const at::Tensor& self,
                                                      const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight,
                                                      int64_t reduction, int64_t ignore_index);
at::Tensor nll_loss2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, const std::optional<at::Tensor>& weight,
                               int64_t reduction, int64_t ignore_index,
                               const at::Tensor& total_weight);

// PReLU's two gradients, in prelu()'s broadcast shape (it sums the weight's).
std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(const at::Tensor& grad_output,
                                                         const at::Tensor& self,
                                                         const at::Tensor& weight);
at::Tensor channel_shuffle(const at::Tensor& self, int64_t groups);
at::Tensor rsub_tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor& rsub_tensor_out(const at::Tensor& self, const at::Tensor& other,
                            const at::Scalar& alpha, at::Tensor& out);
at::Tensor angle(const at::Tensor& self);
at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out);
at::Tensor renorm(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm);
at::Tensor& renorm_(at::Tensor& self, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm);
at::Tensor& renorm_out(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                       const at::Scalar& maxnorm, at::Tensor& out);
}  // namespace torch_tpu::ops
