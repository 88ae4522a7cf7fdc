// CTC loss: the forward (alpha) and backward (beta) recursions of Graves et
// al. over the extended target l' (the labels with a blank before, between
// and after them), in log space, each as one program with a StableHLO while
// loop over time, vectorized over the batch and the 2L+1 states.
//
// The values follow CPU's kernel (aten/src/ATen/native/LossCTC.cpp): the same
// three-term log-sum-exp with its running maximum (0 when all terms are
// -inf), the same likelihood from the last two states, the same gradient
// exp(lp) - exp(log_alpha_beta + nll - lp) times the incoming gradient, zero
// past each input length, and zero for an infinite loss with zero_infinity.
// Where CPU leaves log_alpha uninitialized (past an input length, past a
// target's 2L+1 states) it is -inf here. The per-label sum of alpha*beta is
// one max-shifted sum instead of CPU's sequential log-add: equal up to float
// rounding.
//
// Lengths are host values, as on CPU (the Tensor overloads read them back as
// CPU does), and enter the program as a small runtime tensor: a new batch of
// lengths reuses the executable, which is keyed by shapes alone.
#include <ATen/TensorUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/tensor.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype_map.h"
#include "hlo/int_constants.h"
#include "ops/broadcast.h"
#include "ops/ctc_loss_kernels.h"
#include "ops/device_empty.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64;
using hlo::s64_splat;
using hlo::Value;

constexpr const char* kChecking = "ctc_loss_allocate_outputs";

// CPU's argument checks (ctc_loss_allocate_outputs), in its order and with
// its messages; returns the longest target.
int64_t check_arguments(const at::Tensor& log_probs, const at::Tensor& targets,
                        c10::IntArrayRef input_lengths, c10::IntArrayRef target_lengths,
                        int64_t blank) {
  const at::ScalarType type = log_probs.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(type == at::kFloat || type == at::kDouble,
                              "\"ctc_loss_tpu\" not implemented for '", c10::toString(type), "'");
  const at::TensorArg log_probs_arg(log_probs, "log_probs", 1), targets_arg(targets, "targets", 2);
  at::checkScalarType(kChecking, targets_arg,
                      targets.scalar_type() == at::kLong ? at::kLong : at::kInt);
  at::checkDim(kChecking, log_probs_arg, 3);
  at::checkDimRange(kChecking, targets_arg, 1, 3);
  const int64_t batch = log_probs.size(1), labels = log_probs.size(2);
  TORCH_CHECK(0 <= blank && blank < labels, "ctc_loss: blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == batch,
              "ctc_loss: input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == batch,
              "ctc_loss: target_lengths must be of size batch_size");
  int64_t max_target = 0, total = 0;
  for (int64_t length : target_lengths) {
    TORCH_CHECK(length >= 0, "ctc_loss: Expected target_lengths to have value at least 0, but got ",
                "value ", length, " (while checking arguments for ", kChecking, ")");
    max_target = std::max(max_target, length);
    total += length;
  }
  if (targets.dim() == 1) {
    at::checkSize(kChecking, targets_arg, 0, total);
  } else {
    at::checkSize(kChecking, targets_arg, 0, batch);
    TORCH_CHECK(targets.size(1) >= max_target, "ctc_loss: Expected tensor to have size at least ",
                max_target, " at dimension 1, but got size ", targets.size(1), " for ", targets_arg,
                " (while checking arguments for ", kChecking, ")");
    max_target = targets.size(1);
  }
  const int64_t max_input = log_probs.size(0);
  for (int64_t length : input_lengths) {
    TORCH_CHECK(length >= 0, "ctc_loss: Expected input_lengths to have value at least 0, but got ",
                "value ", length, " (while checking arguments for ", kChecking, ")");
    TORCH_CHECK(length <= max_input, "ctc_loss: Expected input_lengths to have value at most ",
                max_input, ", but got value ", length, " (while checking arguments for ", kChecking,
                ")");
  }
  return max_target;
}

// [input_lengths; target_lengths] as one int64 tpu tensor [2, N].
at::Tensor lengths_on_device(c10::IntArrayRef input_lengths, c10::IntArrayRef target_lengths,
                             const at::Device& device) {
  std::vector<int64_t> both(input_lengths.begin(), input_lengths.end());
  both.insert(both.end(), target_lengths.begin(), target_lengths.end());
  return at::tensor(both, at::TensorOptions().dtype(at::kLong))
      .reshape({2, static_cast<int64_t>(input_lengths.size())})
      .to(device);
}

