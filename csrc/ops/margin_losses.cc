// nn.MultiMarginLoss and nn.MultiLabelMarginLoss, forward and backward,
// written with other tpu kernels. Class indices in the targets are data: a
// bad one is checked on the device (torch._assert_async's finding, CPU's
// message) and clamped meanwhile, so it never reads another row.
#include <ATen/ATen.h>

#include "ops/loss_reduction.h"
#include "ops/margin_loss_kernels.h"

namespace torch_tpu::ops {
namespace {

struct MultiMargin {
  at::Tensor x;       // [N, C]
  at::Tensor y;       // [N, 1], clamped into [0, C)
  at::Tensor others;  // [N, C]: the classes that are not the target
  at::Tensor z;       // [N, C]: margin - x[y] + x[j]
  int64_t samples, classes;
};

MultiMargin multi_margin_terms(const at::Tensor& self, const at::Tensor& target,
                               const at::Scalar& p, const at::Scalar& margin,
                               const std::optional<at::Tensor>& weight) {
  const int64_t classes = self.dim() == 0 ? 1 : self.size(-1);
  TORCH_CHECK(
      self.dim() == 0 || (self.dim() == 1 && self.numel() > 0) || (self.dim() == 2 && classes > 0),
      "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
      self.sizes());
  const int64_t samples = self.dim() == 2 ? self.size(0) : 1;
  TORCH_CHECK(
      (self.dim() == 2 ? target.dim() == 1 : target.dim() <= 1) && target.numel() == samples,
      "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
      "input samples (batch size). Expected target size [",
      samples, "], but got ", target.sizes(), ". Input has shape ", self.sizes(), ".");
  TORCH_CHECK(p.equal(1) || p.equal(2), "only p == 1 and p == 2 supported");
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->dim() <= 1 && weight->numel() == classes,
                "inconsistent weight size, expected ", classes, " but got ", weight->sizes());
  }
  const at::Tensor t = target.reshape({samples, 1});
  at::_assert_async(t.ge(0).logical_and(t.lt(classes)).all(), "target out of range");
  MultiMargin m;
  m.samples = samples;
  m.classes = classes;
  m.x = self.reshape({samples, classes});
  m.y = t.clamp(0, classes - 1);
  m.others = at::arange(classes, target.options()).ne(m.y);
  m.z = m.x - m.x.gather(1, m.y) + margin;
  return m;
}

at::Tensor target_weight(const MultiMargin& m, const std::optional<at::Tensor>& weight) {
  if (!weight.has_value() || !weight->defined()) return at::Tensor();
  return weight->reshape({-1})
      .to(m.x.scalar_type())
      .index_select(0, m.y.reshape({-1}))
      .unsqueeze(1);
}

}  // namespace

at::Tensor multi_margin_loss(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                             const at::Scalar& margin, const std::optional<at::Tensor>& weight,
                             int64_t reduction) {
  const MultiMargin m = multi_margin_terms(self, target, p, margin, weight);
  at::Tensor h = m.z.clamp_min(0) * m.others;
  if (p.equal(2)) h = h * h;
  const at::Tensor w = target_weight(m, weight);
  if (w.defined()) h = h * w;
  at::Tensor loss = h.sum(1) / static_cast<double>(m.classes);
  if (reduction == at::Reduction::None) return loss.reshape(target.sizes());
  return reduce_loss(loss, reduction);
}

at::Tensor multi_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                      const at::Tensor& target, const at::Scalar& p,
                                      const at::Scalar& margin,
                                      const std::optional<at::Tensor>& weight, int64_t reduction) {
  const MultiMargin m = multi_margin_terms(self, target, p, margin, weight);
  // d/dx[j] of each active hinge is +1 (p = 1) or 2z (p = 2) for j, and the
  // negated sum of them for the target's class.
  at::Tensor d = m.z.gt(0).logical_and(m.others).to(m.x.scalar_type());
  if (p.equal(2)) d = d * (2 * m.z);
  const at::Tensor w = target_weight(m, weight);
  if (w.defined()) d = d * w;
  const at::Tensor g = reduce_grad(grad_output, m.samples, reduction).reshape({-1, 1});
  d = d * g / static_cast<double>(m.classes);
  const at::Tensor grad = d - at::zeros_like(d).scatter_(1, m.y, d.sum(1, true));
  return grad.reshape(self.sizes());
}

