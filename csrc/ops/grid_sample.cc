// grid_sampler_2d and grid_sampler_3d (F.grid_sample, F.affine_grid's
// partner), forward and backward: bilinear (trilinear in 3d), nearest and
// (2d) bicubic interpolation with zeros, border and reflection padding.
//
// The sample positions are data, so each tap is a gather from the
// flattened input at ((n * C + c) * H + y) * W + x (with D and z in 3d),
// and the backward's input gradient is the matching scatter-add. The
// coordinate rules are the CPU kernel's (aten/src/ATen/native/
// GridSampler.h): unnormalize by align_corners, clip or reflect for the
// padding mode, a tap outside the input reads 0; a NaN coordinate clips to 0
// (the vectorized kernel's max/min), and with zeros padding its NaN weights
// make the output NaN.
#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

enum class Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum class Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// Elementwise helpers on values of one shape and float type.
struct Math {
  Builder& b;
  ElementType t;
  std::vector<int64_t> dims;

  Value c(double v) const { return b.splat(b.constant(t, v), dims); }
  Value add(Value x, Value y) const { return b.binary("add", x, y); }
  Value sub(Value x, Value y) const { return b.binary("subtract", x, y); }
  Value mul(Value x, Value y) const { return b.binary("multiply", x, y); }
  Value div(Value x, Value y) const { return b.binary("divide", x, y); }
  Value floor(Value x) const { return b.unary("floor", x); }
  Value lt(Value x, Value y) const { return b.compare(Compare::kLT, x, y); }
  Value gt(Value x, Value y) const { return b.compare(Compare::kGT, x, y); }
  Value le(Value x, Value y) const { return b.compare(Compare::kLE, x, y); }
  Value ge(Value x, Value y) const { return b.compare(Compare::kGE, x, y); }
  Value eq(Value x, Value y) const { return b.compare(Compare::kEQ, x, y); }
  Value pick(Value p, Value x, Value y) const { return b.select(p, x, y); }
  Value both(Value p, Value q) const { return b.binary("and", p, q); }
};

struct Geometry {
  int64_t n = 0, c = 0;
  std::vector<int64_t> in, out;  // spatial sizes, outermost first (D, H, W or H, W)
  Interpolation interpolation;
  Padding padding;
  bool align_corners;
  size_t rank() const { return in.size(); }
  std::vector<int64_t> sample_dims() const {  // [N, *out]
    std::vector<int64_t> d{n};
    d.insert(d.end(), out.begin(), out.end());
    return d;
  }
  std::vector<int64_t> full_dims() const {  // [N, C, *out]
    std::vector<int64_t> d{n, c};
    d.insert(d.end(), out.begin(), out.end());
    return d;
  }
  int64_t input_numel() const {
    int64_t k = n * c;
    for (int64_t s : in) k *= s;
    return k;
  }
};

// A coordinate with its derivative with respect to the grid value (the
// backward's chain factor; unused in the forward).
struct Coordinate {
  Value at, grad;
};

// grid value in [-1, 1] -> pixel coordinate (grid_sampler_unnormalize).
Coordinate unnormalize(const Math& m, Value g, int64_t size, bool align_corners) {
  if (align_corners) {
    const double f = (static_cast<double>(size) - 1) / 2;
    return {m.mul(m.add(g, m.c(1)), m.c(f)), m.c(f)};
  }
  const double s = static_cast<double>(size);
  return {m.div(m.sub(m.mul(m.add(g, m.c(1)), m.c(s)), m.c(1)), m.c(2)), m.c(s / 2)};
}

// Into [0, size - 1]; NaN goes to 0 as in the CPU's vectorized max/min.
// The gradient passes only strictly inside (clip_coordinates_set_grad).
Coordinate clip(const Math& m, Coordinate x, int64_t size) {
  const Value zero = m.c(0), last = m.c(static_cast<double>(size - 1));
  Value inside = m.both(m.gt(x.at, zero), m.lt(x.at, last));
  Value low = m.pick(m.gt(x.at, zero), x.at, zero);
  return {m.pick(m.lt(low, last), low, last), m.pick(inside, x.grad, zero)};
}