std::vector<c10::IntArrayRef::value_type> host_lengths(const at::Tensor& lengths,
                                                       const char* name) {
  TORCH_CHECK(at::isIntegralType(lengths.scalar_type(), /*includeBool=*/false), name,
              " must be integral");
  const at::Tensor host = lengths.to(at::kCPU, at::kLong).contiguous();
  return {host.const_data_ptr<int64_t>(), host.const_data_ptr<int64_t>() + host.numel()};
}

// What both recursions share, built from the inputs in one program.
struct Extended {
  int64_t T, N, C, S;  // time, batch, labels, 2 * max_target + 1 states
  ElementType element;
  Value lp;          // [T, N, C]
  Value lp_ext;      // [T, N, S]: lp at each state's label
  Value label;       // [N, S] s64: l', the blank at even states
  Value s;           // [N, S] s64: the state index
  Value input_len;   // [N, S] s64
  Value target_len;  // [N, S] s64
  Value valid;       // [N, S]: s < 2 * target_length + 1
};

Value neg_inf(Builder& b, ElementType t, const std::vector<int64_t>& dims) {
  return b.splat(b.constant(t, -std::numeric_limits<double>::infinity()), dims);
}

Value scalar_splat(Builder& b, ElementType t, double v, const std::vector<int64_t>& dims) {
  return b.splat(b.constant(t, v), dims);
}

Value row(Builder& b, Value x, const std::vector<int64_t>& dims) {  // [N] -> [N, S]
  return b.broadcast_in_dim(x, dims, {0});
}

Extended extend(Builder& b, Value lp, Value targets, Value lengths, int64_t blank, int64_t S) {
  Extended e;
  e.T = lp.type.dims[0];
  e.N = lp.type.dims[1];
  e.C = lp.type.dims[2];
  e.S = S;
  e.element = lp.type.element;
  e.lp = lp;
  const std::vector<int64_t> ns{e.N, S};
  Value input_len = b.reshape(b.slice(lengths, {0, 0}, {1, e.N}, {1, 1}), {e.N});
  Value target_len = b.reshape(b.slice(lengths, {1, 0}, {2, e.N}, {1, 1}), {e.N});
  e.input_len = row(b, input_len, ns);
  e.target_len = row(b, target_len, ns);
  e.s = b.iota({ElementType::kS64, ns}, 1);
  Value half = b.binary("divide", e.s, s64_splat(b, 2, ns));
  Value odd =
      b.compare(Compare::kEQ, b.binary("remainder", e.s, s64_splat(b, 2, ns)), s64_splat(b, 1, ns));
  Value labelled = b.binary("and", odd, b.compare(Compare::kLT, half, e.target_len));
  e.label = s64_splat(b, blank, ns);
  const int64_t numel = targets.type.numel();
  if (numel > 0) {
    // Where each sample's labels start in the flattened targets.
    Value start;
    if (targets.type.dims.size() == 1) {
      // concatenated: the exclusive cumulative sum of the target lengths
      Value len_row = b.broadcast_in_dim(target_len, {e.N, e.N}, {1});
      Value before = b.compare(Compare::kLT, b.iota({ElementType::kS64, {e.N, e.N}}, 1),
                               b.iota({ElementType::kS64, {e.N, e.N}}, 0));
      start =
          b.reduce(b.select(before, len_row, s64_splat(b, 0, {e.N, e.N})), s64(b, 0), {1}, "add");
    } else {
      start = b.binary("multiply", b.iota({ElementType::kS64, {e.N}}, 0),
                       s64_splat(b, targets.type.dims[1], {e.N}));
    }
    Value index = b.binary("add", row(b, start, ns), half);
    index = b.binary("minimum", b.binary("maximum", index, s64_splat(b, 0, ns)),
                     s64_splat(b, numel - 1, ns));
    Value flat = b.convert(b.reshape(targets, {numel}), ElementType::kS64);
    e.label = b.select(labelled, b.gather_1d(flat, index), e.label);
  }
  e.valid = b.compare(Compare::kLT, e.s,
                      b.binary("add", b.binary("multiply", e.target_len, s64_splat(b, 2, ns)),
                               s64_splat(b, 1, ns)));
  // lp_ext[t, n, s] = lp[t, n, l'[n, s]] (a label outside [0, C) reads a
  // clamped one: CPU reads out of bounds there)
  const std::vector<int64_t> tns{e.T, e.N, S};
  Value label = b.binary("minimum", b.binary("maximum", e.label, s64_splat(b, 0, ns)),
                         s64_splat(b, e.C - 1, ns));
  Value index = b.binary(
      "add",
      b.binary("multiply", b.iota({ElementType::kS64, tns}, 0), s64_splat(b, e.N * e.C, tns)),
      b.binary("add",
               b.binary("multiply", b.iota({ElementType::kS64, tns}, 1), s64_splat(b, e.C, tns)),
               b.broadcast_in_dim(label, tns, {1, 2})));
  e.lp_ext = e.T == 0 ? lp : b.gather_1d(b.reshape(lp, {e.T * e.N * e.C}), index);
  return e;
}

