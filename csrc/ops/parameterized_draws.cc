// Draws whose parameters are tensors.
//
// torch.normal with tensor parameters: one program draws standard normal
// values of the broadcast shape and scales and shifts them by the
// parameters, as CPU's normal_out_impl does (output.normal_(0, 1),
// output.mul_(std).add_(mean)). CPU checks a tensor std on the host
// (std.min() >= 0, a sync); tpu checks it on the device and raises CPU's
// RuntimeError at the next host read, as other device findings.
//
// Gamma and Dirichlet (torch.distributions' Gamma, Beta, Dirichlet, Chi2,
// StudentT, FisherSnedecor, LKJCholesky): Marsaglia and Tsang's rejection
// sampler, the algorithm CPU and CUDA use, run for every element at once in
// a loop on the device: each round draws a normal and a uniform for the
// elements not accepted yet (about 1 in 20 is rejected per round, so a
// million elements take a handful of rounds).
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>

#include <cmath>
#include <functional>
#include <limits>

#include "core/dtype_map.h"
#include "hlo/rounds.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/device_findings.h"
#include "ops/parameterized_draw_kernels.h"
#include "ops/random_draws.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

constexpr const char* kNegativeStd = "normal expects all elements of std >= 0.0";

// A parameter: a tensor (broadcast to the result) or a Python number.
struct Parameter {
  const at::Tensor* tensor;
  double number;
};

void check_scalar_std(double std) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
}

void check_std_tensor(const at::Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
}

// Draws into `out` (already of the broadcast shape): mean + z * std, in
// out's dtype (computed in float for half types, as CPU's kernel).
at::Tensor& draw_normal(at::Tensor& out, Parameter mean, Parameter std,
                        const std::optional<at::Generator>& gen) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(out.scalar_type()),
                              "\"normal_kernel_cpu\" not implemented for '",
                              c10::toString(out.scalar_type()), "'");
  at::assert_no_internal_overlap(out);
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(out.scalar_type(), "normal");
  const ElementType c = float_compute(t);
  const auto dims = out.sizes().vec();
  const std::string key =
      std::string("normal_params:") + (mean.tensor ? "t" : "s") + (std.tensor ? "t" : "s");
  RandomProgram rp("normal", key, gen, draw_device(out), static_cast<uint64_t>(out.numel()) * 2);
  TensorProgram& program = rp.program();
  // Inputs after (seed, offset): mean, then std, each a tensor or a scalar.
  for (const Parameter* p : {&mean, &std}) {
    if (p->tensor) {
      program.input(*p->tensor);
    } else {
      program.scalar(p->number, c);
    }
  }
  program.output(out);
  if (std.tensor) program.report_findings(kNegativeStd, IndexErrorClass::kRuntimeError);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    auto value = [&](Value v) {
      return v.type.dims.empty() && !dims.empty() ? b.splat(b.convert(v, c), dims)
                                                  : broadcast_to(b, b.convert(v, c), dims);
    };
    Value z = standard_normal(b, in[0], in[1], dims, c);
    Value result =
        b.convert(b.binary("add", b.binary("multiply", z, value(in[3])), value(in[2])), t);
    std::vector<Value> results{result};
    if (std.tensor) {
      // NaN fails the check too (CPU compares the minimum, which is NaN).
      Value s = in[3];
      std::vector<int64_t> all(s.type.dims.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
      Value ok = b.compare(Compare::kGE, s, b.zeros(s.type));
      Value bad = b.convert(b.unary("not", ok), ElementType::kS64);
      Value any_bad = b.reduce(bad, b.constant_int(ElementType::kS64, 0), all, "maximum");
      results.push_back(
          assertion_finding(b, b.compare(Compare::kEQ, any_bad, b.zeros(any_bad.type))));
    }
    return results;
  });
  return out;
}

at::Tensor empty_result(at::IntArrayRef shape, const at::Tensor& like) {
  return device_empty(shape, like.options());
}

at::Tensor& draw_normal_out(at::Tensor& out, at::IntArrayRef shape, Parameter mean, Parameter std,
                            const std::optional<at::Generator>& gen) {
  at::native::resize_output(out, shape);
  return draw_normal(out, mean, std, gen);
}

// Round k's random numbers come from a Threefry key of their own, the
// generator's seed moved by k+1 golden-ratio steps, at the draw's reserved
// offset: no two rounds, and no round and another draw, share counters.
Value round_key(Builder& b, Value seed, Value round) {
  Value step = b.constant_int(ElementType::kU64, static_cast<int64_t>(0x9E3779B97F4A7C15ULL));
  Value k =
      b.convert(b.binary("add", round, b.constant_int(ElementType::kS64, 1)), ElementType::kU64);
  return b.binary("add", seed, b.binary("multiply", k, step));
}