// Reflection of x off [twice_low / 2, twice_high / 2]
// (reflect_coordinates_set_grad).
Coordinate reflect(const Math& m, Coordinate x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return {m.c(0), m.c(0)};
  const double min = static_cast<double>(twice_low) / 2;
  const double span = static_cast<double>(twice_high - twice_low) / 2;
  Value from_min = m.sub(x.at, m.c(min));
  Value negative = m.lt(from_min, m.c(0));
  Value in = m.pick(negative, m.sub(m.c(0), from_min), from_min);
  Value extra = m.b.binary("remainder", in, m.c(span));
  Value flips = m.floor(m.div(in, m.c(span)));
  Value half = m.mul(flips, m.c(0.5));
  Value even = m.eq(m.floor(half), half);
  Value sign = m.pick(negative, m.c(-1), m.c(1));
  Value at = m.pick(even, m.add(extra, m.c(min)), m.add(m.sub(m.c(span), extra), m.c(min)));
  Value grad = m.mul(x.grad, m.pick(even, sign, m.sub(m.c(0), sign)));
  return {at, grad};
}

// The padding mode applied to a pixel coordinate (compute_coordinates).
Coordinate pad_coordinate(const Math& m, Coordinate x, int64_t size, const Geometry& g) {
  if (g.padding == Padding::kBorder) return clip(m, x, size);
  if (g.padding == Padding::kReflection) {
    x = g.align_corners ? reflect(m, x, 0, 2 * (size - 1)) : reflect(m, x, -1, 2 * size - 1);
    return clip(m, x, size);
  }
  return x;
}

// Reads (and, for the backward, writes) the input at integer-valued float
// coordinates (one [N, *out] value per spatial dim, outermost first), for
// every channel: [N, C, *out].
struct Taps {
  Builder& b;
  const Geometry& g;
  ElementType t;
  Value base;  // s64 [N, C, *out]: (n * C + c) * prod(in)

  Value broadcast(Value v) const {
    std::vector<int64_t> map{0};
    for (size_t d = 0; d < g.rank(); ++d) map.push_back(static_cast<int64_t>(d) + 2);
    return b.broadcast_in_dim(v, g.full_dims(), map);
  }

  // Whether the point lies in the input ([N, *out] pred).
  Value inside(const Math& m, const std::vector<Value>& at) const {
    std::optional<Value> ok;
    for (size_t d = 0; d < g.rank(); ++d) {
      Value in = m.both(m.ge(at[d], m.c(0)), m.le(at[d], m.c(static_cast<double>(g.in[d] - 1))));
      ok = ok ? m.both(*ok, in) : in;
    }
    return *ok;
  }

  // Flat indices [N, C, *out] of the point; positions outside read index 0
  // (the caller masks their values) or, with `skip`, an index past the end
  // (a scatter drops it).
  Value index(const Math& m, const std::vector<Value>& at, Value ok, bool skip) const {
    std::optional<Value> flat;
    for (size_t d = 0; d < g.rank(); ++d) {
      // No NaN or infinity reaches the convert.
      Value i = b.convert(m.pick(ok, at[d], m.c(0)), ElementType::kS64);
      if (flat) {
        flat = b.binary("add",
                        b.binary("multiply", *flat,
                                 b.splat(b.constant_int(ElementType::kS64, g.in[d]), m.dims)),
                        i);
      } else {
        flat = i;
      }
    }
    Value where = b.binary("add", base, broadcast(*flat));
    if (!skip) return where;
    Value past = b.splat(b.constant_int(ElementType::kS64, g.input_numel()), g.full_dims());
    return b.select(broadcast(ok), where, past);
  }