// x shifted by k states: out[.., s] = x[.., s - k] (k > 0) or x[.., s + |k|]
// (k < 0), -inf where that is outside.
Value shift_states(Builder& b, Value x, int64_t k) {
  const Value fill = b.constant(x.type.element, -std::numeric_limits<double>::infinity());
  return b.pad(x, fill, {0, k}, {0, -k});
}

// log(exp(a1 - m) + exp(a2 - m) + exp(a3 - m)) + m, m the running maximum as
// CPU takes it (a term replaces it only when greater; 0 when all are -inf).
Value log_sum_exp3(Builder& b, Value a1, Value a2, Value a3) {
  const std::vector<int64_t> dims = a1.type.dims;
  const ElementType t = a1.type.element;
  Value m = a1;
  m = b.select(b.compare(Compare::kGT, a2, m), a2, m);
  m = b.select(b.compare(Compare::kGT, a3, m), a3, m);
  m = b.select(b.compare(Compare::kEQ, m, neg_inf(b, t, dims)), scalar_splat(b, t, 0, dims), m);
  auto term = [&](Value a) { return b.unary("exponential", b.binary("subtract", a, m)); };
  Value sum = b.binary("add", b.binary("add", term(a1), term(a2)), term(a3));
  return b.binary("add", b.unary("log", sum), m);
}

Value time_row(Builder& b, Value x3, Value t, int64_t dim) {
  // x3 [A, B, C] -> the [.., t, ..] row along `dim` (0 or 1), 2-d.
  std::vector<int64_t> sizes = x3.type.dims;
  sizes[dim] = 1;
  std::vector<Value> start{s64(b, 0), s64(b, 0), s64(b, 0)};
  start[dim] = t;
  Value r = b.dynamic_slice(x3, start, sizes);
  std::vector<int64_t> dims = x3.type.dims;
  dims.erase(dims.begin() + dim);
  return b.reshape(r, dims);
}

Value put_time_row(Builder& b, Value x3, Value r, Value t, int64_t dim) {
  std::vector<int64_t> sizes = x3.type.dims;
  sizes[dim] = 1;
  std::vector<Value> start{s64(b, 0), s64(b, 0), s64(b, 0)};
  start[dim] = t;
  return b.dynamic_update_slice_at(x3, b.reshape(r, sizes), start);
}