// Rounds of a rejection sampler, every element at once: round k draws from
// a Threefry key of its own (round_key) at the draw's reserved offset;
// `step` (builder, key, offset, state) gives the next state. Rounds go on
// while state[done] has an unset element, up to `cap` (far above any run).
using SamplerRound = std::function<std::vector<Value>(Builder&, Value key, Value offset,
                                                      const std::vector<Value>& state)>;
std::vector<Value> sample_in_rounds(Builder& b, Value seed, Value offset, std::vector<Value> state,
                                    size_t done, int64_t cap, const SamplerRound& step) {
  // The seed and offset ride at the end of the state (a loop body sees
  // only what it carries).
  const size_t n = state.size();
  state.push_back(seed);
  state.push_back(offset);
  auto out = hlo::rounds_until_done(
      b, state, done, cap, [&](Builder& l, Value round, const std::vector<Value>& v) {
        std::vector<Value> next = step(l, round_key(l, v[n], round), v[n + 1],
                                       std::vector<Value>(v.begin(), v.begin() + n));
        next.push_back(v[n]);
        next.push_back(v[n + 1]);
        return next;
      });
  out.resize(n);
  return out;
}

// Standard gamma samples for `alpha` (compute type, any shape), unclamped:
// 0 for alpha 0, NaN where alpha is negative or NaN (CPU's sampler never
// returns there).
Value standard_gamma(Builder& b, Value seed, Value offset, Value alpha) {
  const auto dims = alpha.type.dims;
  const ElementType c = alpha.type.element;
  auto full = [&](double v) { return b.splat(b.constant(c, v), dims); };
  // alpha < 1 is boosted to alpha + 1 and the sample scaled by u^(1/alpha).
  Value small = b.compare(Compare::kLT, alpha, full(1));
  Value boost_u = b.binary("subtract", full(1), uniform01(b, seed, offset, dims, c));
  Value scale =
      b.select(small, b.binary("power", boost_u, b.binary("divide", full(1), alpha)), full(1));
  Value a = b.select(small, b.binary("add", alpha, full(1)), alpha);
  Value d = b.binary("subtract", a, full(1.0 / 3.0));
  Value cc = b.binary("divide", full(1), b.unary("sqrt", b.binary("multiply", full(9), d)));
  // Done from the start: alpha 0 (its sample is 0) and what has no sample.
  Value done = b.unary("not", b.compare(Compare::kGT, d, full(0)));
  Value zero_alpha = b.compare(Compare::kEQ, alpha, full(0));
  Value value = b.select(zero_alpha, full(0), full(NAN));
  int64_t numel = 1;
  for (int64_t v : dims) numel *= v;
  const int64_t uniform_offset = 4 * numel;  // past the normal's counters
  auto loop = sample_in_rounds(
      b, seed, offset, {d, cc, done, value}, 2, 10000,
      [&](Builder& l, Value key, Value offset, const std::vector<Value>& s) {
        auto lfull = [&](double x) { return l.splat(l.constant(c, x), dims); };
        Value x = standard_normal(l, key, offset, dims, c);
        Value u_offset = l.binary("add", offset, l.constant_int(ElementType::kU64, uniform_offset));
        Value u = l.binary("subtract", lfull(1), uniform01(l, key, u_offset, dims, c));
        Value y = l.binary("add", lfull(1), l.binary("multiply", s[1], x));
        Value cube = l.binary("multiply", l.binary("multiply", y, y), y);
        Value xx = l.binary("multiply", x, x);
        Value squeeze =
            l.compare(Compare::kLT, u,
                      l.binary("subtract", lfull(1),
                               l.binary("multiply", lfull(0.0331), l.binary("multiply", xx, xx))));
        Value log_test =
            l.compare(Compare::kLT, l.unary("log", u),
                      l.binary("add", l.binary("multiply", lfull(0.5), xx),
                               l.binary("multiply", s[0],
                                        l.binary("add", l.binary("subtract", lfull(1), cube),
                                                 l.unary("log", cube)))));
        Value accept = l.binary("and", l.compare(Compare::kGT, y, lfull(0)),
                                l.binary("or", squeeze, log_test));
        Value take = l.binary("and", l.unary("not", s[2]), accept);
        Value sample = l.select(take, l.binary("multiply", s[0], cube), s[3]);
        return std::vector<Value>{s[0], s[1], l.binary("or", s[2], take), sample};
      });
  return b.binary("multiply", loop[3], scale);
}

void check_gamma_dtype(const at::Tensor& alpha, const char* kernel) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(alpha.scalar_type()), "\"", kernel,
                              "\" not implemented for '", c10::toString(alpha.scalar_type()), "'");
}

