// The fused LSTM and GRU cells, each one program: the gate nonlinearities
// and the state update, computed in float for half types (as CUDA's
// kernels), and their backward from the activations the forward keeps in
// its workspace. LSTM's workspace is [i, f, g, o] (the activated gates);
// GRU's is [r, z, n, hx, hn] (hn: the hidden gates' n part with its bias),
// as CUDA lays them out, so a workspace is the size CUDA's is.
#include <ATen/ATen.h>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/rnn_cell_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

ElementType compute_type(ElementType t) {
  return t == ElementType::kF16 || t == ElementType::kBF16 ? ElementType::kF32 : t;
}

// Gate `i` of `count` along dim 1 of v [B, count * H].
Value gate(Builder& b, Value v, int i, int count) {
  const int64_t rows = v.type.dims[0], h = v.type.dims[1] / count;
  return b.slice(v, {0, i * h}, {rows, (i + 1) * h}, {1, 1});
}

Value one_minus(Builder& b, Value x) {
  return b.binary("subtract", b.splat(b.constant(x.type.element, 1), x.type.dims), x);
}

// x * (1 - x): the derivative of the logistic at its output x.
Value logistic_slope(Builder& b, Value x) { return b.binary("multiply", x, one_minus(b, x)); }

// 1 - x^2: the derivative of tanh at its output x.
Value tanh_slope(Builder& b, Value x) { return one_minus(b, b.binary("multiply", x, x)); }

Value plus_bias(Builder& b, Value gates, Value bias) {
  return b.binary("add", gates, b.broadcast_in_dim(bias, gates.type.dims, {1}));
}

// Sums over the batch (dim 0): a bias gradient.
Value batch_sum(Builder& b, Value v) {
  return b.reduce(v, b.constant(v.type.element, 0), {0}, "add");
}

void check_cell(const char* op, const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                const at::Tensor& state, int gates, const std::optional<at::Tensor>& input_bias,
                const std::optional<at::Tensor>& hidden_bias) {
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes(), op,
              ": expected input_gates and hidden_gates of the same 2-d shape, got ",
              input_gates.sizes(), " and ", hidden_gates.sizes());
  TORCH_CHECK(state.dim() == 2 && state.size(0) == input_gates.size(0) &&
                  state.size(1) * gates == input_gates.size(1),
              op, ": expected a state of shape [", input_gates.size(0), ", ",
              input_gates.size(1) / gates, "], got ", state.sizes());
  TORCH_CHECK(input_gates.scalar_type() == hidden_gates.scalar_type() &&
                  input_gates.scalar_type() == state.scalar_type(),
              op, ": expected the gates and the state to have one dtype");
  TORCH_CHECK(input_bias.has_value() == hidden_bias.has_value(), op,
              ": expected both biases or neither");
  if (input_bias.has_value()) {
    TORCH_CHECK(input_bias->dim() == 1 && input_bias->size(0) == input_gates.size(1) &&
                    hidden_bias->sizes() == input_bias->sizes(),
                op, ": expected biases of shape [", input_gates.size(1), "]");
  }
}

