// Neural-network building blocks: softmax and log_softmax with their
// backward ops, nll_loss, mse_loss.
#include <ATen/OpMathType.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>

#include <limits>

#include "core/dtype_map.h"
#include "exec/eager_mode.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/index_bounds.h"
#include "ops/kernels.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

std::vector<int64_t> with_dim_one(std::vector<int64_t> shape, int64_t dim) {
  if (!shape.empty()) shape[dim] = 1;
  return shape;
}

// Reduces `dim` and broadcasts the result back to x's shape.
Value reduce_keep(Builder& b, Value x, int64_t dim, const char* body, Value init) {
  if (x.type.dims.empty()) return x;
  Value r = b.reduce(x, init, {dim}, body);
  return broadcast_to(b, b.reshape(r, with_dim_one(x.type.dims, dim)), x.type.dims);
}

// Numerically stable (log_)softmax along dim, computed in f32 for
// half/bfloat16 inputs like the CPU kernel.
Value softmax_value(Builder& b, Value x, int64_t dim, bool log) {
  const ElementType t = x.type.element;
  const double inf = std::numeric_limits<double>::infinity();
  // The shift: a NaN in a row makes the whole row NaN through the sum
  // whether or not the max keeps it, so XLA's faster max will do. Rows of
  // -inf come out NaN, as on CPU (-inf - -inf).
  Value m = reduce_keep(b, x, dim, Builder::kMaximumMayDropNan, b.constant(t, -inf));
  Value shifted = b.binary("subtract", x, m);
  Value e = b.unary("exponential", shifted);
  Value s = reduce_keep(b, e, dim, "add", b.constant(t, 0));
  if (log) return b.binary("subtract", shifted, b.unary("log", s));
  return b.binary("divide", e, s);
}

at::Tensor softmax_common(const at::Tensor& self, int64_t dim, bool half_to_float, bool log,
                          at::Tensor out) {
  const char* op = log ? "_log_softmax" : "_softmax";
  dim = c10::maybe_wrap_dim(dim, self.dim());
  // CPU's kernels take floating types only, but an empty input never
  // reaches them: it comes back empty, in its own dtype.
  const char* kernel =
      self.dim() == 0 || dim == self.dim() - 1
          ? (log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl")
          : (log ? "log_softmax_kernel_impl" : "softmax_kernel_impl");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.numel() == 0, "\"",
                              kernel, "\" not implemented for '", self.scalar_type(), "'");
  const at::ScalarType result = half_to_float ? at::kFloat : self.scalar_type();
  if (out.defined()) check_out_dtype(op, out, result);
  if (!out.defined()) out = device_empty(self.sizes(), self.options().dtype(result));
  at::native::resize_output(out, self.sizes());
  if (self.numel() == 0) return out;
  const ElementType acc = opmath_element_type_for(self.scalar_type(), op);
  TensorProgram program(op, std::string(op) + ":" + std::to_string(dim));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{softmax_value(b, b.convert(in[0], acc), dim, log)};
  });
  return out;
}

at::Tensor softmax_backward_common(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                   at::ScalarType input_dtype, bool log, at::Tensor out) {
  const char* op = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  dim = c10::maybe_wrap_dim(dim, grad.dim());
  if (!out.defined()) out = device_empty(grad.sizes(), grad.options().dtype(input_dtype));
  at::native::resize_output(out, grad.sizes());
  if (grad.numel() == 0) return out;
  const ElementType acc = opmath_element_type_for(grad.scalar_type(), op);
  TensorProgram program(op, std::string(op) + ":" + std::to_string(dim));
  program.input(grad);
  program.input(output);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value g = b.convert(in[0], acc), y = b.convert(in[1], acc);
    Value zero = b.constant(acc, 0);
    if (log) {
      // g - exp(y) * sum(g)
      Value s = reduce_keep(b, g, dim, "add", zero);
      return std::vector<Value>{
          b.binary("subtract", g, b.binary("multiply", b.unary("exponential", y), s))};
    }
    // y * (g - sum(g * y))
    Value s = reduce_keep(b, b.binary("multiply", g, y), dim, "add", zero);
    return std::vector<Value>{b.binary("multiply", y, b.binary("subtract", g, s))};
  });
  return out;
}