// A draw of alpha's shape and dtype: `finish` turns the unclamped gamma
// samples (compute type) into the result.
template <typename Finish>
at::Tensor gamma_draw(const at::Tensor& alpha, const std::optional<at::Generator>& gen,
                      const char* op, const char* key, Finish finish) {
  at::Tensor out = device_empty(alpha.sizes(), alpha.options());
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(out.scalar_type(), op);
  const ElementType c = float_compute(t);
  RandomProgram rp(op, key, gen, draw_device(out), static_cast<uint64_t>(out.numel()) * 2);
  TensorProgram& program = rp.program();
  program.input(alpha);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value g = standard_gamma(b, in[0], in[1], b.convert(in[2], c));
    return std::vector<Value>{b.convert(finish(b, g, c), t)};
  });
  return out;
}

double smallest_normal(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return std::numeric_limits<double>::min();
    case at::kHalf:
      return static_cast<double>(std::numeric_limits<c10::Half>::min());
    case at::kBFloat16:
      return static_cast<double>(std::numeric_limits<c10::BFloat16>::min());
    default:
      return std::numeric_limits<float>::min();
  }
}

double largest_below_one(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return std::nextafter(1.0, 0.0);
    case at::kHalf:
      return 1.0 - std::ldexp(1.0, -11);
    case at::kBFloat16:
      return 1.0 - std::ldexp(1.0, -8);
    default:
      return static_cast<double>(std::nextafter(1.0f, 0.0f));
  }
}

// d x / d alpha of a standard gamma sample x held at its quantile (the
// reparameterized gradient): -(dP/dalpha) / (dP/dx), with P's series
// differentiated term by term, which leaves
//   -sum_n x^(n+1) / (alpha (alpha+1) ... (alpha+n)) * (log x - digamma(alpha+n+1)),
// digamma carried along the terms by its recurrence. Summed in double until
// the terms are past their peak and below double's epsilon.
Value standard_gamma_grad_value(Builder& b, Value alpha_in, Value x_in) {
  const ElementType t = alpha_in.type.element;
  const ElementType d = ElementType::kF64;
  const auto dims = alpha_in.type.dims;
  auto full = [&](Builder& c, double v) { return c.splat(c.constant(d, v), dims); };
  Value alpha = b.convert(alpha_in, d), x = b.convert(x_in, d);
  Value valid = b.binary("and", b.compare(Compare::kGT, alpha, full(b, 0)),
                         b.compare(Compare::kGT, x, full(b, 0)));
  Value a = b.select(valid, alpha, full(b, 1)), xx = b.select(valid, x, full(b, 1));
  Value log_x = b.unary("log", xx);
  Value psi = b.binary("add", b.op("chlo.digamma", {a}, a.type), b.binary("divide", full(b, 1), a));
  Value s0 = b.binary("divide", xx, a);
  Value sum0 = b.binary("multiply", s0, b.binary("subtract", log_x, psi));
  const double eps = std::numeric_limits<double>::epsilon();
  auto loop = hlo::rounds_until_done(
      b, {a, xx, log_x, s0, psi, sum0, b.unary("not", valid)}, 6, 20000,
      [&](Builder& c, Value round, const std::vector<Value>& v) {
        Value n = c.splat(
            c.convert(c.binary("add", round, c.constant_int(ElementType::kS64, 1)), d), dims);
        Value an = c.binary("add", v[0], n);
        Value s = c.binary("multiply", v[3], c.binary("divide", v[1], an));
        Value psi_n = c.binary("add", v[4], c.binary("divide", full(c, 1), an));
        Value term = c.binary("multiply", s, c.binary("subtract", v[2], psi_n));
        Value sum = c.select(v[6], v[5], c.binary("add", v[5], term));
        // Past the peak (x < alpha + n) and negligible: done.
        Value past_peak = c.compare(Compare::kLT, v[1], an);
        Value small = c.compare(Compare::kLE, c.unary("abs", term),
                                c.binary("multiply", c.unary("abs", sum), full(c, eps)));
        Value done = c.binary("or", v[6], c.binary("and", past_peak, small));
        return std::vector<Value>{v[0], v[1], v[2], s, psi_n, sum, done};
      });
  Value grad = b.unary("negate", loop[5]);
  return b.convert(b.select(valid, grad, full(b, NAN)), t);
}