// (neg_log_likelihood, log_alpha).
std::vector<Value> lower_forward(Builder& b, const Extended& e) {
  const std::vector<int64_t> ns{e.N, e.S}, nts{e.N, e.T, e.S};
  const ElementType t = e.element;
  Value log_alpha = neg_inf(b, t, nts);
  if (e.T > 0) {
    // the first row: the blank, and the first label when there is one
    Value lp0 = time_row(b, e.lp_ext, s64(b, 0), 0);
    Value first = b.binary("or", b.compare(Compare::kEQ, e.s, s64_splat(b, 0, ns)),
                           b.binary("and", b.compare(Compare::kEQ, e.s, s64_splat(b, 1, ns)),
                                    b.compare(Compare::kGT, e.target_len, s64_splat(b, 0, ns))));
    first = b.binary("and", first, b.compare(Compare::kGT, e.input_len, s64_splat(b, 0, ns)));
    Value alpha0 = b.select(first, lp0, neg_inf(b, t, ns));
    log_alpha = put_time_row(b, log_alpha, alpha0, s64(b, 0), 1);
    // the state may skip the blank before it when its label differs from
    // the one two states back
    Value skip =
        b.binary("and", b.compare(Compare::kGE, e.s, s64_splat(b, 2, ns)),
                 b.compare(Compare::kNE, e.label, b.pad(e.label, s64(b, -1), {0, 2}, {0, -2})));
    const int64_t T = e.T;
    auto out = b.while_loop(
        {s64(b, 1), alpha0, log_alpha, e.lp_ext, skip, e.valid, e.input_len},
        [T](Builder& c, const std::vector<Value>& v) {
          return c.compare(Compare::kLT, v[0], s64(c, T));
        },
        [&](Builder& c, const std::vector<Value>& v) {
          const Value& step = v[0];
          const Value& prev = v[1];
          Value a3 = c.select(v[4], shift_states(c, prev, 2), neg_inf(c, t, ns));
          Value next = c.binary("add", log_sum_exp3(c, prev, shift_states(c, prev, 1), a3),
                                time_row(c, v[3], step, 0));
          Value active = c.binary("and", v[5], c.compare(Compare::kLT, c.splat(step, ns), v[6]));
          next = c.select(active, next, neg_inf(c, t, ns));
          return std::vector<Value>{c.binary("add", step, s64(c, 1)),
                                    next,
                                    put_time_row(c, v[2], next, step, 1),
                                    v[3],
                                    v[4],
                                    v[5],
                                    v[6]};
        });
    log_alpha = out[2];
  }
  // the likelihood from the last row of each sample: its last two states
  const std::vector<int64_t> n{e.N};
  Value input_len = b.reshape(b.slice(e.input_len, {0, 0}, {e.N, 1}, {1, 1}), n);
  Value target_len = b.reshape(b.slice(e.target_len, {0, 0}, {e.N, 1}, {1, 1}), n);
  Value base = b.binary(
      "add", b.binary("multiply", b.iota({ElementType::kS64, n}, 0), s64_splat(b, e.T * e.S, n)),
      b.binary("multiply",
               b.binary("maximum", b.binary("subtract", input_len, s64_splat(b, 1, n)),
                        s64_splat(b, 0, n)),
               s64_splat(b, e.S, n)));
  Value last = b.binary("add", base, b.binary("multiply", target_len, s64_splat(b, 2, n)));
  const int64_t numel = e.N * e.T * e.S;
  Value flat = numel > 0 ? b.reshape(log_alpha, {numel}) : Value{};
  auto read = [&](Value index) {
    if (numel == 0) return neg_inf(b, t, n);
    index = b.binary("minimum", b.binary("maximum", index, s64_splat(b, 0, n)),
                     s64_splat(b, numel - 1, n));
    return b.gather_1d(flat, index);
  };
  Value l1 = read(last);
  Value l2 = read(b.binary("subtract", last, s64_splat(b, 1, n)));
  Value m = b.select(b.compare(Compare::kLT, l1, l2), l2, l1);  // std::max(l1, l2)
  m = b.select(b.compare(Compare::kEQ, m, neg_inf(b, t, n)), scalar_splat(b, t, 0, n), m);
  auto term = [&](Value a) { return b.unary("exponential", b.binary("subtract", a, m)); };
  Value both = b.binary("add", b.unary("log", b.binary("add", term(l1), term(l2))), m);
  Value no_target = b.compare(Compare::kEQ, target_len, s64_splat(b, 0, n));
  Value ll = b.select(no_target, l1, both);
  Value no_input = b.compare(Compare::kEQ, input_len, s64_splat(b, 0, n));
  ll = b.select(no_input, b.select(no_target, scalar_splat(b, t, 0, n), neg_inf(b, t, n)), ll);
  return {b.unary("negate", ll), log_alpha};
}

