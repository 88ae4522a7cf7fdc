// torch.optim's fused kernels: _fused_adam_ and _fused_adamw_ (what
// Adam/AdamW(fused=True) call). The whole parameter list is updated by one
// program, so a step is one launch however many tensors the model has.
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "ops/optimizer_kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

void fused_adam_common(const char* op, bool adamw, at::TensorList params, at::TensorList grads,
                       at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                       at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                       const at::Tensor* lr_tensor, double lr, double beta1, double beta2,
                       double weight_decay, double eps, bool amsgrad, bool maximize,
                       const std::optional<at::Tensor>& grad_scale,
                       const std::optional<at::Tensor>& found_inf) {
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n &&
                  state_steps.size() == n && (!amsgrad || max_exp_avg_sqs.size() == n),
              op, ": all tensor lists must have the same length");
  if (n == 0) return;
  const bool has_scale = grad_scale.has_value() && grad_scale->defined();
  const bool has_inf = found_inf.has_value() && found_inf->defined();
  TensorProgram program(op, program_key("fused_adam", adamw, amsgrad, maximize, has_scale, has_inf,
                                        lr_tensor != nullptr, static_cast<int64_t>(n)));
  // Hyper-parameters are runtime scalars: a scheduler changing lr does not
  // recompile.
  for (double h : {lr, beta1, beta2, weight_decay, eps}) program.scalar(h, ElementType::kF64);
  if (lr_tensor != nullptr) program.input(*lr_tensor);
  if (has_scale) program.input(*grad_scale);
  if (has_inf) program.input(*found_inf);
  const size_t per = amsgrad ? 6 : 5;
  for (size_t i = 0; i < n; ++i) {
    program.input(params[i]);
    program.input(grads[i]);
    program.input(exp_avgs[i]);
    program.input(exp_avg_sqs[i]);
    if (amsgrad) program.input(max_exp_avg_sqs[i]);
    program.input(state_steps[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    program.output(params[i]);
    program.output(exp_avgs[i]);
    program.output(exp_avg_sqs[i]);
    if (amsgrad) program.output(max_exp_avg_sqs[i]);
  }
  program.run([&](Builder& b, const std::vector<Value>& in) {
    size_t k = 5;
    Value lr_v =
        lr_tensor != nullptr ? b.convert(b.reshape(in[k++], {}), ElementType::kF64) : in[0];
    Value scale_v = has_scale ? in[k++] : Value{};
    Value inf_v = has_inf ? in[k++] : Value{};
    std::vector<Value> results;
    for (size_t i = 0; i < n; ++i) {
      const Value* t = &in[k + i * per];
      Value param = t[0], grad = t[1], m = t[2], v = t[3];
      Value vmax = amsgrad ? t[4] : Value{};
      Value step = b.reshape(t[amsgrad ? 5 : 4], {});
      const ElementType pt = param.type.element;
      const ElementType c = pt == ElementType::kF64 ? pt : ElementType::kF32;
      const auto dims = param.type.dims;
      auto S = [&](Value scalar) { return b.splat(b.convert(scalar, c), dims); };
      auto C = [&](double x) { return b.splat(b.constant(c, x), dims); };
      Value p = b.convert(param, c), g = b.convert(grad, c);
      Value mc = b.convert(m, c), vc = b.convert(v, c);
      if (has_scale) g = b.binary("divide", g, S(b.reshape(scale_v, {})));
      if (maximize) g = b.unary("negate", g);
      Value lr_c = S(lr_v), b1 = S(in[1]), b2 = S(in[2]), wd = S(in[3]), eps_c = S(in[4]);
      if (weight_decay != 0) {
        if (adamw) {
          p = b.binary("multiply", p, b.binary("subtract", C(1), b.binary("multiply", lr_c, wd)));
        } else {
          g = b.binary("add", g, b.binary("multiply", p, wd));
        }
      }
      mc = b.binary("add", b.binary("multiply", b1, mc),
                    b.binary("multiply", b.binary("subtract", C(1), b1), g));
      vc = b.binary(
          "add", b.binary("multiply", b2, vc),
          b.binary("multiply", b.binary("subtract", C(1), b2), b.binary("multiply", g, g)));
      // Bias corrections from the (already incremented) step count.
      Value st = b.splat(b.convert(step, c), dims);
      Value bc1 = b.binary("subtract", C(1), b.binary("power", b1, st));
      Value bc2 = b.binary("subtract", C(1), b.binary("power", b2, st));
      Value second = vc;
      Value vmax_new;
      if (amsgrad) {
        vmax_new = b.binary("maximum", b.convert(vmax, c), vc);
        second = vmax_new;
      }
      Value denom =
          b.binary("add", b.binary("divide", b.unary("sqrt", second), b.unary("sqrt", bc2)), eps_c);
      Value step_size = b.binary("divide", lr_c, bc1);
      Value p_new =
          b.binary("subtract", p, b.binary("multiply", step_size, b.binary("divide", mc, denom)));
      std::vector<Value> updated{p_new, mc, vc};
      if (amsgrad) updated.push_back(vmax_new);
      std::vector<Value> old{param, m, v};
      if (amsgrad) old.push_back(vmax);
      for (size_t j = 0; j < updated.size(); ++j) {
        Value u = b.convert(updated[j], old[j].type.element);
        if (has_inf) {
          // An inf/NaN found by the grad scaler skips the whole step.
          Value skip = b.compare(Compare::kNE, b.convert(b.reshape(inf_v, {}), ElementType::kF32),
                                 b.constant(ElementType::kF32, 0));
          u = b.select(b.splat(skip, dims), old[j], u);
        }
        results.push_back(u);
      }
    }
    return results;
  });
}

}  // namespace

void fused_adam_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                 at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                 at::TensorList state_steps, double lr, double beta1, double beta2,
                 double weight_decay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& grad_scale,
                 const std::optional<at::Tensor>& found_inf) {
  fused_adam_common("_fused_adam_", false, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                    state_steps, nullptr, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                    grad_scale, found_inf);
}

void fused_adam_tensor_lr_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                           at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                           at::TensorList state_steps, const at::Tensor& lr, double beta1,
                           double beta2, double weight_decay, double eps, bool amsgrad,
                           bool maximize, const std::optional<at::Tensor>& grad_scale,
                           const std::optional<at::Tensor>& found_inf) {
  fused_adam_common("_fused_adam_", false, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                    state_steps, &lr, 0.0, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                    grad_scale, found_inf);
}

void fused_adamw_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                  at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                  at::TensorList state_steps, double lr, double beta1, double beta2,
                  double weight_decay, double eps, bool amsgrad, bool maximize,
                  const std::optional<at::Tensor>& grad_scale,
                  const std::optional<at::Tensor>& found_inf) {
  fused_adam_common("_fused_adamw_", true, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                    state_steps, nullptr, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                    grad_scale, found_inf);
}

void fused_adamw_tensor_lr_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                            at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                            at::TensorList state_steps, const at::Tensor& lr, double beta1,
                            double beta2, double weight_decay, double eps, bool amsgrad,
                            bool maximize, const std::optional<at::Tensor>& grad_scale,
                            const std::optional<at::Tensor>& found_inf) {
  fused_adam_common("_fused_adamw_", true, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                    state_steps, &lr, 0.0, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                    grad_scale, found_inf);
}

}  // namespace torch_tpu::ops