// PyTorch's _dirichlet_grad: for x ~ Beta(alpha, beta), beta = total -
// alpha, the reparameterized d x / d alpha with beta held, divided by 1 - x
// (Dirichlet's backward multiplies it by g - sum(x g), which puts the 1 - x
// back): -(dI/da) / density / (1 - x). The incomplete beta
// I_x(a, b) = sum_n G(a+b+n) / (G(a+n+1) G(b)) x^(a+n) (1-x)^b, differentiated
// term by term, leaves
//   dx/da = -sum_n r_n (digamma(a+b+n) - digamma(a+n+1) + log x),
//   r_0 = x (1-x) / a, r_n = r_(n-1) x (a+b+n-1) / (a+n).
// Above x = (a+1) / (a+b+2) the sum runs on y = 1 - x with a and b swapped
// (I_x(a, b) = 1 - I_y(b, a), there differentiated in its second
// parameter: dx/da = +sum_n r_n (digamma(a+b+n) - digamma(a) + log x),
// r_0 = x y / b, r_n = r_(n-1) y (a+b+n-1) / (b+n)), where it converges
// fast. All in double, until the terms are past their peak and below
// double's epsilon.
Value dirichlet_grad_value(Builder& b, Value x_in, Value alpha_in, Value total_in) {
  const ElementType t = x_in.type.element;
  const ElementType d = ElementType::kF64;
  const auto dims = x_in.type.dims;
  auto full = [&](Builder& c, double v) { return c.splat(c.constant(d, v), dims); };
  auto digamma = [&](Value v) { return b.op("chlo.digamma", {v}, v.type); };
  Value x = b.convert(x_in, d), alpha = b.convert(alpha_in, d), total = b.convert(total_in, d);
  Value beta = b.binary("subtract", total, alpha);
  Value valid = b.binary("and",
                         b.binary("and", b.compare(Compare::kGT, x, full(b, 0)),
                                  b.compare(Compare::kLT, x, full(b, 1))),
                         b.binary("and", b.compare(Compare::kGT, alpha, full(b, 0)),
                                  b.compare(Compare::kGT, beta, full(b, 0))));
  x = b.select(valid, x, full(b, 0.5));
  alpha = b.select(valid, alpha, full(b, 1));
  beta = b.select(valid, beta, full(b, 1));
  Value y = b.binary("subtract", full(b, 1), x);
  Value ab = b.binary("add", alpha, beta);
  Value flip = b.compare(
      Compare::kGT, x,
      b.binary("divide", b.binary("add", alpha, full(b, 1)), b.binary("add", ab, full(b, 2))));
  // The series' variable and first parameter: (x, a), or (y, b).
  Value z = b.select(flip, y, x), p = b.select(flip, beta, alpha);
  Value log_x = b.unary("log", x);
  // The part of each term's factor that does not move with n.
  Value constant_part = b.select(flip, b.binary("subtract", log_x, digamma(alpha)), log_x);
  Value psi_ab = digamma(ab);                                                     // digamma(a+b+n)
  Value psi_p1 = b.binary("add", digamma(p), b.binary("divide", full(b, 1), p));  // digamma(p+n+1)
  auto factor = [&](Builder& c, Value pab, Value pp1, Value flipped, Value fixed) {
    // direct: -(pab - pp1 + log x); flipped: pab + (log x - digamma(a))
    Value direct = c.unary("negate", c.binary("add", c.binary("subtract", pab, pp1), fixed));
    return c.select(flipped, c.binary("add", pab, fixed), direct);
  };
  Value r0 = b.binary("divide", b.binary("multiply", x, y), p);
  Value sum0 = b.binary("multiply", r0, factor(b, psi_ab, psi_p1, flip, constant_part));
  const double eps = std::numeric_limits<double>::epsilon();
  auto loop = hlo::rounds_until_done(
      b, {z, p, ab, constant_part, flip, r0, psi_ab, psi_p1, sum0, b.unary("not", valid)}, 9, 20000,
      [&](Builder& c, Value round, const std::vector<Value>& v) {
        Value n = c.splat(
            c.convert(c.binary("add", round, c.constant_int(ElementType::kS64, 1)), d), dims);
        Value pn = c.binary("add", v[1], n);
        Value abn1 = c.binary("add", v[2], c.binary("subtract", n, full(c, 1)));  // a+b+n-1
        Value growth = c.binary("divide", abn1, pn);
        Value r = c.binary("multiply", v[5], c.binary("multiply", v[0], growth));
        Value psi_ab_n = c.binary("add", v[6], c.binary("divide", full(c, 1), abn1));
        Value psi_p_n = c.binary("add", v[7], c.binary("divide", full(c, 1), pn));
        Value term = c.binary("multiply", r, factor(c, psi_ab_n, psi_p_n, v[4], v[3]));
        Value sum = c.select(v[9], v[8], c.binary("add", v[8], term));
        // Past the terms' peak (their ratio below 1) and negligible: done.
        Value shrinking = c.compare(Compare::kLT, c.binary("multiply", v[0], growth), full(c, 1));
        Value small = c.compare(Compare::kLE, c.unary("abs", term),
                                c.binary("multiply", c.unary("abs", sum), full(c, eps)));
        Value done = c.binary("or", v[9], c.binary("and", shrinking, small));
        return std::vector<Value>{v[0], v[1], v[2], v[3], v[4], r, psi_ab_n, psi_p_n, sum, done};
      });
  Value grad = b.binary("divide", loop[8], y);
  return b.convert(b.select(valid, grad, full(b, NAN)), t);
}