// The out= forms' dtype rule (CPU's structured kernels: out has input_dtype).
void check_softmax_backward_out(const at::Tensor& out, at::ScalarType input_dtype) {
  TORCH_CHECK(out.scalar_type() == input_dtype, "Expected out tensor to have dtype ",
              c10::scalarTypeToTypeMeta(input_dtype), ", but got ", out.dtype(), " instead");
}

// One-hot mask of `target` over the class dim (dim 1, or 0 for 1-D input).
Value class_mask(Builder& b, Value target, const std::vector<int64_t>& input_shape,
                 int64_t class_dim) {
  Value t = broadcast_to(
      b, b.reshape(b.convert(target, ElementType::kS64), with_dim_one(input_shape, class_dim)),
      input_shape);
  return b.compare(hlo::Compare::kEQ, b.iota({ElementType::kS64, input_shape}, class_dim), t);
}

// What nll_loss forward and backward share: the one-hot class mask, which
// samples count (target != ignore_index), and the class weights.
struct NllTerms {
  Value mask;    // shape of the input
  Value valid;   // per sample
  Value weight;  // shape of the input
};

NllTerms nll_terms(Builder& b, Value target, Value ignore_index, const Value* weight,
                   const std::vector<int64_t>& shape, int64_t class_dim, ElementType t) {
  NllTerms terms;
  terms.mask = class_mask(b, target, shape, class_dim);
  Value tgt = b.convert(target, ElementType::kS64);
  terms.valid = b.compare(hlo::Compare::kNE, tgt, b.splat(ignore_index, tgt.type.dims));
  terms.weight = weight != nullptr ? broadcast_to(b, b.convert(*weight, t), shape)
                                   : b.splat(b.constant(t, 1), shape);
  return terms;
}

