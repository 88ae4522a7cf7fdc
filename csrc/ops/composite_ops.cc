// Ops written as a few other tpu ops (each a cached program of its own):
// losses without a fused lowering yet, log_sigmoid, addmv, count_nonzero,
// PReLU's backward, channel_shuffle, angle, renorm, and reflection/replication padding (an
// index_select per padded dim, whose backward is the matching index_add). Registered through
// InOneRegion (ops/strict_ops_in_one_region.h), each call is one program in Strict mode too.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>

#include "ops/device_empty.h"
#include "ops/loss_reduction.h"
#include "ops/out_checks.h"
#include "ops/shape_kernels.h"

namespace torch_tpu::ops {
namespace {

// d(reduce(loss))/d(loss) times grad_output, for an elementwise loss.
at::Tensor reduce_grad(const at::Tensor& grad_output, const at::Tensor& self, int64_t reduction) {
  return ops::reduce_grad(grad_output, self.numel(), reduction);
}

// Source position along one padded dim of each output position.
at::Tensor pad_source_index(int64_t size, int64_t before, int64_t after, bool reflect,
                            const at::TensorOptions& options, const char* op) {
  if (reflect) {
    TORCH_CHECK(before < size && after < size, op, ": Padding size should be less than the ",
                "corresponding input dimension, but got: padding (", before, ", ", after,
                ") at dimension of input size ", size);
  } else {
    TORCH_CHECK(size > 0 || (before == 0 && after == 0), op, ": input has an empty dimension");
  }
  std::vector<int64_t> idx;
  for (int64_t o = -before; o < size + after; ++o) {
    int64_t i = o;
    if (reflect) {
      if (i < 0) i = -i;
      if (i >= size) i = 2 * (size - 1) - i;
    } else {
      i = std::min(std::max<int64_t>(i, 0), size - 1);
    }
    idx.push_back(i);
  }
  return at::tensor(idx, at::TensorOptions().dtype(at::kLong)).to(options.device());
}

at::Tensor pad_forward(const at::Tensor& self, at::IntArrayRef padding, bool reflect,
                       const char* op) {
  TORCH_CHECK(padding.size() % 2 == 0 && padding.size() / 2 <= static_cast<size_t>(self.dim()), op,
              ": padding size is invalid: ", padding);
  at::Tensor r = self;
  // padding lists (left, right) pairs from the last dim backwards.
  for (size_t i = 0; i < padding.size() / 2; ++i) {
    const int64_t dim = self.dim() - 1 - static_cast<int64_t>(i);
    r = r.index_select(dim, pad_source_index(self.size(dim), padding[2 * i], padding[2 * i + 1],
                                             reflect, self.options(), op));
  }
  return r;
}

at::Tensor pad_backward(const at::Tensor& grad_output, const at::Tensor& self,
                        at::IntArrayRef padding, bool reflect, const char* op) {
  at::Tensor g = grad_output;
  for (size_t i = padding.size() / 2; i-- > 0;) {
    const int64_t dim = self.dim() - 1 - static_cast<int64_t>(i);
    std::vector<int64_t> shape = g.sizes().vec();
    shape[dim] = self.size(dim);
    g = at::zeros(shape, g.options())
            .index_add_(dim,
                        pad_source_index(self.size(dim), padding[2 * i], padding[2 * i + 1],
                                         reflect, self.options(), op),
                        g);
  }
  return g;
}

}  // namespace

at::Tensor count_nonzero(const at::Tensor& self, at::IntArrayRef dims) {
  return at::sum(self.ne(0), dims, false, at::kLong);
}

at::Tensor& norm_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                     at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim, std::nullopt);
}

at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                           at::IntArrayRef dim, bool keepdim, at::ScalarType dtype,
                           at::Tensor& out) {
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim, dtype);
}

at::Tensor& norm_scalar_out(const at::Tensor& self, const at::Scalar& p, at::Tensor& out) {
  return at::linalg_vector_norm_out(out, self, p, std::nullopt, false, std::nullopt);
}

at::Tensor& norm_scalar_opt_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                                      at::ScalarType dtype, at::Tensor& out) {
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), std::nullopt, false, dtype);
}