// Poisson counts for rates `lam` (compute type), by CPU's algorithms, every
// element at once in rounds on the device: below rate 10 the product of
// uniforms (one uniform per round until it falls under exp(-rate)), from 10
// on Hormann's transformed rejection (PTRS: two uniforms per round, about 9
// in 10 accepted). Rate 0 gives 0.
Value poisson_counts(Builder& b, Value seed, Value offset, Value lam) {
  const auto dims = lam.type.dims;
  const ElementType c = lam.type.element;
  auto full = [&](Builder& bb, double v) { return bb.splat(bb.constant(c, v), dims); };
  int64_t numel = 1;
  for (int64_t v : dims) numel *= v;
  Value large = b.compare(Compare::kGE, lam, full(b, 10));
  Value safe = b.select(large, lam, full(b, 10));  // PTRS's constants need rate >= 10
  Value slam = b.unary("sqrt", safe);
  Value bb_ = b.binary("add", full(b, 0.931), b.binary("multiply", full(b, 2.53), slam));
  Value aa = b.binary("add", full(b, -0.059), b.binary("multiply", full(b, 0.02483), bb_));
  Value inv_alpha =
      b.binary("add", full(b, 1.1239),
               b.binary("divide", full(b, 1.1328), b.binary("subtract", bb_, full(b, 3.4))));
  Value vr = b.binary("subtract", full(b, 0.9277),
                      b.binary("divide", full(b, 3.6224), b.binary("subtract", bb_, full(b, 2))));
  Value enlam = b.unary("exponential", b.unary("negate", lam));
  Value done0 = b.binary("or", b.compare(Compare::kEQ, lam, full(b, 0)),
                         b.unary("not", b.compare(Compare::kGT, lam, full(b, 0))));
  Value value0 = b.select(b.compare(Compare::kEQ, lam, full(b, 0)), full(b, 0), full(b, NAN));
  auto loop = sample_in_rounds(
      b, seed, offset,
      {lam, large, done0, value0, full(b, 1), full(b, 0), enlam, slam, bb_, aa, inv_alpha, vr}, 2,
      100000, [&](Builder& l, Value key, Value offset, const std::vector<Value>& s) {
        Value u1 = uniform01(l, key, offset, dims, c);
        Value u2 = uniform01(
            l, key, l.binary("add", offset, l.constant_int(ElementType::kU64, 2 * numel)), dims, c);
        Value lamv = s[0], is_large = s[1], done = s[2], value = s[3];
        // Product of uniforms: count the factors before it falls below exp(-rate).
        Value prod = l.binary("multiply", s[4], u1);
        Value small_stop = l.compare(Compare::kLE, prod, s[6]);
        Value count = s[5];
        // PTRS.
        Value u = l.binary("subtract", u1, full(l, 0.5));
        Value us = l.binary("subtract", full(l, 0.5), l.unary("abs", u));
        Value k = l.unary(
            "floor",
            l.binary(
                "add",
                l.binary(
                    "multiply",
                    l.binary("add", l.binary("divide", l.binary("multiply", full(l, 2), s[9]), us),
                             s[8]),
                    u),
                l.binary("add", lamv, full(l, 0.43))));
        Value quick = l.binary("and", l.compare(Compare::kGE, us, full(l, 0.07)),
                               l.compare(Compare::kLE, u2, s[11]));
        Value reject = l.binary("or", l.compare(Compare::kLT, k, full(l, 0)),
                                l.binary("and", l.compare(Compare::kLT, us, full(l, 0.013)),
                                         l.compare(Compare::kGT, u2, us)));
        Value lhs = l.binary(
            "subtract", l.binary("add", l.unary("log", u2), l.unary("log", s[10])),
            l.unary("log",
                    l.binary("add", l.binary("divide", s[9], l.binary("multiply", us, us)), s[8])));
        Value safe_k = l.select(l.compare(Compare::kLT, k, full(l, 0)), full(l, 0), k);
        Value rhs =
            l.binary("subtract",
                     l.binary("add", l.unary("negate", lamv),
                              l.binary("multiply", safe_k, l.unary("log", lamv))),
                     l.op("chlo.lgamma", {l.binary("add", safe_k, full(l, 1))}, safe_k.type));
        Value slow = l.binary("and", l.unary("not", reject), l.compare(Compare::kLE, lhs, rhs));
        Value large_stop = l.binary("or", quick, slow);
        Value stop = l.select(is_large, large_stop, small_stop);
        Value take = l.binary("and", l.unary("not", done), stop);
        value = l.select(take, l.select(is_large, k, count), value);
        // Small rates: a factor that did not stop the product counts.
        Value next_count = l.select(small_stop, count, l.binary("add", count, full(l, 1)));
        return std::vector<Value>{lamv,  is_large, l.binary("or", done, take),
                                  value, prod,     next_count,
                                  s[6],  s[7],     s[8],
                                  s[9],  s[10],    s[11]};
      });
  return loop[3];
}

