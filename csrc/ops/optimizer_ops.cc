// torch.optim's fused kernels: _fused_adam_, _fused_adamw_, _fused_sgd_ and
// _fused_adagrad_ (what Adam/AdamW/SGD/Adagrad(fused=True) call). The whole
// parameter list is updated by one program, so a step is one launch however
// many tensors the model has.
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

// What every fused optimizer does with a GradScaler's tensors, as CPU's and
// CUDA's kernels do it: the gradient is divided by `grad_scale` and the
// unscaled gradient is written back to `grads`; a nonzero `found_inf` skips
// the whole step (every tensor, gradients included, stays as it was).
struct GradScaling {
  Value scale, found_inf;  // invalid when absent

  // The gradient (in the math type) unscaled.
  Value unscale(Builder& b, Value g, const std::vector<int64_t>& dims) const {
    if (!scale.valid()) return g;
    return b.binary("divide", g, b.splat(b.convert(b.reshape(scale, {}), g.type.element), dims));
  }
  // `updated` (the math type) as the stored element type of `old`, or `old`
  // where found_inf says to skip.
  Value store(Builder& b, Value updated, Value old) const {
    Value u = b.convert(updated, old.type.element);
    if (!found_inf.valid()) return u;
    Value skip = b.compare(Compare::kNE, b.convert(b.reshape(found_inf, {}), ElementType::kF32),
                           b.constant(ElementType::kF32, 0));
    return b.select(b.splat(skip, old.type.dims), old, u);
  }
};

// The type a fused optimizer computes in: float64 for float64 parameters,
// float32 otherwise (half/bfloat16 parameters update in float32, as on CPU).
ElementType math_type(const Value& param) {
  return param.type.element == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
}

// One parameter's update as every fused optimizer begins it: the math type
// and shape, the parameter in the math type, the unscaled gradient (what a
// GradScaler's write-back stores) and the gradient the step follows
// (negated for maximize).
struct ParamUpdate {
  ElementType c;
  std::vector<int64_t> dims;
  Value p, unscaled, g;

  ParamUpdate(Builder& b, const GradScaling& scaling, Value param, Value grad, bool maximize)
      : c(math_type(param)), dims(param.type.dims), p(b.convert(param, c)) {
    unscaled = scaling.unscale(b, b.convert(grad, c), dims);
    g = maximize ? b.unary("negate", unscaled) : unscaled;
  }
  // A 0-dim value (a hyper-parameter) in the math type, over the shape.
  Value splat(Builder& b, Value scalar) const { return b.splat(b.convert(scalar, c), dims); }
  // L2 weight decay: the gradient plus decay times the parameter.
  void add_weight_decay(Builder& b, Value decay) {
    g = b.binary("add", g, b.binary("multiply", p, splat(b, decay)));
  }
};

void check_lists(const char* op, size_t n, std::initializer_list<size_t> sizes) {
  for (size_t size : sizes) {
    TORCH_CHECK(size == n, op, ": all tensor lists must have the same length");
  }
}

// The operands every fused optimizer takes ahead of its per-tensor lists:
// its hyper-parameters as float64 runtime scalars (a scheduler changing lr
// does not recompile; lr first), then a tensor lr, the GradScaler's scale
// and found_inf where given.
struct LeadingOperands {
  const at::Tensor* lr_tensor = nullptr;
  const at::Tensor* grad_scale = nullptr;
  const at::Tensor* found_inf = nullptr;
  size_t scalars = 0;

  LeadingOperands(const at::Tensor* lr, const std::optional<at::Tensor>& scale,
                  const std::optional<at::Tensor>& inf)
      : lr_tensor(lr),
        grad_scale(scale.has_value() && scale->defined() ? &*scale : nullptr),
        found_inf(inf.has_value() && inf->defined() ? &*inf : nullptr) {}