  // The input at the point, 0 outside.
  Value read(const Math& m, Value flat_input, const std::vector<Value>& at) const {
    Value ok = inside(m, at);
    Value v = b.gather_1d(flat_input, index(m, at, ok, false));
    return b.select(broadcast(ok), v, b.zeros({t, g.full_dims()}));
  }
};

// One interpolation tap of every output position: its integer-valued pixel
// coordinates (already padded), its weight, and the weight's derivative
// with respect to each of the sample's pixel coordinates; all [N, *out],
// per spatial dim outermost first.
struct Tap {
  std::vector<Value> at;
  Value weight;
  std::vector<Value> dweight;
};

// Keys' cubic coefficients (A = -0.75) at offset t, and their derivatives
// (get_cubic_upsample_coefficients, get_cubic_coefficients_grad).
std::vector<Value> cubic_coefficients(const Math& m, Value t) {
  const double a = -0.75;
  auto conv1 = [&](Value x) {  // ((A + 2) x - (A + 3)) x x + 1
    return m.add(m.mul(m.mul(m.sub(m.mul(m.c(a + 2), x), m.c(a + 3)), x), x), m.c(1));
  };
  auto conv2 = [&](Value x) {  // ((A x - 5A) x + 8A) x - 4A
    return m.sub(m.mul(m.add(m.mul(m.sub(m.mul(m.c(a), x), m.c(5 * a)), x), m.c(8 * a)), x),
                 m.c(4 * a));
  };
  Value u = m.sub(m.c(1), t);
  return {conv2(m.add(t, m.c(1))), conv1(t), conv1(u), conv2(m.add(u, m.c(1)))};
}

// d(coefficient)/dt, written as the CPU's get_cubic_coefficients_grad (which
// gives the negated derivatives) with the sign turned back.
std::vector<Value> cubic_coefficient_grads(const Math& m, Value t) {
  const double a = -0.75;
  auto negated = [&](Value v) { return m.sub(m.c(0), v); };
  Value x0 = m.sub(m.c(-1), t), x1 = m.sub(m.c(0), t), x2 = m.sub(m.c(1), t), x3 = m.sub(m.c(2), t);
  return {
      negated(m.sub(m.mul(m.sub(m.mul(m.c(-3 * a), x0), m.c(10 * a)), x0), m.c(8 * a))),
      negated(m.mul(m.sub(m.mul(m.c(-3 * (a + 2)), x1), m.c(2 * (a + 3))), x1)),
      negated(m.mul(m.sub(m.mul(m.c(3 * (a + 2)), x2), m.c(2 * (a + 3))), x2)),
      negated(m.add(m.mul(m.sub(m.mul(m.c(3 * a), x3), m.c(10 * a)), x3), m.c(8 * a))),
  };
}