// Binomial counts for (n, p) (compute type), by the algorithms CPU uses,
// every element at once in rounds on the device. Drawn for q = min(p, 1-p)
// (the count is n minus the draw when p > 1/2): below n q = 10 by inversion
// (geometric gaps between successes: one uniform per round until their sum
// passes n), from 10 on by Hormann's transformed rejection (BTRS, two
// uniforms per round) with the exact log-probability ratio for the test.
// n <= 0 or p <= 0 gives 0, p >= 1 gives n.
Value binomial_counts(Builder& b, Value seed, Value offset, Value n, Value p) {
  const auto dims = n.type.dims;
  const ElementType c = n.type.element;
  auto full = [&](Builder& bb, double v) { return bb.splat(bb.constant(c, v), dims); };
  auto lgamma = [](Builder& bb, Value v) { return bb.op("chlo.lgamma", {v}, v.type); };
  int64_t numel = 1;
  for (int64_t v : dims) numel *= v;
  Value high = b.compare(Compare::kGT, p, full(b, 0.5));
  Value q = b.select(high, b.binary("subtract", full(b, 1), p), p);
  Value trivial = b.binary("or", b.compare(Compare::kLE, n, full(b, 0)),
                           b.binary("or", b.compare(Compare::kLE, p, full(b, 0)),
                                    b.compare(Compare::kGE, p, full(b, 1))));
  Value trivial_value = b.select(b.binary("and", b.compare(Compare::kGE, p, full(b, 1)),
                                          b.compare(Compare::kGT, n, full(b, 0))),
                                 n, full(b, 0));
  Value qs = b.select(trivial, full(b, 0.25), q), ns = b.select(trivial, full(b, 20), n);
  Value large = b.compare(Compare::kGE, b.binary("multiply", ns, qs), full(b, 10));
  // BTRS's constants (for the large elements; harmless elsewhere).
  Value spq = b.unary("sqrt", b.binary("multiply", b.binary("multiply", ns, qs),
                                       b.binary("subtract", full(b, 1), qs)));
  Value bb_ = b.binary("add", full(b, 1.15), b.binary("multiply", full(b, 2.53), spq));
  Value aa =
      b.binary("add", b.binary("add", full(b, -0.0873), b.binary("multiply", full(b, 0.0248), bb_)),
               b.binary("multiply", full(b, 0.01), qs));
  Value cc = b.binary("add", b.binary("multiply", ns, qs), full(b, 0.5));
  Value vr = b.binary("subtract", full(b, 0.92), b.binary("divide", full(b, 4.2), bb_));
  Value alpha = b.binary(
      "multiply", b.binary("add", full(b, 2.83), b.binary("divide", full(b, 5.1), bb_)), spq);
  Value mode = b.unary("floor", b.binary("multiply", b.binary("add", ns, full(b, 1)), qs));
  Value log_r = b.unary("log", b.binary("divide", qs, b.binary("subtract", full(b, 1), qs)));
  Value log_q1 = b.unary("log_plus_one", b.unary("negate", qs));
  // log(m! (n-m)!): the mode's part of the probability ratio.
  Value mode_part =
      b.binary("add", lgamma(b, b.binary("add", mode, full(b, 1))),
               lgamma(b, b.binary("add", b.binary("subtract", ns, mode), full(b, 1))));
  auto loop = sample_in_rounds(
      b, seed, offset,
      {ns, qs, large, trivial, full(b, 0), full(b, 0), full(b, 0), bb_, aa, cc, vr, alpha, mode,
       log_r, log_q1, mode_part},
      3, 100000, [&](Builder& l, Value key, Value offset, const std::vector<Value>& s) {
        Value u1 = uniform01(l, key, offset, dims, c);
        Value u2 = uniform01(
            l, key, l.binary("add", offset, l.constant_int(ElementType::kU64, 2 * numel)), dims, c);
        Value nn = s[0], is_large = s[2], done = s[3], value = s[4], gap_sum = s[5],
              successes = s[6];
        // Inversion: the next geometric gap.
        Value open_u = l.binary("subtract", full(l, 1), u1);  // in (0, 1]
        Value gap = l.unary("ceil", l.binary("divide", l.unary("log", open_u), s[14]));
        Value new_sum = l.binary("add", gap_sum, gap);
        Value small_stop = l.compare(Compare::kGT, new_sum, nn);
        // BTRS.
        Value u = l.binary("subtract", u1, full(l, 0.5));
        Value us = l.binary("subtract", full(l, 0.5), l.unary("abs", u));
        Value k = l.unary(
            "floor",
            l.binary(
                "add",
                l.binary(
                    "multiply",
                    l.binary("add", l.binary("divide", l.binary("multiply", full(l, 2), s[8]), us),
                             s[7]),
                    u),
                s[9]));
        Value in_range =
            l.binary("and", l.compare(Compare::kGE, k, full(l, 0)), l.compare(Compare::kLE, k, nn));
        Value quick = l.binary("and", l.compare(Compare::kGE, us, full(l, 0.07)),
                               l.compare(Compare::kLE, u2, s[10]));
        Value ks = l.select(in_range, k, full(l, 0));
        Value lhs = l.unary(
            "log", l.binary("divide", l.binary("multiply", u2, s[11]),
                            l.binary("add", l.binary("divide", s[8], l.binary("multiply", us, us)),
                                     s[7])));
        // log(P(k) / P(mode)) = log(m! (n-m)!) - log(k! (n-k)!) + (k - m) log(q / (1-q))
        Value k_part =
            l.binary("add", lgamma(l, l.binary("add", ks, full(l, 1))),
                     lgamma(l, l.binary("add", l.binary("subtract", nn, ks), full(l, 1))));
        Value ratio = l.binary("add", l.binary("subtract", s[15], k_part),
                               l.binary("multiply", l.binary("subtract", ks, s[12]), s[13]));
        Value large_stop =
            l.binary("and", in_range, l.binary("or", quick, l.compare(Compare::kLE, lhs, ratio)));
        Value stop = l.select(is_large, large_stop, small_stop);
        Value take = l.binary("and", l.unary("not", done), stop);
        value = l.select(take, l.select(is_large, k, successes), value);
        Value next_successes =
            l.select(small_stop, successes, l.binary("add", successes, full(l, 1)));
        std::vector<Value> out{nn,    s[1],    is_large,      l.binary("or", done, take),
                               value, new_sum, next_successes};
        out.insert(out.end(), s.begin() + 7, s.end());
        return out;
      });
  Value drawn = loop[4];
  Value counted = b.select(high, b.binary("subtract", ns, drawn), drawn);
  return b.select(trivial, trivial_value, counted);
}

}  // namespace

