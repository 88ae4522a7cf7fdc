// Runs small StableHLO programs through the PJRT runtime layer, with no
// PyTorch involved. The plugin path comes from TORCH_TPU_PJRT_PLUGIN (set by
// tests/test_cpp_runtime.py, which runs this binary against each plugin).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "pjrt/client.h"
#include "pjrt/padded_args.h"
#include "plugin_client.h"

namespace torch_tpu {
namespace {

template <typename T>
std::vector<T> to_host(const pjrt::Buffer& b) {
  std::vector<T> out(b.element_count());
  b.to_host_async(out.data(), out.size() * sizeof(T))->await();
  return out;
}

pjrt::BufferPtr upload_f32(const std::vector<float>& data, const std::vector<int64_t>& dims) {
  auto c = plugin_client();
  return c
      ->buffer_from_host(data.data(), PJRT_Buffer_Type_F32, dims, c->devices().at(0),
                         pjrt::HostSemantics::kCopyDuringCall)
      .buffer;
}

std::vector<pjrt::BufferPtr> run(const hlo::Builder& b, const std::vector<pjrt::BufferPtr>& args) {
  auto c = plugin_client();
  auto exe = c->compile(b.module_text(), pjrt::single_device_compile_options());
  std::vector<PJRT_Buffer*> raw;
  for (const auto& a : args) raw.push_back(a->raw());
  auto result = exe->execute(raw, c->devices().at(0).raw);
  result.done->await();
  return result.outputs;
}

TEST(PaddedArgs, ReportsLargerSizeAndZeroFills) {
  pjrt::PaddedArgs<PJRT_Buffer_Destroy_Args> args;
  EXPECT_GT(args->struct_size, sizeof(PJRT_Buffer_Destroy_Args));
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(args.get());
  for (size_t i = sizeof(PJRT_Buffer_Destroy_Args); i < args->struct_size; ++i) {
    ASSERT_EQ(bytes[i], 0) << i;
  }
}

TEST(Runtime, ClientHasDevices) {
  auto c = plugin_client();
  EXPECT_FALSE(c->platform_name().empty());
  ASSERT_GE(c->devices().size(), 1u);
  EXPECT_GE(c->api().minor_version(), 54);
}

TEST(Runtime, AddTwoVectors) {
  hlo::Builder b;
  hlo::TensorType t{hlo::ElementType::kF32, {4}};
  auto x = b.parameter(t);
  auto y = b.parameter(t);
  b.set_results({b.binary("add", x, y)});
  auto out = run(b, {upload_f32({1, 2, 3, 4}, {4}), upload_f32({10, 20, 30, 40}, {4})});
  EXPECT_EQ(to_host<float>(*out.at(0)), (std::vector<float>{11, 22, 33, 44}));
}

// A while loop writing row i of an output from row i of the input and the
// previous row (out[i] = out[i-1] * 2 + x[i]), with computed slice starts and
// a reduce (a region inside the loop's region) for a carried total.
TEST(Runtime, WhileLoopWithComputedSlices) {
  using hlo::ElementType;
  using hlo::TensorType;
  hlo::Builder b;
  const TensorType rows{ElementType::kF32, {4, 2}}, row{ElementType::kF32, {1, 2}};
  const TensorType i64{ElementType::kS64, {}}, scalar{ElementType::kF32, {}};
  auto x = b.parameter(rows);
  auto init = std::vector<hlo::Value>{
      b.constant_int(ElementType::kS64, 1), x,
      b.dynamic_slice(
          x, {b.constant_int(ElementType::kS64, 0), b.constant_int(ElementType::kS64, 0)}, {1, 2}),
      b.zeros(rows), b.zeros(scalar)};
  auto out = b.while_loop(
      init,
      [&](hlo::Builder& c, const std::vector<hlo::Value>& v) {
        return c.compare(hlo::Compare::kLT, v[0], c.constant_int(ElementType::kS64, 4));
      },
      [&](hlo::Builder& c, const std::vector<hlo::Value>& v) {
        auto zero = c.constant_int(ElementType::kS64, 0);
        auto xi = c.dynamic_slice(v[1], {v[0], zero}, {1, 2});
        auto next = c.binary(
            "add", c.binary("multiply", v[2], c.splat(c.constant(ElementType::kF32, 2), {1, 2})),
            xi);
        auto written = c.dynamic_update_slice_at(v[3], next, {v[0], zero});
        auto total =
            c.binary("add", v[4], c.reduce(next, c.constant(ElementType::kF32, 0), {0, 1}, "add"));
        return std::vector<hlo::Value>{c.binary("add", v[0], c.constant_int(ElementType::kS64, 1)),
                                       v[1], next, written, total};
      });
  EXPECT_EQ(out.size(), 5u);
  EXPECT_TRUE(out[3].type == rows && out[2].type == row && out[0].type == i64);
  b.set_results({out[3], out[4]});
  auto got = run(b, {upload_f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})});
  // Rows 1..3: (1,2)*2+(3,4) = (5,8); (5,8)*2+(5,6) = (15,22); (15,22)*2+(7,8) = (37,52).
  EXPECT_EQ(to_host<float>(*got.at(0)), (std::vector<float>{0, 0, 5, 8, 15, 22, 37, 52}));
  EXPECT_EQ(to_host<float>(*got.at(1)), (std::vector<float>{13 + 37 + 89}));
}