// The gradient with respect to log_probs, [T, N, C].
Value lower_backward(Builder& b, const Extended& e, Value grad_out, Value nll, Value log_alpha,
                     bool zero_infinity) {
  const std::vector<int64_t> ns{e.N, e.S}, nc{e.N, e.C}, nsc{e.N, e.S, e.C};
  const ElementType t = e.element;
  Value grad = scalar_splat(b, t, 0, {e.T, e.N, e.C});
  if (e.T == 0) return grad;
  // beta's transitions: to the next state, and over the next blank when the
  // label two states on differs
  Value two_l = b.binary("multiply", e.target_len, s64_splat(b, 2, ns));
  Value step_on = b.compare(Compare::kLT, e.s, two_l);
  Value skip = b.binary(
      "and", b.compare(Compare::kLT, e.s, b.binary("subtract", two_l, s64_splat(b, 1, ns))),
      b.compare(Compare::kNE, e.label, b.pad(e.label, s64(b, -1), {0, -2}, {0, 2})));
  // the states that start beta at each sample's last time step
  Value last_states = b.binary(
      "or", b.compare(Compare::kEQ, e.s, two_l),
      b.binary("and",
               b.compare(Compare::kEQ, e.s, b.binary("subtract", two_l, s64_splat(b, 1, ns))),
               b.compare(Compare::kGT, e.target_len, s64_splat(b, 0, ns))));
  // one_hot[n, s, c]: state s of sample n has label c
  Value one_hot = b.compare(Compare::kEQ, b.broadcast_in_dim(e.label, nsc, {0, 1}),
                            b.iota({ElementType::kS64, nsc}, 2));
  Value in_len_nc =
      b.broadcast_in_dim(b.reshape(b.slice(e.input_len, {0, 0}, {e.N, 1}, {1, 1}), {e.N}), nc, {0});
  Value nll_nc = b.broadcast_in_dim(nll, nc, {0});
  Value scale = b.broadcast_in_dim(grad_out, nc, {0});
  Value keep = b.compare(Compare::kEQ, s64_splat(b, 0, nc), s64_splat(b, 0, nc));  // all true
  if (zero_infinity) {
    keep = b.compare(Compare::kNE, nll_nc,
                     scalar_splat(b, t, std::numeric_limits<double>::infinity(), nc));
  }
  const int64_t T = e.T;
  auto out = b.while_loop(
      {s64(b, T - 1), neg_inf(b, t, ns), grad, e.lp_ext, e.lp, log_alpha, step_on, skip,
       last_states, e.valid, e.input_len, one_hot, in_len_nc, nll_nc, scale, keep},
      [](Builder& c, const std::vector<Value>& v) {
        return c.compare(Compare::kGE, v[0], s64(c, 0));
      },
      [&](Builder& c, const std::vector<Value>& v) {
        const Value& step = v[0];
        const Value& next = v[1];
        Value lp_ext_t = time_row(c, v[3], step, 0);
        Value step_ns = c.splat(step, ns);
        Value last_row = c.binary("subtract", v[10], s64_splat(c, 1, ns));
        // beta at the last row, and the recursion before it
        Value start = c.select(v[8], lp_ext_t, neg_inf(c, t, ns));
        Value b2 = c.select(v[6], shift_states(c, next, -1), neg_inf(c, t, ns));
        Value b3 = c.select(v[7], shift_states(c, next, -2), neg_inf(c, t, ns));
        Value rec = c.select(v[9], c.binary("add", log_sum_exp3(c, next, b2, b3), lp_ext_t),
                             neg_inf(c, t, ns));
        Value beta =
            c.select(c.compare(Compare::kEQ, step_ns, last_row), start,
                     c.select(c.compare(Compare::kLT, step_ns, last_row), rec, neg_inf(c, t, ns)));
        // log of the sum over the states with label c of alpha * beta
        Value ab = c.binary("add", time_row(c, v[5], step, 1), beta);
        ab = c.select(c.binary("and", v[9], c.compare(Compare::kLT, step_ns, v[10])), ab,
                      neg_inf(c, t, ns));
        Value ab3 = c.select(v[11], c.broadcast_in_dim(ab, nsc, {0, 1}), neg_inf(c, t, nsc));
        Value mx =
            c.reduce(ab3, c.constant(t, -std::numeric_limits<double>::infinity()), {1}, "maximum");
        Value shift =
            c.select(c.compare(Compare::kEQ, mx, neg_inf(c, t, nc)), scalar_splat(c, t, 0, nc), mx);
        Value sum =
            c.reduce(c.unary("exponential",
                             c.binary("subtract", ab3, c.broadcast_in_dim(shift, nsc, {0, 2}))),
                     c.constant(t, 0), {1}, "add");
        Value lcab = c.binary("add", c.unary("log", sum), shift);
        Value lp_t = time_row(c, v[4], step, 0);
        Value res = c.binary(
            "multiply",
            c.binary(
                "subtract", c.unary("exponential", lp_t),
                c.unary("exponential", c.binary("subtract", c.binary("add", lcab, v[13]), lp_t))),
            v[14]);
        Value live = c.binary("and", v[15], c.compare(Compare::kLT, c.splat(step, nc), v[12]));
        res = c.select(live, res, scalar_splat(c, t, 0, nc));
        std::vector<Value> carried(v.begin(), v.end());
        carried[0] = c.binary("subtract", step, s64(c, 1));
        carried[1] = beta;
        carried[2] = put_time_row(c, v[2], res, step, 0);
        return carried;
      });
  return out[2];
}