namespace {

struct MultiLabel {
  at::Tensor x;          // [N, C]
  at::Tensor t;          // [N, C] target classes, clamped into [0, C)
  at::Tensor valid;      // [N, C] bool: target positions before the first -1
  at::Tensor is_target;  // [N, C] in self's dtype
  int64_t samples, classes;
};

MultiLabel multilabel_terms(const at::Tensor& self, const at::Tensor& target) {
  const int64_t classes = self.dim() == 0 ? 1 : self.size(-1);
  TORCH_CHECK((self.dim() <= 1 && self.numel() > 0) || (self.dim() == 2 && classes > 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  TORCH_CHECK(target.sizes() == self.sizes(), "inconsistent target size: ", target.sizes(),
              " for input of size: ", self.sizes());
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
  MultiLabel m;
  m.samples = self.dim() == 2 ? self.size(0) : 1;
  m.classes = classes;
  m.x = self.reshape({m.samples, classes});
  const at::Tensor t = target.reshape({m.samples, classes});
  at::_assert_async(t.ge(-1).logical_and(t.lt(classes)).all(),
                    "argument #2 'target' is out of range");
  m.valid = t.ne(-1).cumprod(1).to(at::kBool);
  m.t = t.clamp(0, classes - 1);
  m.is_target = at::zeros_like(m.x)
                    .scatter_add(1, m.t, m.valid.to(m.x.scalar_type()))
                    .gt(0)
                    .to(m.x.scalar_type());
  return m;
}

// [N, targets, C]: which hinges 1 - (x[t_j] - x[k]) are active, k not a target.
at::Tensor active_hinges(const MultiLabel& m, at::Tensor* margins = nullptr) {
  const at::Tensor xt = m.x.gather(1, m.t);
  at::Tensor h = 1 - xt.unsqueeze(2) + m.x.unsqueeze(1);
  const at::Tensor mask = m.valid.unsqueeze(2).logical_and(m.is_target.eq(0).unsqueeze(1));
  if (margins != nullptr) *margins = at::where(mask, h.clamp_min(0), at::zeros_like(h));
  return h.gt(0).logical_and(mask);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> multilabel_margin_loss_forward(const at::Tensor& self,
                                                                  const at::Tensor& target,
                                                                  int64_t reduction) {
  const MultiLabel m = multilabel_terms(self, target);
  at::Tensor margins;
  (void)active_hinges(m, &margins);
  at::Tensor loss = margins.sum({1, 2}) / static_cast<double>(m.classes);
  at::Tensor is_target = m.is_target.reshape(self.sizes());
  if (reduction == at::Reduction::None) {
    return {self.dim() <= 1 ? loss.reshape({}) : loss, is_target};
  }
  return {reduce_loss(loss, reduction), is_target};
}

at::Tensor multilabel_margin_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                           const at::Tensor& target, int64_t reduction,
                                           const at::Tensor& /*is_target*/) {
  const MultiLabel m = multilabel_terms(self, target);
  const at::Tensor active = active_hinges(m).to(m.x.scalar_type());
  // +1 for each active hinge at its non-target class k, -1 at its target t_j.
  const at::Tensor at_targets = -active.sum(2);  // [N, targets]
  at::Tensor grad = active.sum(1) + at::zeros_like(m.x).scatter_add(
                                        1, m.t, at_targets * m.valid.to(m.x.scalar_type()));
  const at::Tensor g = reduce_grad(grad_output, m.samples, reduction).reshape({-1, 1});
  return (grad * g / static_cast<double>(m.classes)).reshape(self.sizes());
}

}  // namespace torch_tpu::ops