// The taps of every output position. `coords` receives the pixel
// coordinates of the samples with d(pixel coordinate)/d(grid value).
std::vector<Tap> taps_of(const Math& m, const std::vector<Value>& grid, const Geometry& g,
                         std::vector<Coordinate>* coords) {
  const size_t k = g.rank();
  std::vector<Coordinate> x;
  for (size_t d = 0; d < k; ++d) x.push_back(unnormalize(m, grid[d], g.in[d], g.align_corners));
  std::vector<Tap> taps;
  const Value zero = m.c(0), one = m.c(1);
  if (g.interpolation == Interpolation::kBicubic) {  // 2d only
    // Taps around the unpadded coordinate; padding applies to each tap.
    *coords = x;
    Value y0 = m.floor(x[0].at), x0 = m.floor(x[1].at);
    Value ty = m.sub(x[0].at, y0), tx = m.sub(x[1].at, x0);
    auto wy = cubic_coefficients(m, ty), wx = cubic_coefficients(m, tx);
    auto dy = cubic_coefficient_grads(m, ty), dx = cubic_coefficient_grads(m, tx);
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) {
        Coordinate py = pad_coordinate(m, {m.add(y0, m.c(j - 1)), zero}, g.in[0], g);
        Coordinate px = pad_coordinate(m, {m.add(x0, m.c(i - 1)), zero}, g.in[1], g);
        taps.push_back(
            {{py.at, px.at}, m.mul(wx[i], wy[j]), {m.mul(wx[i], dy[j]), m.mul(dx[i], wy[j])}});
      }
    }
    return taps;
  }
  for (size_t d = 0; d < k; ++d) x[d] = pad_coordinate(m, x[d], g.in[d], g);
  *coords = x;
  if (g.interpolation == Interpolation::kNearest) {
    Tap tap{{}, one, std::vector<Value>(k, zero)};
    for (size_t d = 0; d < k; ++d) tap.at.push_back(m.b.unary("round_nearest_even", x[d].at));
    taps.push_back(tap);
    return taps;
  }
  // (Bi/tri)linear: a corner per subset of dims taking the upper neighbour;
  // its weight is the product over dims of (coordinate - lower) there and
  // (upper - coordinate) elsewhere.
  std::vector<Value> lower, upper, above, below;
  for (size_t d = 0; d < k; ++d) {
    lower.push_back(m.floor(x[d].at));
    upper.push_back(m.add(lower[d], one));
    above.push_back(m.sub(x[d].at, lower[d]));  // the upper neighbour's factor
    below.push_back(m.sub(upper[d], x[d].at));  // the lower neighbour's factor
  }
  for (int corner = 0; corner < (1 << k); ++corner) {
    auto high = [&](size_t d) { return ((corner >> (k - 1 - d)) & 1) != 0; };
    Tap tap;
    std::optional<Value> weight;
    for (size_t d = 0; d < k; ++d) {
      tap.at.push_back(high(d) ? upper[d] : lower[d]);
      Value f = high(d) ? above[d] : below[d];
      weight = weight ? m.mul(*weight, f) : f;
    }
    tap.weight = *weight;
    for (size_t d = 0; d < k; ++d) {
      std::optional<Value> dw;
      for (size_t e = 0; e < k; ++e) {
        Value f = e == d ? m.c(high(d) ? 1 : -1) : (high(e) ? above[e] : below[e]);
        dw = dw ? m.mul(*dw, f) : f;
      }
      tap.dweight.push_back(*dw);
    }
    taps.push_back(tap);
  }
  return taps;
}

// The CPU's checks in its order (check_grid_sampler_common, then the
// rank's own).
Geometry check_and_geometry(const char* op, int k, const at::Tensor& input, const at::Tensor& grid,
                            int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  TORCH_CHECK(input.size(0) == grid.size(0),
              "grid_sampler(): expected grid and input to have same batch size, but got input "
              "with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(grid.size(-1) == input.dim() - 2, "grid_sampler(): expected grid to have size ",
              input.dim() - 2, " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t i = 2; i < input.dim(); ++i) {
    TORCH_CHECK(input.size(i) > 0,
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                "has sizes ",
                input.sizes(), " with dimension ", i, " being empty");
  }
  TORCH_CHECK(input.dim() == k + 2 && grid.dim() == k + 2, "grid_sampler(): expected ", k + 2,
              "D input and grid with same number of dimensions, but got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(k == 2 || interpolation_mode != static_cast<int64_t>(Interpolation::kBicubic),
              "grid_sampler(): bicubic interpolation only supports 4D input");
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(),
              "grid_sampler(): expected input and grid to have the same dtype, but input has ",
              input.scalar_type(), " and grid has ", grid.scalar_type());
  TORCH_CHECK(interpolation_mode >= 0 && interpolation_mode <= 2, op,
              ": unknown interpolation mode ", interpolation_mode);
  TORCH_CHECK(padding_mode >= 0 && padding_mode <= 2, op, ": unknown padding mode ", padding_mode);
  const at::ScalarType st = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(st) && !c10::isFloat8Type(st), "\"", op,
                              "\" not implemented for '", c10::toString(st), "'");
  Geometry g;
  g.n = input.size(0);
  g.c = input.size(1);
  for (int d = 0; d < k; ++d) {
    g.in.push_back(input.size(2 + d));
    g.out.push_back(grid.size(1 + d));
  }
  g.interpolation = static_cast<Interpolation>(interpolation_mode);
  g.padding = static_cast<Padding>(padding_mode);
  g.align_corners = align_corners;
  return g;
}