namespace {

// The two halves glu splits self into along dim, with CPU's checks.
std::pair<at::Tensor, at::Tensor> glu_halves(const at::Tensor& self, int64_t& dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(dim);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", dim, " is size ", n);
  return {self.narrow(dim, 0, n / 2), self.narrow(dim, n / 2, n / 2)};
}

}  // namespace

at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  const auto [a, b] = glu_halves(self, dim);
  const at::Tensor r = a * at::sigmoid(b);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

// d/da = sigmoid(b); d/db = a * sigmoid(b) * (1 - sigmoid(b))
at::Tensor& glu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim,
                             at::Tensor& grad_input) {
  const auto [a, b] = glu_halves(self, dim);
  const at::Tensor sig = at::sigmoid(b);
  const at::Tensor grad_a = grad_output * sig;
  const at::Tensor grad_b = grad_a * a * (1 - sig);
  at::native::resize_output(grad_input, self.sizes());
  return grad_input.copy_(at::cat({grad_a, grad_b}, dim));
}

// Window w of unfold holds input positions w * step + k (k < size): its
// gradient is one index_add of every window element into those positions
// (overlapping windows add up, as CPU's kernel adds them).
at::Tensor unfold_backward(const at::Tensor& grad_in, at::IntArrayRef input_sizes, int64_t dim,
                           int64_t size, int64_t step) {
  dim = at::maybe_wrap_dim(dim, static_cast<int64_t>(std::max<size_t>(input_sizes.size(), 1)));
  at::Tensor grad_input = at::zeros(input_sizes, grad_in.options());
  if (grad_in.numel() == 0) return grad_input;
  const int64_t windows = grad_in.size(input_sizes.empty() ? 0 : dim);
  // [..., windows, ..., size] -> [..., windows * size, ...]
  at::Tensor g = input_sizes.empty() ? grad_in.reshape({-1})
                                     : grad_in.movedim(-1, dim + 1).flatten(dim, dim + 1);
  const at::Tensor index = (at::arange(windows, grad_in.options().dtype(at::kLong)) * step)
                               .unsqueeze(1)
                               .add(at::arange(size, grad_in.options().dtype(at::kLong)))
                               .reshape({-1});
  if (input_sizes.empty()) return grad_input.reshape({1}).index_add_(0, index, g).reshape({});
  return grad_input.index_add_(dim, index, g);
}

at::Tensor glu_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim) {
  at::Tensor grad_input = device_empty({0}, self.options());
  return glu_backward_out(grad_output, self, dim, grad_input);
}

at::Tensor trace(const at::Tensor& self) {
  // CPU's kernel takes every type but bool, and sums integers into int64.
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool,
                              "\"trace\" not implemented for 'Bool'");
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return at::sum(self.diagonal());
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta_in, const at::Scalar& alpha_in, at::Tensor& out) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ",
              self.dim(), ", ", mat.dim(), ", ", vec.dim());
  // Integer tensors take beta and alpha cast to their type first (0.2 is 0),
  // as CPU's kernel does.
  check_out_dtype("addmv", out, mat.scalar_type());
  const bool integral = at::isIntegralType(mat.scalar_type(), /*includeBool=*/true);
  const at::Scalar beta = integral ? at::Scalar(beta_in.to<int64_t>()) : beta_in;
  const at::Scalar alpha = integral ? at::Scalar(alpha_in.to<int64_t>()) : alpha_in;
  at::Tensor r = at::mv(mat, vec);
  if (!alpha.equal(1)) r = r * alpha;
  // beta == 0 ignores self entirely (NaN included), as in BLAS.
  if (!beta.equal(0)) r = r + (beta.equal(1) ? self : self * beta);
  write_result(out, r.expand({mat.size(0)}));
  return out;
}

std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  // CPU's kernel takes floating dtypes only (NotImplementedError otherwise)
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"log_sigmoid_forward\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  // CPU's kernel writes a contiguous result whatever the input's layout; a
  // contiguous input gives the elementwise steps below that layout.
  const at::Tensor x = self.contiguous();
  // min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|.
  at::Tensor out = at::clamp_max(x, 0) - at::log1p(at::exp(-at::abs(x)));
  return {out, device_empty({0}, self.options())};
}

at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                const at::Tensor& /*buffer*/) {
  return grad_output * at::sigmoid(-self);
}

at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                               double beta, at::Tensor& out) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  at::Tensor d = at::abs(self - target);
  at::Tensor loss = beta == 0 ? d : at::where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta);
  write_result(out, reduce_loss(loss, reduction));
  return out;
}