  void add_to(TensorProgram& program, std::initializer_list<double> hyper_parameters) {
    scalars = hyper_parameters.size();
    for (double h : hyper_parameters) program.scalar(h, ElementType::kF64);
    for (const at::Tensor* t : {lr_tensor, grad_scale, found_inf}) {
      if (t != nullptr) program.input(*t);
    }
  }
  // Inside the lowering: the learning rate (0-dim float64) and the
  // scaling; returns the index of the first per-tensor operand.
  size_t read(Builder& b, const std::vector<Value>& in, Value* lr, GradScaling* scaling) const {
    size_t k = scalars;
    *lr = lr_tensor != nullptr ? b.convert(b.reshape(in[k++], {}), ElementType::kF64) : in[0];
    if (grad_scale != nullptr) scaling->scale = in[k++];
    if (found_inf != nullptr) scaling->found_inf = in[k++];
    return k;
  }
};

void fused_adam_common(const char* op, bool adamw, at::TensorList params, at::TensorList grads,
                       at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                       at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                       const at::Tensor* lr_tensor, double lr, double beta1, double beta2,
                       double weight_decay, double eps, bool amsgrad, bool maximize,
                       const std::optional<at::Tensor>& grad_scale,
                       const std::optional<at::Tensor>& found_inf) {
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), state_steps.size()});
  if (amsgrad) check_lists(op, n, {max_exp_avg_sqs.size()});
  if (n == 0) return;
  LeadingOperands leading(lr_tensor, grad_scale, found_inf);
  const bool has_scale = leading.grad_scale != nullptr;
  // Whether weight decay applies changes the program; its value does not.
  const bool decays = weight_decay != 0;
  TensorProgram program(op, program_key("fused_adam", adamw, amsgrad, maximize, has_scale,
                                        leading.found_inf != nullptr, lr_tensor != nullptr, decays,
                                        static_cast<int64_t>(n)));
  leading.add_to(program, {lr, beta1, beta2, weight_decay, eps});
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
    if (has_scale) program.output(grads[i]);
  }
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value lr_v;
    GradScaling scaling;
    const size_t k = leading.read(b, in, &lr_v, &scaling);
    std::vector<Value> results;
    for (size_t i = 0; i < n; ++i) {
      const Value* t = &in[k + i * per];
      Value param = t[0], grad = t[1], m = t[2], v = t[3];
      Value vmax = amsgrad ? t[4] : Value{};
      Value step = b.reshape(t[amsgrad ? 5 : 4], {});
      ParamUpdate u(b, scaling, param, grad, maximize);
      auto S = [&](Value scalar) { return u.splat(b, scalar); };
      Value mc = b.convert(m, u.c), vc = b.convert(v, u.c);
      // Scalar factors are formed on the 0-dim float64 hyper-parameters
      // (as CPU's kernel forms them in double) and broadcast once.
      const ElementType f64 = ElementType::kF64;
      Value one = b.constant(f64, 1);
      Value b1 = S(in[1]), b2 = S(in[2]), eps_c = S(in[4]);
      if (decays) {
        if (adamw) {
          u.p = b.binary("multiply", u.p,
                         S(b.binary("subtract", one, b.binary("multiply", lr_v, in[3]))));
        } else {
          u.add_weight_decay(b, in[3]);
        }
      }
      mc = b.binary("add", b.binary("multiply", b1, mc),
                    b.binary("multiply", S(b.binary("subtract", one, in[1])), u.g));
      vc = b.binary("add", b.binary("multiply", b2, vc),
                    b.binary("multiply", S(b.binary("subtract", one, in[2])),
                             b.binary("multiply", u.g, u.g)));
      // Bias corrections from the (already incremented) step count, the
      // same way: no per-element powers.
      Value st = b.convert(step, f64);
      Value bc1 = b.binary("subtract", one, b.binary("power", in[1], st));
      Value bc2 = b.binary("subtract", one, b.binary("power", in[2], st));
      Value step_size = S(b.binary("divide", lr_v, bc1));
      Value bc2_sqrt = S(b.unary("sqrt", bc2));
      Value second = vc;
      Value vmax_new;
      if (amsgrad) {
        vmax_new = b.binary("maximum", b.convert(vmax, u.c), vc);
        second = vmax_new;
      }
      Value denom = b.binary("add", b.binary("divide", b.unary("sqrt", second), bc2_sqrt), eps_c);
      Value p_new =
          b.binary("subtract", u.p, b.binary("multiply", step_size, b.binary("divide", mc, denom)));
      results.push_back(scaling.store(b, p_new, param));
      results.push_back(scaling.store(b, mc, m));
      results.push_back(scaling.store(b, vc, v));
      if (amsgrad) results.push_back(scaling.store(b, vmax_new, vmax));
      if (has_scale) results.push_back(scaling.store(b, u.unscaled, grad));
    }
    return results;
  });
}