std::string shape_key(const char* name, int64_t blank, int64_t S, const at::Tensor& targets) {
  return std::string(name) + ":" + std::to_string(blank) + ":" + std::to_string(S) + ":" +
         std::to_string(targets.dim());
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                            c10::IntArrayRef input_lengths,
                                            c10::IntArrayRef target_lengths, int64_t blank,
                                            bool /*zero_infinity: backward only*/) {
  const int64_t max_target =
      check_arguments(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t T = log_probs.size(0), N = log_probs.size(1), S = 2 * max_target + 1;
  at::Tensor nll = device_empty({N}, log_probs.options());
  at::Tensor log_alpha = device_empty({N, T, S}, log_probs.options());
  if (N == 0) return {nll, log_alpha};
  const at::Tensor lengths = lengths_on_device(input_lengths, target_lengths, log_probs.device());
  TensorProgram program("ctc_loss", shape_key("ctc_loss", blank, S, targets));
  program.input(log_probs);
  program.input(targets);
  program.input(lengths);
  program.output(nll);
  program.output(log_alpha);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return lower_forward(b, extend(b, in[0], in[1], in[2], blank, S));
  });
  return {nll, log_alpha};
}

at::Tensor ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs,
                             const at::Tensor& targets, c10::IntArrayRef input_lengths,
                             c10::IntArrayRef target_lengths, const at::Tensor& neg_log_likelihood,
                             const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  const int64_t max_target =
      check_arguments(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t T = log_probs.size(0), N = log_probs.size(1), S = 2 * max_target + 1;
  TORCH_CHECK(grad.dim() == 1 && grad.size(0) == N && neg_log_likelihood.sizes() == grad.sizes(),
              "ctc_loss_backward: expected grad and neg_log_likelihood of shape [", N, "]");
  TORCH_CHECK(log_alpha.dim() == 3 && log_alpha.size(0) == N && log_alpha.size(1) == T &&
                  log_alpha.size(2) == S,
              "ctc_loss_backward: expected log_alpha of shape [", N, ", ", T, ", ", S, "], got ",
              log_alpha.sizes());
  at::Tensor result = device_empty(log_probs.sizes(), log_probs.options());
  if (result.numel() == 0) return result;
  const at::Tensor lengths = lengths_on_device(input_lengths, target_lengths, log_probs.device());
  TensorProgram program(
      "ctc_loss_backward",
      shape_key(zero_infinity ? "ctc_loss_backward:zi" : "ctc_loss_backward", blank, S, targets));
  program.input(log_probs);
  program.input(targets);
  program.input(lengths);
  program.input(grad.to(log_probs.scalar_type()));
  program.input(neg_log_likelihood);
  program.input(log_alpha);
  program.output(result);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const Extended e = extend(b, in[0], in[1], in[2], blank, S);
    return std::vector<Value>{lower_backward(b, e, in[3], in[4], in[5], zero_infinity)};
  });
  return result;
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& log_probs,
                                                   const at::Tensor& targets,
                                                   const at::Tensor& input_lengths,
                                                   const at::Tensor& target_lengths, int64_t blank,
                                                   bool zero_infinity) {
  const auto il = host_lengths(input_lengths, "input_lengths");
  const auto tl = host_lengths(target_lengths, "target_lengths");
  return ops::ctc_loss(log_probs, targets, il, tl, blank, zero_infinity);
}

at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad, const at::Tensor& log_probs,
                                    const at::Tensor& targets, const at::Tensor& input_lengths,
                                    const at::Tensor& target_lengths,
                                    const at::Tensor& neg_log_likelihood,
                                    const at::Tensor& log_alpha, int64_t blank,
                                    bool zero_infinity) {
  const auto il = host_lengths(input_lengths, "input_lengths");
  const auto tl = host_lengths(target_lengths, "target_lengths");
  return ops::ctc_loss_backward(grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha,
                                blank, zero_infinity);
}

}  // namespace torch_tpu::ops