at::Tensor binomial(const at::Tensor& count, const at::Tensor& prob,
                    std::optional<at::Generator> gen) {
  TORCH_CHECK_VALUE(at::isFloatingType(count.scalar_type()),
                    "binomial only supports floating-point dtypes for count, got: ",
                    c10::toString(count.scalar_type()));
  TORCH_CHECK_VALUE(at::isFloatingType(prob.scalar_type()),
                    "binomial only supports floating-point dtypes for prob, got: ",
                    c10::toString(prob.scalar_type()));
  const auto shape = at::infer_size(count.sizes(), prob.sizes());
  at::Tensor out = device_empty(shape, count.options());
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(out.scalar_type(), "binomial");
  const ElementType c = ElementType::kF64;
  RandomProgram rp("binomial", "binomial", gen, draw_device(out),
                   static_cast<uint64_t>(out.numel()) * 2);
  TensorProgram& program = rp.program();
  program.input(count.expand(shape));
  program.input(prob.expand(shape));
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{
        b.convert(binomial_counts(b, in[0], in[1], b.convert(in[2], c), b.convert(in[3], c)), t)};
  });
  return out;
}

at::Tensor poisson(const at::Tensor& self, std::optional<at::Generator> gen) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"poisson_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  at::Tensor out = device_empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(out.scalar_type(), "poisson");
  const ElementType c = ElementType::kF64;  // counts exact past float's 2^24
  RandomProgram rp("poisson", "poisson", gen, draw_device(out),
                   static_cast<uint64_t>(out.numel()) * 2);
  TensorProgram& program = rp.program();
  program.input(self);
  program.output(out);
  // CPU checks the rates on the host; here a device finding, raised at the
  // next host read in CPU's words.
  program.report_findings("invalid Poisson rate, expected rate to be non-negative",
                          IndexErrorClass::kRuntimeError);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value lam = b.convert(in[2], c);
    Value counts = poisson_counts(b, in[0], in[1], lam);
    Value bad = b.convert(b.unary("not", b.compare(Compare::kGE, lam, b.zeros(lam.type))),
                          ElementType::kS64);
    std::vector<int64_t> all(lam.type.rank());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    Value any_bad = b.reduce(bad, b.constant_int(ElementType::kS64, 0), all, "maximum");
    return std::vector<Value>{
        b.convert(counts, t),
        assertion_finding(b, b.compare(Compare::kEQ, any_bad, b.zeros(any_bad.type)))};
  });
  return out;
}