void check_nll(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const int64_t batch = self.dim() == 1 ? 1 : self.size(0);
  TORCH_CHECK(batch == (target.dim() == 0 ? 1 : target.size(0)), "Expected input batch_size (",
              batch, ") to match target batch_size (", target.dim() == 0 ? 1 : target.size(0),
              ").");
  TORCH_CHECK(!at::isFloatingType(target.scalar_type()), "expected scalar type Long but found ",
              target.scalar_type());
}

}  // namespace

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_common(self, dim, half_to_float, false, at::Tensor());
}
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  softmax_common(self, dim, half_to_float, false, out);
  return out;
}
at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_common(self, dim, half_to_float, true, at::Tensor());
}
at::Tensor& log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                            at::Tensor& out) {
  softmax_common(self, dim, half_to_float, true, out);
  return out;
}
at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  return softmax_backward_common(grad, output, dim, input_dtype, false, at::Tensor());
}
at::Tensor log_softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                at::ScalarType input_dtype) {
  return softmax_backward_common(grad, output, dim, input_dtype, true, at::Tensor());
}
at::Tensor& softmax_backward_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                 at::ScalarType input_dtype, at::Tensor& out) {
  check_softmax_backward_out(out, input_dtype);
  softmax_backward_common(grad, output, dim, input_dtype, false, out);
  return out;
}
at::Tensor& log_softmax_backward_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                     at::ScalarType input_dtype, at::Tensor& out) {
  check_softmax_backward_out(out, input_dtype);
  softmax_backward_common(grad, output, dim, input_dtype, true, out);
  return out;
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self,
                                                    const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight,
                                                    int64_t reduction, int64_t ignore_index) {
  check_nll(self, target);
  const bool has_weight = weight.has_value() && weight->defined();
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  if (current_eager_mode() == EagerMode::kDebug) {
    check_index_range_on_host("nll_loss", target, class_dim, self.size(class_dim), false,
                              IndexErrorClass::kIndexError, ignore_index);
  }
  const auto shape = self.sizes().vec();
  const bool none = reduction == at::Reduction::None && self.dim() == 2;
  at::Tensor output = device_empty(
      none ? std::vector<int64_t>{self.size(0)} : std::vector<int64_t>{}, self.options());
  at::Tensor total_weight = device_empty({}, self.options());
  const ElementType t = element_type_for(self.scalar_type(), "nll_loss");
  TensorProgram program("nll_loss_forward",
                        "nll:" + std::to_string(reduction) + (has_weight ? ":w" : ""));
  program.input(self);
  program.input(target);
  program.scalar(ignore_index, ElementType::kS64);
  if (has_weight) program.input(*weight);
  program.output(output);
  program.output(total_weight);
  program.report_findings("nll_loss");
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = in[0];
    const NllTerms terms =
        nll_terms(b, in[1], in[2], has_weight ? &in[3] : nullptr, shape, class_dim, t);
    IndexBounds bounds;
    bounds.check(b, in[1], class_dim, shape[class_dim], false, &terms.valid);
    const Value& mask = terms.mask;
    const Value& valid = terms.valid;
    const Value& w = terms.weight;
    Value zero = b.zeros({t, shape});
    // Per-sample weight w[target] and value x[target] (exact: one non-zero term).
    Value wt = b.reduce(b.select(mask, w, zero), b.constant(t, 0), {class_dim}, "add");
    Value xt = b.reduce(b.select(mask, x, zero), b.constant(t, 0), {class_dim}, "add");
    wt = b.select(valid, wt, b.zeros(wt.type));
    Value losses = b.unary("negate", b.binary("multiply", wt, xt));
    std::vector<int64_t> all;
    for (size_t d = 0; d < losses.type.dims.size(); ++d) all.push_back(d);
    Value total = b.reduce(wt, b.constant(t, 0), all, "add");
    Value result;
    if (reduction == at::Reduction::None) {
      result = losses;
    } else {
      Value sum = b.reduce(losses, b.constant(t, 0), all, "add");
      result = reduction == at::Reduction::Mean ? b.binary("divide", sum, total) : sum;
    }
    return std::vector<Value>{result, total, bounds.finding(b)};
  });
  return {output, total_weight};
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, const std::optional<at::Tensor>& weight,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  check_nll(self, target);
  const bool has_weight = weight.has_value() && weight->defined();
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const auto shape = self.sizes().vec();
  at::Tensor grad_input = device_empty(self.sizes(), self.options());
  if (self.numel() == 0) return grad_input;
  const ElementType t = element_type_for(self.scalar_type(), "nll_loss_backward");
  TensorProgram program("nll_loss_backward",
                        "nll_bwd:" + std::to_string(reduction) + (has_weight ? ":w" : ""));
  program.input(grad_output);
  program.input(target);
  program.scalar(ignore_index, ElementType::kS64);
  program.input(total_weight);
  if (has_weight) program.input(*weight);
  program.output(grad_input);
  program.report_findings("nll_loss_backward");
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const NllTerms terms =
        nll_terms(b, in[1], in[2], has_weight ? &in[4] : nullptr, shape, class_dim, t);
    IndexBounds bounds;
    bounds.check(b, in[1], class_dim, shape[class_dim], false, &terms.valid);
    const Value& mask = terms.mask;
    const Value& valid = terms.valid;
    const Value& w = terms.weight;
    Value g = b.convert(in[0], t);
    if (reduction == at::Reduction::Mean) g = b.binary("divide", g, b.convert(in[3], t));
    // Per-sample upstream gradient, broadcast over classes.
    Value gs = g.type.dims.empty()
                   ? b.splat(g, shape)
                   : broadcast_to(b, b.reshape(g, with_dim_one(shape, class_dim)), shape);
    Value validb = broadcast_to(b, b.reshape(valid, with_dim_one(shape, class_dim)), shape);
    Value keep = b.binary("and", mask, validb);
    Value grad = b.unary("negate", b.binary("multiply", w, gs));
    return std::vector<Value>{b.select(keep, grad, b.zeros({t, shape})), bounds.finding(b)};
  });
  return grad_input;
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  // Composed of tpu ops, run as one program (registered through InOneRegion).
  at::Tensor diff = at::sub(self, target);
  at::Tensor sq = at::mul(diff, diff);
  if (reduction == at::Reduction::Mean) return at::mean(sq);
  if (reduction == at::Reduction::Sum) return at::sum(sq);
  return sq;
}

at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction) {
  const double norm =
      reduction == at::Reduction::Mean ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  return at::mul(at::mul(at::sub(self, target), grad_output), norm);
}

}  // namespace torch_tpu::ops