at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                        const at::Tensor& target, int64_t reduction, double beta,
                                        at::Tensor& grad_input) {
  at::Tensor diff = self - target;
  at::Tensor local =
      beta == 0 ? at::sign(diff) : at::where(at::abs(diff) < beta, diff / beta, at::sign(diff));
  write_result(grad_input,
               (local * reduce_grad(grad_output, self, reduction)).expand(self.sizes()));
  return grad_input;
}

at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                      double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  at::Tensor d = at::abs(self - target);
  return reduce_loss(at::where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction);
}

at::Tensor huber_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, int64_t reduction, double delta) {
  at::Tensor local = at::clamp(self - target, -delta, delta);
  return (local * reduce_grad(grad_output, self, reduction)).expand(self.sizes()).contiguous();
}

at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction) {
  TORCH_CHECK(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
              ") that is different to the input size (", self.sizes(), ") is deprecated. ",
              "Please ensure they have the same size.");
  // log clamped at -100, as PyTorch does, so 0 and 1 inputs stay finite.
  at::Tensor log_x = at::clamp_min(at::log(self), -100);
  at::Tensor log_1mx = at::clamp_min(at::log1p(-self), -100);
  at::Tensor loss = -(target * log_x + (1 - target) * log_1mx);
  if (weight.has_value() && weight->defined()) loss = loss * *weight;
  return reduce_loss(loss, reduction);
}

at::Tensor binary_cross_entropy_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                         const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight,
                                         int64_t reduction) {
  at::Tensor grad = (self - target) / at::clamp_min((1 - self) * self, 1e-12);
  if (weight.has_value() && weight->defined()) grad = grad * *weight;
  return (grad * reduce_grad(grad_output, self, reduction)).expand(self.sizes()).contiguous();
}

at::Tensor& reflection_pad_out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& out) {
  write_result(out, pad_forward(self, padding, true, "reflection_pad"));
  return out;
}

at::Tensor& reflection_pad_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                        at::IntArrayRef padding, at::Tensor& grad_input) {
  write_result(grad_input,
               pad_backward(grad_output, self, padding, true, "reflection_pad_backward"));
  return grad_input;
}

at::Tensor& replication_pad_out(const at::Tensor& self, at::IntArrayRef padding, at::Tensor& out) {
  write_result(out, pad_forward(self, padding, false, "replication_pad"));
  return out;
}

at::Tensor& replication_pad_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                         at::IntArrayRef padding, at::Tensor& grad_input) {
  write_result(grad_input,
               pad_backward(grad_output, self, padding, false, "replication_pad_backward"));
  return grad_input;
}

at::Tensor reflection_pad(const at::Tensor& self, at::IntArrayRef padding) {
  return pad_forward(self, padding, true, "reflection_pad");
}
at::Tensor reflection_pad_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                   at::IntArrayRef padding) {
  return pad_backward(grad_output, self, padding, true, "reflection_pad_backward");
}
at::Tensor replication_pad(const at::Tensor& self, at::IntArrayRef padding) {
  return pad_forward(self, padding, false, "replication_pad");
}
at::Tensor replication_pad_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                    at::IntArrayRef padding) {
  return pad_backward(grad_output, self, padding, false, "replication_pad_backward");
}

namespace {

// [N, C, H, W] scores as [N*H*W, C] rows for the 1-D nll_loss kernels.
at::Tensor spatial_rows(const at::Tensor& self) {
  return self.permute({0, 2, 3, 1}).reshape({-1, self.size(1)});
}

void check_nll2d(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(self.dim() == 4, "only batches of spatial inputs supported (4D tensors), but got ",
              "input of dimension: ", self.dim());
  TORCH_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got ",
              "targets of dimension: ", target.dim());
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) &&
                  self.size(3) == target.size(2),
              "input and target batch or spatial sizes don't match: target ", target.sizes(),
              ", input ", self.sizes());
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(const at::Tensor& self,
                                                      const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight,
                                                      int64_t reduction, int64_t ignore_index) {
  check_nll2d(self, target);
  auto [out, total] = at::nll_loss_forward(spatial_rows(self), target.reshape({-1}), weight,
                                           reduction, ignore_index);
  if (reduction == at::Reduction::None) out = out.view(target.sizes());
  return {out, total};
}