at::Tensor dirichlet_grad(const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& total) {
  TORCH_CHECK(alpha.scalar_type() == x.scalar_type() && total.scalar_type() == x.scalar_type(),
              "Found dtype ",
              alpha.scalar_type() == x.scalar_type() ? total.scalar_type() : alpha.scalar_type(),
              " but expected ", x.scalar_type());
  check_gamma_dtype(x, "_dirichlet_grad_cpu");
  const auto shape = at::infer_size(at::infer_size(x.sizes(), alpha.sizes()), total.sizes());
  at::Tensor out = device_empty(shape, x.options());
  if (out.numel() == 0) return out;
  TensorProgram program("_dirichlet_grad", "dirichlet_grad");
  program.input(x.expand(shape));
  program.input(alpha.expand(shape));
  program.input(total.expand(shape));
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{dirichlet_grad_value(b, in[0], in[1], in[2])};
  });
  return out;
}

at::Tensor standard_gamma_grad(const at::Tensor& self, const at::Tensor& output) {
  check_gamma_dtype(self, "_standard_gamma_grad_cpu");
  TORCH_CHECK(self.sizes() == output.sizes(),
              "_standard_gamma_grad: expected alpha and the "
              "samples of one shape, got ",
              self.sizes(), " and ", output.sizes());
  at::Tensor out = device_empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  TensorProgram program("_standard_gamma_grad", "standard_gamma_grad");
  program.input(self);
  program.input(output);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    return std::vector<Value>{
        standard_gamma_grad_value(b, in[0], b.convert(in[1], in[0].type.element))};
  });
  return out;
}

at::Tensor standard_gamma(const at::Tensor& self, std::optional<at::Generator> gen) {
  check_gamma_dtype(self, "gamma_cpu");
  // As CPU: no sample below the dtype's smallest normal number.
  const double tiny = smallest_normal(self.scalar_type());
  return gamma_draw(self, gen, "_standard_gamma", "standard_gamma",
                    [&](Builder& b, Value g, ElementType c) {
                      return b.maximum(b.splat(b.constant(c, tiny), g.type.dims), g);
                    });
}

at::Tensor sample_dirichlet(const at::Tensor& self, std::optional<at::Generator> gen) {
  check_gamma_dtype(self, "dirichlet");
  TORCH_CHECK(self.dim() >= 1, "_sample_dirichlet: expected alpha with at least one dimension");
  // As CPU: gammas clamped to the smallest normal double... here of the
  // compute type, normalized along the last dim, then kept inside (0, 1).
  const at::ScalarType st = self.scalar_type();
  const double tiny = smallest_normal(st == at::kDouble ? at::kDouble : at::kFloat);
  const double low = smallest_normal(st), high = largest_below_one(st);
  return gamma_draw(self, gen, "_sample_dirichlet", "sample_dirichlet",
                    [&](Builder& b, Value g, ElementType c) {
                      const auto& dims = g.type.dims;
                      g = b.maximum(b.splat(b.constant(c, tiny), dims), g);
                      const int64_t last = static_cast<int64_t>(dims.size()) - 1;
                      Value sum = b.reduce(g, b.constant(c, 0), {last}, "add");
                      std::vector<int64_t> keep(dims.size() - 1);
                      for (size_t i = 0; i < keep.size(); ++i) keep[i] = static_cast<int64_t>(i);
                      Value ratio = b.binary("divide", g, b.broadcast_in_dim(sum, dims, keep));
                      ratio = b.maximum(b.splat(b.constant(c, low), dims), ratio);
                      return b.minimum(b.splat(b.constant(c, high), dims), ratio);
                    });
}

at::Tensor normal_tensor_float(const at::Tensor& mean, double std,
                               std::optional<at::Generator> gen) {
  check_scalar_std(std);
  at::Tensor out = empty_result(mean.sizes(), mean);
  return draw_normal(out, {&mean, 0}, {nullptr, std}, gen);
}

at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std,
                                    std::optional<at::Generator> gen, at::Tensor& out) {
  check_scalar_std(std);
  return draw_normal_out(out, mean.sizes(), {&mean, 0}, {nullptr, std}, gen);
}

at::Tensor normal_float_tensor(double mean, const at::Tensor& std,
                               std::optional<at::Generator> gen) {
  check_std_tensor(std);
  at::Tensor out = empty_result(std.sizes(), std);
  return draw_normal(out, {nullptr, mean}, {&std, 0}, gen);
}

at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std,
                                    std::optional<at::Generator> gen, at::Tensor& out) {
  check_std_tensor(std);
  return draw_normal_out(out, std.sizes(), {nullptr, mean}, {&std, 0}, gen);
}

at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                std::optional<at::Generator> gen) {
  check_std_tensor(std);
  at::Tensor out = empty_result(at::infer_size(mean.sizes(), std.sizes()), mean);
  return draw_normal(out, {&mean, 0}, {&std, 0}, gen);
}

at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean, const at::Tensor& std,
                                     std::optional<at::Generator> gen, at::Tensor& out) {
  check_std_tensor(std);
  return draw_normal_out(out, at::infer_size(mean.sizes(), std.sizes()), {&mean, 0}, {&std, 0},
                         gen);
}

}  // namespace torch_tpu::ops