// SGD as torch.optim.SGD(fused=True) calls it: with momentum, the buffers
// are updated (or, on the first step, set to the gradient) and the step
// follows them (nesterov: the gradient plus momentum times the buffer);
// without momentum there are no buffers.
void fused_sgd_common(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers,
                      double weight_decay, double momentum, const at::Tensor* lr_tensor, double lr,
                      double dampening, bool nesterov, bool maximize, bool is_first_step,
                      const std::optional<at::Tensor>& grad_scale,
                      const std::optional<at::Tensor>& found_inf) {
  const char* op = "_fused_sgd_";
  const size_t n = params.size();
  check_lists(op, n, {grads.size()});
  const bool has_momentum = momentum != 0;
  TORCH_CHECK(!has_momentum || momentum_buffers.size() == n, op,
              ": momentum_buffer_list must have one buffer per parameter when momentum != 0 "
              "(got ",
              momentum_buffers.size(), " buffers for ", n, " parameters)");
  if (n == 0) return;
  LeadingOperands leading(lr_tensor, grad_scale, found_inf);
  const bool has_scale = leading.grad_scale != nullptr;
  const bool decays = weight_decay != 0;
  TensorProgram program(op, program_key("fused_sgd", has_momentum, nesterov, maximize,
                                        is_first_step, has_scale, leading.found_inf != nullptr,
                                        lr_tensor != nullptr, decays, static_cast<int64_t>(n)));
  leading.add_to(program, {lr, momentum, dampening, weight_decay});
  const size_t per = has_momentum ? 3 : 2;
  for (size_t i = 0; i < n; ++i) {
    program.input(params[i]);
    program.input(grads[i]);
    if (has_momentum) program.input(momentum_buffers[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    program.output(params[i]);
    if (has_momentum) program.output(momentum_buffers[i]);
    if (has_scale) program.output(grads[i]);
  }
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value lr_v;
    GradScaling scaling;
    const size_t k = leading.read(b, in, &lr_v, &scaling);
    std::vector<Value> results;
    for (size_t i = 0; i < n; ++i) {
      const Value* t = &in[k + i * per];
      Value param = t[0], grad = t[1];
      ParamUpdate u(b, scaling, param, grad, maximize);
      if (decays) u.add_weight_decay(b, in[3]);
      Value g = u.g;
      Value buf_new;
      if (has_momentum) {
        Value mom = u.splat(b, in[1]);
        if (is_first_step) {
          buf_new = g;
        } else {
          Value one_minus_damp =
              b.binary("subtract", b.splat(b.constant(u.c, 1), u.dims), u.splat(b, in[2]));
          buf_new = b.binary("add", b.binary("multiply", mom, b.convert(t[2], u.c)),
                             b.binary("multiply", one_minus_damp, g));
        }
        g = nesterov ? b.binary("add", g, b.binary("multiply", mom, buf_new)) : buf_new;
      }
      Value p_new = b.binary("subtract", u.p, b.binary("multiply", u.splat(b, lr_v), g));
      results.push_back(scaling.store(b, p_new, param));
      if (has_momentum) results.push_back(scaling.store(b, buf_new, t[2]));
      if (has_scale) results.push_back(scaling.store(b, u.unscaled, grad));
    }
    return results;
  });
}