at::Tensor nll_loss2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, const std::optional<at::Tensor>& weight,
                               int64_t reduction, int64_t ignore_index,
                               const at::Tensor& total_weight) {
  check_nll2d(self, target);
  at::Tensor g = reduction == at::Reduction::None ? grad_output.reshape({-1}) : grad_output;
  at::Tensor rows = at::nll_loss_backward(g, spatial_rows(self), target.reshape({-1}), weight,
                                          reduction, ignore_index, total_weight);
  return rows.view({self.size(0), self.size(2), self.size(3), self.size(1)})
      .permute({0, 3, 1, 2})
      .contiguous();
}

std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(const at::Tensor& grad_output,
                                                         const at::Tensor& self,
                                                         const at::Tensor& weight) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"prelu_backward_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  // As CPU: x > 0 passes the gradient; elsewhere it is scaled by the
  // weight, and the weight's gradient is x * grad.
  const at::Tensor positive = self.gt(0);
  at::Tensor grad_input = at::where(positive, grad_output, weight * grad_output);
  at::Tensor grad_weight = at::where(positive, at::zeros_like(grad_input), self * grad_output);
  return {grad_input, grad_weight};
}

at::Tensor channel_shuffle(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2,
              "channel_shuffle expects input with > 2 dims, but got input with sizes ",
              self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.",
              " Value of groups:", groups);
  const int64_t channels = self.size(1);
  TORCH_CHECK(channels % groups == 0, "Number of channels must be divisible by groups. Got ",
              channels, " channels and ", groups, " groups.");
  // [N, g, C/g, ...] -> [N, C/g, g, ...]: channel i * g + j comes from j * C/g + i.
  std::vector<int64_t> grouped = self.sizes().vec();
  grouped[1] = channels / groups;
  grouped.insert(grouped.begin() + 1, groups);
  return self.reshape(grouped)
      .transpose(1, 2)
      .reshape(self.sizes())
      .contiguous(self.suggest_memory_format());
}
at::Tensor angle(const at::Tensor& self) {
  if (self.is_complex()) return at::atan2(at::imag(self), at::real(self));
  // Real numbers: pi for negatives, NaN kept, 0 otherwise; integers and bool
  // give the default float dtype, as on CPU.
  const at::Tensor x = at::isFloatingType(self.scalar_type())
                           ? self
                           : self.to(c10::typeMetaToScalarType(at::get_default_dtype()));
  const at::Tensor phase = at::where(x.lt(0), at::full_like(x, M_PI), at::zeros_like(x));
  return at::where(x.isnan(), x, phase);
}

at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out) {
  write_result(out, ops::angle(self));
  return out;
}
at::Tensor& renorm_out(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                       const at::Scalar& maxnorm, at::Tensor& out) {
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ",
              maxnorm.toDouble());
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> others;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  // Each slice along `dim` whose p-norm exceeds maxnorm is scaled to it, with
  // CPU's 1e-7 guard; the others are left as they are.
  const at::Tensor norm = at::linalg_vector_norm(self, p, others, /*keepdim=*/true);
  const at::Tensor scale =
      at::where(norm.gt(maxnorm), maxnorm / (norm + 1e-7), at::ones_like(norm));
  write_result(out, self * scale.to(self.scalar_type()));
  return out;
}

at::Tensor renorm(const at::Tensor& self, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm) {
  at::Tensor out = at::empty_like(self);
  return renorm_out(self, p, dim, maxnorm, out);
}

at::Tensor& renorm_(at::Tensor& self, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  return renorm_out(self, p, dim, maxnorm, self);
}
// rsub(self, other) is other - alpha * self: sub with its operands swapped,
// so the result takes other's layout and sub's checks, as on CPU.
at::Tensor rsub_tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return at::sub(other, self, alpha);
}

at::Tensor& rsub_tensor_out(const at::Tensor& self, const at::Tensor& other,
                            const at::Scalar& alpha, at::Tensor& out) {
  const at::Tensor value = at::sub(other, self, alpha);
  // CPU's out= for rsub (a generated wrapper of the functional op) wants
  // the exact result dtype.
  check_out_dtype("rsub", out, value.scalar_type());
  write_result(out, value);
  return out;
}
}  // namespace torch_tpu::ops