// A parameter aliased to a result (tf.aliasing_output) is donated at launch
// unless the launch lists it as non-donatable, where XLA copies it: the
// caller's buffer then keeps its old contents. Both give the same result.
TEST(Runtime, AliasedParameterDonatedOnlyWhenAllowed) {
  using hlo::ElementType;
  hlo::Builder b;
  auto base = b.parameter({ElementType::kF32, {6}});
  auto start = b.parameter({ElementType::kS64, {}});
  auto update = b.splat(b.constant(ElementType::kF32, 7), {2});
  b.set_results({b.dynamic_update_slice_at(base, update, {start})});
  b.alias_result(base, 0);
  EXPECT_NE(b.module_text().find("{tf.aliasing_output = 0 : i32}"), std::string::npos);
  auto c = plugin_client();
  auto exe = c->compile(b.module_text(), pjrt::single_device_compile_options());
  const int64_t two = 2;
  auto start_buffer = c->buffer_from_host(&two, PJRT_Buffer_Type_S64, {}, c->devices().at(0),
                                          pjrt::HostSemantics::kCopyDuringCall)
                          .buffer;
  const std::vector<float> expected{0, 1, 7, 7, 4, 5};

  auto kept = upload_f32({0, 1, 2, 3, 4, 5}, {6});
  auto copied = exe->execute({kept->raw(), start_buffer->raw()}, c->devices().at(0).raw, {0});
  copied.done->await();
  EXPECT_FALSE(kept->is_deleted());
  EXPECT_EQ(to_host<float>(*kept), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(to_host<float>(*copied.outputs.at(0)), expected);

  auto donated = upload_f32({0, 1, 2, 3, 4, 5}, {6});
  auto in_place = exe->execute({donated->raw(), start_buffer->raw()}, c->devices().at(0).raw);
  in_place.done->await();
  EXPECT_TRUE(donated->is_deleted());
  EXPECT_EQ(to_host<float>(*in_place.outputs.at(0)), expected);
}

TEST(Runtime, ConstantsAreExact) {
  hlo::Builder b;
  b.set_results({b.constant(hlo::ElementType::kF32, 0.1),
                 b.constant_int(hlo::ElementType::kS64, -(int64_t(1) << 40))});
  auto out = run(b, {});
  EXPECT_EQ(to_host<float>(*out.at(0)).at(0), 0.1f);
  EXPECT_EQ(to_host<int64_t>(*out.at(1)).at(0), -(int64_t(1) << 40));
}

TEST(Runtime, GatherScatterTransposeSlice) {
  hlo::Builder b;
  auto x = b.parameter({hlo::ElementType::kF32, {6}});
  auto idx = b.iota({hlo::ElementType::kS64, {3}}, 0);
  auto two = b.splat(b.constant_int(hlo::ElementType::kS64, 2), {3});
  auto even = b.binary("multiply", idx, two);  // 0, 2, 4
  auto gathered = b.gather_1d(x, even);
  auto scattered = b.scatter_1d(x, even, b.zeros({hlo::ElementType::kF32, {3}}));
  auto transposed = b.transpose(b.reshape(x, {2, 3}), {1, 0});
  auto sliced = b.slice(x, {1}, {6}, {2});
  b.set_results({gathered, scattered, transposed, sliced});
  auto out = run(b, {upload_f32({0, 1, 2, 3, 4, 5}, {6})});
  EXPECT_EQ(to_host<float>(*out[0]), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(to_host<float>(*out[1]), (std::vector<float>{0, 1, 0, 3, 0, 5}));
  EXPECT_EQ(to_host<float>(*out[2]), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(to_host<float>(*out[3]), (std::vector<float>{1, 3, 5}));
}

// Whether each element is NaN, and the others' values (NaN != NaN, so
// vectors holding NaN cannot be compared with ==).
std::vector<float> nan_as(const std::vector<float>& v, float marker) {
  std::vector<float> out = v;
  for (float& x : out) {
    if (std::isnan(x)) x = marker;
  }
  return out;
}

TEST(Builder, MaximumAndMinimumPropagateNaNFromEitherOperand) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  hlo::Builder b;
  hlo::TensorType t{hlo::ElementType::kF32, {5}};
  auto x = b.parameter(t);
  auto y = b.parameter(t);
  b.set_results({b.maximum(x, y), b.minimum(x, y), b.binary("maximum", y, x)});
  auto out = run(b, {upload_f32({1, nan, 3, nan, -1}, {5}), upload_f32({2, 1, nan, nan, -2}, {5})});
  EXPECT_EQ(nan_as(to_host<float>(*out[0]), 99), (std::vector<float>{2, 99, 99, 99, -1}));
  EXPECT_EQ(nan_as(to_host<float>(*out[1]), 99), (std::vector<float>{1, 99, 99, 99, -2}));
  EXPECT_EQ(nan_as(to_host<float>(*out[2]), 99), (std::vector<float>{2, 99, 99, 99, -1}));
}

TEST(Builder, MaxReduceAndScatterPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  hlo::Builder b;
  auto x = b.parameter({hlo::ElementType::kF32, {2, 4}});
  auto lowest = b.constant(hlo::ElementType::kF32, -inf);
  auto highest = b.constant(hlo::ElementType::kF32, inf);
  auto row_max = b.reduce(x, lowest, {1}, "maximum");
  auto row_min = b.reduce(x, highest, {1}, "minimum");
  // Scatter every element of x onto position 0 or 1 of a zero vector.
  auto flat = b.reshape(x, {8});
  auto to = b.binary("remainder", b.iota({hlo::ElementType::kS64, {8}}, 0),
                     b.splat(b.constant_int(hlo::ElementType::kS64, 2), {8}));
  auto scattered = b.scatter_1d(b.zeros({hlo::ElementType::kF32, {2}}), to, flat, "maximum");
  auto window = b.reduce_window(x, lowest, {1, 2}, {1, 2}, {1, 1}, {{0, 0}, {0, 0}}, "maximum");
  b.set_results({row_max, row_min, scattered, window});
  // Row 0 has a NaN in the middle, row 1 none; positions 0 and 1 of the
  // scatter receive columns 0, 2 and 1, 3.
  auto out = run(b, {upload_f32({1, 5, nan, 2, -3, 4, 0, 1}, {2, 4})});
  EXPECT_EQ(nan_as(to_host<float>(*out[0]), 99), (std::vector<float>{99, 4}));
  EXPECT_EQ(nan_as(to_host<float>(*out[1]), 99), (std::vector<float>{99, -3}));
  EXPECT_EQ(nan_as(to_host<float>(*out[2]), 99), (std::vector<float>{99, 5}));
  EXPECT_EQ(nan_as(to_host<float>(*out[3]), 99), (std::vector<float>{5, 99, 4, 1}));
}

TEST(Builder, IntegerMaximumIsThePlainOp) {
  // NaN handling costs integers nothing: no compare or select is emitted.
  hlo::Builder b;
  hlo::TensorType t{hlo::ElementType::kS32, {3}};
  auto x = b.parameter(t);
  b.set_results({b.maximum(x, b.parameter(t)),
                 b.reduce(x, b.constant_int(hlo::ElementType::kS32, 0), {0}, "minimum")});
  const std::string text = b.module_text();
  EXPECT_EQ(text.find("compare"), std::string::npos) << text;
  EXPECT_EQ(text.find("select"), std::string::npos) << text;
  EXPECT_NE(text.find("stablehlo.maximum"), std::string::npos) << text;
}

TEST(Runtime, BitcastAcrossWidths) {
  hlo::Builder b;
  auto x = b.parameter({hlo::ElementType::kF32, {2}});
  auto bytes = b.bitcast_convert(x, {hlo::ElementType::kU8, {2, 4}});
  b.set_results({b.reshape(bytes, {8})});
  auto out = run(b, {upload_f32({1.0f, -2.0f}, {2})});
  std::vector<float> src{1.0f, -2.0f};
  std::vector<uint8_t> expect(8);
  std::memcpy(expect.data(), src.data(), 8);
  EXPECT_EQ(to_host<uint8_t>(*out[0]), expect);
}

TEST(Runtime, SerializeRoundTrip) {
  hlo::Builder b;
  auto x = b.parameter({hlo::ElementType::kF32, {2}});
  b.set_results({b.binary("multiply", x, x)});
  auto c = plugin_client();
  auto exe = c->compile(b.module_text(), pjrt::single_device_compile_options());
  auto bytes = exe->serialize();
  ASSERT_FALSE(bytes.empty());
  auto loaded = c->deserialize(bytes);
  auto arg = upload_f32({3, 4}, {2});
  auto result = loaded->execute({arg->raw()}, c->devices().at(0).raw);
  result.done->await();
  EXPECT_EQ(to_host<float>(*result.outputs[0]), (std::vector<float>{9, 16}));
}

TEST(Runtime, CompileErrorIsException) {
  auto c = plugin_client();
  EXPECT_THROW(c->compile("this is not mlir", pjrt::single_device_compile_options()), pjrt::Error);
}

TEST(Runtime, MissingPluginIsException) {
  EXPECT_THROW(pjrt::Api::load("/nonexistent/plugin.so"), pjrt::Error);
}

}  // namespace
}  // namespace torch_tpu