ElementType compute_type(const at::Tensor& t) {
  return t.scalar_type() == at::kDouble ? ElementType::kF64 : ElementType::kF32;
}

// (n * C + c) * prod(in) for every [N, C, *out] position.
Value plane_base(Builder& b, const Geometry& g) {
  const std::vector<int64_t> full = g.full_dims();
  Value n = b.iota({ElementType::kS64, full}, 0), c = b.iota({ElementType::kS64, full}, 1);
  auto k = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kS64, v), full); };
  int64_t plane = 1;
  for (int64_t s : g.in) plane *= s;
  return b.binary("multiply", b.binary("add", b.binary("multiply", n, k(g.c)), c), k(plane));
}

// The grid's coordinates, one [N, *out] value per spatial dim, outermost
// first (the grid's last dim lists them innermost first: x, y[, z]).
std::vector<Value> grid_coordinates(Builder& b, Value grid, const Geometry& g) {
  const int64_t k = static_cast<int64_t>(g.rank());
  std::vector<Value> coords;
  for (int64_t d = 0; d < k; ++d) {
    std::vector<int64_t> start(k + 2, 0), limit = g.sample_dims(), step(k + 2, 1);
    limit.push_back(k - d);
    start[k + 1] = k - 1 - d;
    coords.push_back(b.reshape(b.slice(grid, start, limit, step), g.sample_dims()));
  }
  return coords;
}

std::string grid_key(const char* name, const Geometry& g) {
  return program_key(name, static_cast<int64_t>(g.interpolation), static_cast<int64_t>(g.padding),
                     g.align_corners);
}