// Adagrad as torch.optim.Adagrad(fused=True) calls it (after adding 1 to
// the step counts): the learning rate decayed by the step, the squared
// gradients summed, the step divided by their root.
void fused_adagrad_common(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                          at::TensorList state_steps, const at::Tensor* lr_tensor, double lr,
                          double lr_decay, double weight_decay, double eps, bool maximize,
                          const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  const char* op = "_fused_adagrad_";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), state_sums.size(), state_steps.size()});
  if (n == 0) return;
  LeadingOperands leading(lr_tensor, grad_scale, found_inf);
  const bool has_scale = leading.grad_scale != nullptr;
  const bool decays = weight_decay != 0;
  TensorProgram program(
      op, program_key("fused_adagrad", maximize, has_scale, leading.found_inf != nullptr,
                      lr_tensor != nullptr, decays, static_cast<int64_t>(n)));
  leading.add_to(program, {lr, lr_decay, weight_decay, eps});
  for (size_t i = 0; i < n; ++i) {
    program.input(params[i]);
    program.input(grads[i]);
    program.input(state_sums[i]);
    program.input(state_steps[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    program.output(params[i]);
    program.output(state_sums[i]);
    if (has_scale) program.output(grads[i]);
  }
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value lr_v;
    GradScaling scaling;
    const size_t k = leading.read(b, in, &lr_v, &scaling);
    const ElementType f64 = ElementType::kF64;
    Value one = b.constant(f64, 1);
    std::vector<Value> results;
    for (size_t i = 0; i < n; ++i) {
      const Value* t = &in[k + i * 4];
      Value param = t[0], grad = t[1], sum = t[2];
      ParamUpdate u(b, scaling, param, grad, maximize);
      if (decays) u.add_weight_decay(b, in[2]);
      // clr = lr / (1 + (step - 1) * lr_decay), on the 0-dim step in float64.
      Value step = b.convert(b.reshape(t[3], {}), f64);
      Value clr = b.binary(
          "divide", lr_v,
          b.binary("add", one, b.binary("multiply", b.binary("subtract", step, one), in[1])));
      Value sum_new = b.binary("add", b.convert(sum, u.c), b.binary("multiply", u.g, u.g));
      Value std = b.binary("add", b.unary("sqrt", sum_new), u.splat(b, in[3]));
      Value p_new = b.binary("subtract", u.p,
                             b.binary("divide", b.binary("multiply", u.splat(b, clr), u.g), std));
      results.push_back(scaling.store(b, p_new, param));
      results.push_back(scaling.store(b, sum_new, sum));
      if (has_scale) results.push_back(scaling.store(b, u.unscaled, grad));
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

void fused_sgd_(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers,
                double weight_decay, double momentum, double lr, double dampening, bool nesterov,
                bool maximize, bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  fused_sgd_common(params, grads, momentum_buffers, weight_decay, momentum, nullptr, lr, dampening,
                   nesterov, maximize, is_first_step, grad_scale, found_inf);
}

void fused_sgd_tensor_lr_(at::TensorList params, at::TensorList grads,
                          at::TensorList momentum_buffers, double weight_decay, double momentum,
                          const at::Tensor& lr, double dampening, bool nesterov, bool maximize,
                          bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  fused_sgd_common(params, grads, momentum_buffers, weight_decay, momentum, &lr, 0.0, dampening,
                   nesterov, maximize, is_first_step, grad_scale, found_inf);
}

void fused_adagrad_(at::TensorList params, at::TensorList grads, at::TensorList state_sums,
                    at::TensorList state_steps, double lr, double lr_decay, double weight_decay,
                    double eps, bool maximize, const std::optional<at::Tensor>& grad_scale,
                    const std::optional<at::Tensor>& found_inf) {
  fused_adagrad_common(params, grads, state_sums, state_steps, nullptr, lr, lr_decay, weight_decay,
                       eps, maximize, grad_scale, found_inf);
}

void fused_adagrad_tensor_lr_(at::TensorList params, at::TensorList grads,
                              at::TensorList state_sums, at::TensorList state_steps,
                              const at::Tensor& lr, double lr_decay, double weight_decay,
                              double eps, bool maximize,
                              const std::optional<at::Tensor>& grad_scale,
                              const std::optional<at::Tensor>& found_inf) {
  fused_adagrad_common(params, grads, state_sums, state_steps, &lr, 0.0, lr_decay, weight_decay,
                       eps, maximize, grad_scale, found_inf);
}

}  // namespace torch_tpu::ops
