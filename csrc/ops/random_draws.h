// The pieces every tpu random op is drawn with: a program keyed to the
// generator's (seed, offset) and the StableHLO that turns those two runtime
// scalars into uniform or normal values.
//
// Every draw is stablehlo.rng_bit_generator (Threefry) keyed by the
// generator's seed and a counter offset that the generator advances by the
// number of values drawn, so a seed gives the same sequence on every run and
// consecutive draws never reuse counters. Seed and offset are runtime
// scalars: drawing again does not recompile.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {

// A program that draws random bits: its first two runtime scalars are the
// generator's seed and the offset reserved for this draw of up to `count`
// 32-bit values.
class RandomProgram {
 public:
  RandomProgram(const char* op, const std::string& key, const std::optional<at::Generator>& gen,
                int device_index, uint64_t count);
  TensorProgram& program() { return program_; }

 private:
  TensorProgram program_;
};

// The device index a draw for `t` uses (the current device's generator for
// an index-less device).
int draw_device(const at::Tensor& t);

// Random bits of `type` (ui32 or ui64) from the (seed, offset) parameters.
hlo::Value random_bits(hlo::Builder& b, hlo::Value seed, hlo::Value offset,
                       const hlo::TensorType& type);

// Uniform [0, 1) in f32 (24 random bits) or f64 (53 bits), as CPU does.
hlo::Value uniform01(hlo::Builder& b, hlo::Value seed, hlo::Value offset,
                     const std::vector<int64_t>& dims, hlo::ElementType compute);

// Uniform in the open interval (0, 1): the same bits as uniform01, each
// value moved half a step up, so a log never sees 0 and a tan never -pi/2.
hlo::Value open_uniform01(hlo::Builder& b, hlo::Value seed, hlo::Value offset,
                          const std::vector<int64_t>& dims, hlo::ElementType compute);

// Standard normal values (Box-Muller on two uniforms; 1 - u1 is in (0, 1],
// so the log is finite).
hlo::Value standard_normal(hlo::Builder& b, hlo::Value seed, hlo::Value offset,
                           const std::vector<int64_t>& dims, hlo::ElementType compute);

// The type a draw computes in: f64 for double results, f32 otherwise.
hlo::ElementType float_compute(hlo::ElementType t);

}  // namespace torch_tpu::ops
