// How tpu random ops draw: see ops/random_draws.h.
#include "ops/random_draws.h"

#include <ATen/core/DistributionsHelper.h>

#include <cmath>
#include <mutex>

#include "device/generator.h"

namespace torch_tpu::ops {

using hlo::Builder;
using hlo::ElementType;
using hlo::TensorType;
using hlo::Value;

RandomProgram::RandomProgram(const char* op, const std::string& key,
                             const std::optional<at::Generator>& gen, int device_index,
                             uint64_t count)
    : program_(op, key) {
  auto* g = at::get_generator_or_default<TpuGeneratorImpl>(
      gen, default_generator(static_cast<c10::DeviceIndex>(device_index)));
  std::lock_guard<std::mutex> lock(g->mutex_);
  program_.scalar(c10::Scalar(static_cast<int64_t>(g->current_seed())), ElementType::kU64);
  // Keep offsets aligned so draws of any size start on a fresh block.
  program_.scalar(c10::Scalar(static_cast<int64_t>(g->reserve((count + 3) / 4 * 4))),
                  ElementType::kU64);
}

Value random_bits(Builder& b, Value seed, Value offset, const TensorType& type) {
  Value state = b.concatenate({b.reshape(seed, {1}), b.reshape(offset, {1})}, 0);
  return b.rng_bit_generator(state, type)[1];
}

Value uniform01(Builder& b, Value seed, Value offset, const std::vector<int64_t>& dims,
                ElementType compute) {
  const bool f64 = compute == ElementType::kF64;
  const ElementType bits_t = f64 ? ElementType::kU64 : ElementType::kU32;
  Value bits = random_bits(b, seed, offset, {bits_t, dims});
  const int keep = f64 ? 53 : 24;
  Value shift = b.splat(b.constant_int(bits_t, (f64 ? 64 : 32) - keep), dims);
  Value mantissa = b.convert(b.binary("shift_right_logical", bits, shift), compute);
  return b.binary("multiply", mantissa, b.splat(b.constant(compute, std::ldexp(1.0, -keep)), dims));
}

Value open_uniform01(Builder& b, Value seed, Value offset, const std::vector<int64_t>& dims,
                     ElementType compute) {
  const int keep = compute == ElementType::kF64 ? 53 : 24;
  return b.binary("add", uniform01(b, seed, offset, dims, compute),
                  b.splat(b.constant(compute, std::ldexp(1.0, -keep - 1)), dims));
}

Value standard_normal(Builder& b, Value seed, Value offset, const std::vector<int64_t>& dims,
                      ElementType c) {
  std::vector<int64_t> two = dims;
  two.insert(two.begin(), 2);
  Value u = uniform01(b, seed, offset, two, c);
  std::vector<int64_t> start(two.size(), 0), limit = two, step(two.size(), 1);
  limit[0] = 1;
  Value u1 = b.reshape(b.slice(u, start, limit, step), dims);
  start[0] = 1;
  limit[0] = 2;
  Value u2 = b.reshape(b.slice(u, start, limit, step), dims);
  Value one = b.splat(b.constant(c, 1), dims);
  Value r = b.unary("sqrt", b.binary("multiply", b.splat(b.constant(c, -2), dims),
                                     b.unary("log", b.binary("subtract", one, u1))));
  Value theta = b.binary("multiply", b.splat(b.constant(c, 2 * M_PI), dims), u2);
  return b.binary("multiply", r, b.unary("cosine", theta));
}

ElementType float_compute(ElementType t) {
  return t == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
}

int draw_device(const at::Tensor& t) { return t.device().index() < 0 ? 0 : t.device().index(); }

}  // namespace torch_tpu::ops