bool has(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> thnn_fused_lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  const char* op = "_thnn_fused_lstm_cell";
  const bool bias = has(input_bias);
  check_cell(op, input_gates, hidden_gates, cx, 4, bias ? input_bias : std::nullopt,
             bias ? hidden_bias : std::nullopt);
  at::Tensor hy = device_empty(cx.sizes(), cx.options());
  at::Tensor cy = device_empty(cx.sizes(), cx.options());
  at::Tensor workspace = device_empty(input_gates.sizes(), input_gates.options());
  if (input_gates.numel() == 0) return {hy, cy, workspace};
  const ElementType t = element_type_for(cx.scalar_type(), op);
  const ElementType c = compute_type(t);
  TensorProgram program(op, bias ? "lstm_cell:bias" : "lstm_cell");
  program.input(input_gates);
  program.input(hidden_gates);
  program.input(cx);
  if (bias) {
    program.input(*input_bias);
    program.input(*hidden_bias);
  }
  program.output(hy);
  program.output(cy);
  program.output(workspace);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value gates = b.binary("add", b.convert(in[0], c), b.convert(in[1], c));
    if (bias) {
      gates = plus_bias(b, plus_bias(b, gates, b.convert(in[3], c)), b.convert(in[4], c));
    }
    Value i = b.unary("logistic", gate(b, gates, 0, 4));
    Value f = b.unary("logistic", gate(b, gates, 1, 4));
    Value g = b.unary("tanh", gate(b, gates, 2, 4));
    Value o = b.unary("logistic", gate(b, gates, 3, 4));
    Value c_new =
        b.binary("add", b.binary("multiply", f, b.convert(in[2], c)), b.binary("multiply", i, g));
    Value h_new = b.binary("multiply", o, b.unary("tanh", c_new));
    Value ws = b.concatenate({i, f, g, o}, 1);
    return std::vector<Value>{b.convert(h_new, t), b.convert(c_new, t), b.convert(ws, t)};
  });
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> thnn_fused_lstm_cell_backward_impl(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const char* op = "_thnn_fused_lstm_cell_backward_impl";
  const bool gh = has(grad_hy), gc = has(grad_cy);
  if (!gh && !gc) return {at::Tensor(), at::Tensor(), at::Tensor()};
  at::Tensor grad_gates = device_empty(workspace.sizes(), workspace.options());
  at::Tensor grad_cx = device_empty(cx.sizes(), cx.options());
  at::Tensor grad_bias =
      has_bias ? device_empty({workspace.size(1)}, workspace.options()) : at::Tensor();
  if (workspace.numel() == 0) {
    if (has_bias) grad_bias.zero_();
    return {grad_gates, grad_cx, grad_bias};
  }
  const ElementType t = element_type_for(cx.scalar_type(), op);
  const ElementType c = compute_type(t);
  std::string key = std::string("lstm_cell_backward:") + (gh ? "h" : "") + (gc ? "c" : "") +
                    (has_bias ? ":bias" : "");
  TensorProgram program(op, key);
  program.input(cx);
  program.input(cy);
  program.input(workspace);
  if (gh) program.input(*grad_hy);
  if (gc) program.input(*grad_cy);
  program.output(grad_gates);
  program.output(grad_cx);
  if (has_bias) program.output(grad_bias);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value c_prev = b.convert(in[0], c), c_new = b.convert(in[1], c), ws = b.convert(in[2], c);
    Value i = gate(b, ws, 0, 4), f = gate(b, ws, 1, 4), g = gate(b, ws, 2, 4),
          o = gate(b, ws, 3, 4);
    Value zero = b.zeros(c_prev.type);
    Value d_h = gh ? b.convert(in[3], c) : zero;
    Value d_c_in = gc ? b.convert(in[gh ? 4 : 3], c) : zero;
    Value tanh_c = b.unary("tanh", c_new);
    // The cell state's gradient: through h = o tanh(c), plus what came in.
    Value d_c = b.binary(
        "add", b.binary("multiply", b.binary("multiply", d_h, o), tanh_slope(b, tanh_c)), d_c_in);
    Value d_i = b.binary("multiply", b.binary("multiply", d_c, g), logistic_slope(b, i));
    Value d_f = b.binary("multiply", b.binary("multiply", d_c, c_prev), logistic_slope(b, f));
    Value d_g = b.binary("multiply", b.binary("multiply", d_c, i), tanh_slope(b, g));
    Value d_o = b.binary("multiply", b.binary("multiply", d_h, tanh_c), logistic_slope(b, o));
    Value d_gates = b.concatenate({d_i, d_f, d_g, d_o}, 1);
    std::vector<Value> out{b.convert(d_gates, t), b.convert(b.binary("multiply", d_c, f), t)};
    if (has_bias) out.push_back(b.convert(batch_sum(b, d_gates), t));
    return out;
  });
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> thnn_fused_gru_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  const char* op = "_thnn_fused_gru_cell";
  const bool bias = has(input_bias);
  check_cell(op, input_gates, hidden_gates, hx, 3, bias ? input_bias : std::nullopt,
             bias ? hidden_bias : std::nullopt);
  at::Tensor hy = device_empty(hx.sizes(), hx.options());
  at::Tensor workspace = device_empty({hx.size(0), hx.size(1) * 5}, hx.options());
  if (input_gates.numel() == 0) return {hy, workspace};
  const ElementType t = element_type_for(hx.scalar_type(), op);
  const ElementType c = compute_type(t);
  TensorProgram program(op, bias ? "gru_cell:bias" : "gru_cell");
  program.input(input_gates);
  program.input(hidden_gates);
  program.input(hx);
  if (bias) {
    program.input(*input_bias);
    program.input(*hidden_bias);
  }
  program.output(hy);
  program.output(workspace);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value ig = b.convert(in[0], c), hg = b.convert(in[1], c), h_prev = b.convert(in[2], c);
    if (bias) {
      ig = plus_bias(b, ig, b.convert(in[3], c));
      hg = plus_bias(b, hg, b.convert(in[4], c));
    }
    Value r = b.unary("logistic", b.binary("add", gate(b, ig, 0, 3), gate(b, hg, 0, 3)));
    Value z = b.unary("logistic", b.binary("add", gate(b, ig, 1, 3), gate(b, hg, 1, 3)));
    Value hn = gate(b, hg, 2, 3);
    Value n = b.unary("tanh", b.binary("add", gate(b, ig, 2, 3), b.binary("multiply", r, hn)));
    // h = (1 - z) n + z h_prev, as n + z (h_prev - n)
    Value h_new = b.binary("add", n, b.binary("multiply", z, b.binary("subtract", h_prev, n)));
    Value ws = b.concatenate({r, z, n, h_prev, hn}, 1);
    return std::vector<Value>{b.convert(h_new, t), b.convert(ws, t)};
  });
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> thnn_fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  const char* op = "_thnn_fused_gru_cell_backward";
  TORCH_CHECK(workspace.dim() == 2 && grad_hy.dim() == 2 &&
                  workspace.size(1) == grad_hy.size(1) * 5 && workspace.size(0) == grad_hy.size(0),
              op, ": expected a workspace of shape [", grad_hy.size(0), ", ", grad_hy.size(1) * 5,
              "], got ", workspace.sizes());
  const int64_t rows = grad_hy.size(0), h = grad_hy.size(1);
  at::Tensor grad_input = device_empty({rows, 3 * h}, grad_hy.options());
  at::Tensor grad_hidden = device_empty({rows, 3 * h}, grad_hy.options());
  at::Tensor grad_hx = device_empty({rows, h}, grad_hy.options());
  at::Tensor grad_input_bias = has_bias ? device_empty({3 * h}, grad_hy.options()) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? device_empty({3 * h}, grad_hy.options()) : at::Tensor();
  if (grad_hy.numel() == 0) {
    if (has_bias) {
      grad_input_bias.zero_();
      grad_hidden_bias.zero_();
    }
    return {grad_input, grad_hidden, grad_hx, grad_input_bias, grad_hidden_bias};
  }
  const ElementType t = element_type_for(grad_hy.scalar_type(), op);
  const ElementType c = compute_type(t);
  TensorProgram program(op, has_bias ? "gru_cell_backward:bias" : "gru_cell_backward");
  program.input(grad_hy);
  program.input(workspace);
  program.output(grad_input);
  program.output(grad_hidden);
  program.output(grad_hx);
  if (has_bias) {
    program.output(grad_input_bias);
    program.output(grad_hidden_bias);
  }
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value d_h = b.convert(in[0], c), ws = b.convert(in[1], c);
    Value r = gate(b, ws, 0, 5), z = gate(b, ws, 1, 5), n = gate(b, ws, 2, 5);
    Value h_prev = gate(b, ws, 3, 5), hn = gate(b, ws, 4, 5);
    Value d_z = b.binary("multiply", b.binary("multiply", d_h, b.binary("subtract", h_prev, n)),
                         logistic_slope(b, z));
    Value d_n = b.binary("multiply", b.binary("multiply", d_h, one_minus(b, z)), tanh_slope(b, n));
    Value d_r = b.binary("multiply", b.binary("multiply", d_n, hn), logistic_slope(b, r));
    Value d_input = b.concatenate({d_r, d_z, d_n}, 1);
    Value d_hidden = b.concatenate({d_r, d_z, b.binary("multiply", d_n, r)}, 1);
    std::vector<Value> out{b.convert(d_input, t), b.convert(d_hidden, t),
                           b.convert(b.binary("multiply", d_h, z), t)};
    if (has_bias) {
      out.push_back(b.convert(batch_sum(b, d_input), t));
      out.push_back(b.convert(batch_sum(b, d_hidden), t));
    }
    return out;
  });
  return {grad_input, grad_hidden, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace torch_tpu::ops