at::Tensor grid_sample(const char* op, int k, const at::Tensor& input, const at::Tensor& grid,
                       int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  const Geometry g =
      check_and_geometry(op, k, input, grid, interpolation_mode, padding_mode, align_corners);
  at::Tensor out = device_empty(g.full_dims(), input.options());
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType ct = compute_type(input);
  TensorProgram program(op, grid_key("grid_sample", g));
  program.input(input);
  program.input(grid);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const Math m{b, ct, g.sample_dims()};
    Value flat = b.convert(b.reshape(in[0], {g.input_numel()}), ct);
    std::vector<Coordinate> coords;
    const Taps taps{b, g, ct, plane_base(b, g)};
    std::optional<Value> sum;
    for (const Tap& tap : taps_of(m, grid_coordinates(b, b.convert(in[1], ct), g), g, &coords)) {
      Value term = b.binary("multiply", taps.read(m, flat, tap.at), taps.broadcast(tap.weight));
      sum = sum ? b.binary("add", *sum, term) : term;
    }
    return std::vector<Value>{b.convert(*sum, t)};
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> grid_sample_backward(
    const char* op, int k, const at::Tensor& grad_output, const at::Tensor& input,
    const at::Tensor& grid, int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
    std::array<bool, 2> output_mask) {
  const Geometry g =
      check_and_geometry(op, k, input, grid, interpolation_mode, padding_mode, align_corners);
  TORCH_CHECK(grad_output.sizes().vec() == g.full_dims(), op, ": expected grad_output of sizes ",
              g.full_dims(), ", got ", grad_output.sizes());
  at::Tensor grad_input =
      output_mask[0] ? device_empty(input.sizes(), input.options()) : at::Tensor();
  at::Tensor grad_grid = device_empty(grid.sizes(), grid.options());
  if (grad_grid.numel() == 0 && (!grad_input.defined() || grad_input.numel() == 0)) {
    return {grad_input, grad_grid};
  }
  const ElementType t = element_type_for(input.scalar_type(), op);
  const ElementType ct = compute_type(input);
  TensorProgram program(op, program_key("grid_sample_bwd", grid_key("", g), output_mask[0]));
  program.input(grad_output);
  program.input(input);
  program.input(grid);
  if (grad_input.defined()) program.output(grad_input);
  program.output(grad_grid);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const Math m{b, ct, g.sample_dims()};
    const int64_t total = g.input_numel();
    int64_t samples = 1;
    for (int64_t s : g.full_dims()) samples *= s;
    Value go = b.convert(in[0], ct);
    Value flat = b.convert(b.reshape(in[1], {total}), ct);
    std::vector<Coordinate> coords;
    const Taps taps{b, g, ct, plane_base(b, g)};
    Value acc = b.zeros({ct, {total}});
    // d loss / d pixel coordinate per spatial dim, [N, C, *out]
    std::vector<std::optional<Value>> dcoord(g.rank());
    for (const Tap& tap : taps_of(m, grid_coordinates(b, b.convert(in[2], ct), g), g, &coords)) {
      if (grad_input.defined()) {
        Value ok = taps.inside(m, tap.at);
        Value updates = b.binary("multiply", go, taps.broadcast(tap.weight));
        acc = b.scatter_1d(acc, b.reshape(taps.index(m, tap.at, ok, true), {samples}),
                           b.reshape(updates, {samples}), "add");
      }
      if (g.interpolation == Interpolation::kNearest) continue;
      Value v = b.binary("multiply", go, taps.read(m, flat, tap.at));
      for (size_t d = 0; d < g.rank(); ++d) {
        Value term = b.binary("multiply", v, taps.broadcast(tap.dweight[d]));
        dcoord[d] = dcoord[d] ? b.binary("add", *dcoord[d], term) : term;
      }
    }
    std::vector<Value> results;
    if (grad_input.defined()) results.push_back(b.convert(b.reshape(acc, input.sizes().vec()), t));
    // The grid's last dim lists the coordinates innermost first.
    std::vector<int64_t> column = g.sample_dims();
    column.push_back(1);
    std::vector<Value> columns;
    for (size_t j = 0; j < g.rank(); ++j) {
      const size_t d = g.rank() - 1 - j;
      Value per_sample = dcoord[d] ? m.mul(b.reduce(*dcoord[d], b.constant(ct, 0), {1}, "add"),
                                           coords[d].grad)  // summed over channels
                                   : m.c(0);
      columns.push_back(b.reshape(per_sample, column));
    }
    results.push_back(b.convert(b.concatenate(columns, static_cast<int64_t>(g.rank()) + 1), t));
    return results;
  });
  return {grad_input, grad_grid};
}

}  // namespace

at::Tensor grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid,
                           int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  return grid_sample("grid_sampler_2d", 2, input, grid, interpolation_mode, padding_mode,
                     align_corners);
}

std::tuple<at::Tensor, at::Tensor> grid_sampler_2d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid,
    int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
    std::array<bool, 2> output_mask) {
  return grid_sample_backward("grid_sampler_2d_backward", 2, grad_output, input, grid,
                              interpolation_mode, padding_mode, align_corners, output_mask);
}

at::Tensor grid_sampler_3d(const at::Tensor& input, const at::Tensor& grid,
                           int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  return grid_sample("grid_sampler_3d", 3, input, grid, interpolation_mode, padding_mode,
                     align_corners);
}

std::tuple<at::Tensor, at::Tensor> grid_sampler_3d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid,
    int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
    std::array<bool, 2> output_mask) {
  return grid_sample_backward("grid_sampler_3d_backward", 3, grad_output, input, grid,
                              interpolation_mode, padding_mode, align_corners, output_mask);
}

}  // namespace torch_tpu::ops
