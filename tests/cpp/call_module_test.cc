// A module whose main calls separately lowered functions (how a DeferAndFuse
// region becomes one program), run through the PJRT runtime layer with no
// PyTorch involved (TORCH_TPU_PJRT_PLUGIN names the plugin, as for
// runtime_test.cc).
#include "hlo/call_module.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "pjrt/client.h"
#include "plugin_client.h"

namespace torch_tpu {
namespace {

hlo::CalledFunction lowered(const std::string& name, const hlo::Builder& b) {
  hlo::CalledFunction f{
      name, b.function_text(name), b.parameter_types(), {}, b.external_functions()};
  for (const hlo::Value& r : b.results()) f.results.push_back(r.type);
  return f;
}

const hlo::TensorType kVec{hlo::ElementType::kF32, {3}};

// (x, y) -> (x + y, x * y)
hlo::CalledFunction sum_and_product() {
  hlo::Builder b;
  auto x = b.parameter(kVec);
  auto y = b.parameter(kVec);
  b.set_results({b.binary("add", x, y), b.binary("multiply", x, y)});
  return lowered("op0", b);
}

// x -> x - 1
hlo::CalledFunction minus_one() {
  hlo::Builder b;
  auto x = b.parameter(kVec);
  b.set_results({b.binary("subtract", x, b.splat(b.constant(kVec.element, 1.0), {3}))});
  return lowered("op1", b);
}

TEST(CallModule, ThreadsValuesBetweenCallsAndReturnsTheChosenOnes) {
  const hlo::CalledFunction f = sum_and_product();
  const hlo::CalledFunction g = minus_one();
  hlo::CallSequence seq;
  seq.params = {kVec, kVec};
  // c0 = f(arg0, arg1); c1 = g(c0#1); c2 = f(c1, c0#0); return c2#0, c1
  seq.calls.push_back({&f, {{-1, 0}, {-1, 1}}});
  seq.calls.push_back({&g, {{0, 1}}});
  seq.calls.push_back({&f, {{1, 0}, {0, 0}}});
  seq.results = {{2, 0}, {1, 0}};
  const std::string text = hlo::call_module_text(seq);
  // each function is emitted once however often it is called
  EXPECT_EQ(text.find("func.func private @op0"), text.rfind("func.func private @op0"));

  auto c = plugin_client();
  auto exe = c->compile(text, pjrt::single_device_compile_options());
  std::vector<float> x{1, 2, 3}, y{4, 5, 6};
  std::vector<pjrt::BufferPtr> args;
  for (auto* data : {&x, &y}) {
    args.push_back(c->buffer_from_host(data->data(), PJRT_Buffer_Type_F32, {3}, c->devices().at(0),
                                       pjrt::HostSemantics::kCopyDuringCall)
                       .buffer);
  }
  auto result = exe->execute({args[0]->raw(), args[1]->raw()}, c->devices().at(0).raw);
  result.done->await();
  ASSERT_EQ(result.outputs.size(), 2u);
  std::vector<float> first(3), second(3);
  result.outputs[0]->to_host_async(first.data(), sizeof(float) * 3)->await();
  result.outputs[1]->to_host_async(second.data(), sizeof(float) * 3)->await();
  // c1 = x*y - 1 = {3, 9, 17}; c2#0 = c1 + (x + y) = {8, 16, 26}
  EXPECT_EQ(second, (std::vector<float>{3, 9, 17}));
  EXPECT_EQ(first, (std::vector<float>{8, 16, 26}));
}

// A user kernel's functions (torch_tpu.kernels): x -> x * x + 1, through a
// helper of its own.
const auto kSquarePlusOne = std::make_shared<const std::string>(R"(
  func.func private @k_sq_helper(%a: tensor<3xf32>) -> tensor<3xf32> {
    %r = "stablehlo.multiply"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%r) : (tensor<3xf32>) -> ()
  }
  func.func private @k_sq_main(%a: tensor<3xf32>) -> tensor<3xf32> {
    %s = "func.call"(%a) {callee = @k_sq_helper} : (tensor<3xf32>) -> tensor<3xf32>
    %one = "stablehlo.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
    %r = "stablehlo.add"(%s, %one) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%r) : (tensor<3xf32>) -> ()
  }
)");

TEST(CallModule, AKernelCalledFromTwoFunctionsIsDefinedOnce) {
  // f(x) = kernel(x) - x; g(x) = kernel(x + x): two fragments calling it
  hlo::Builder fb;
  auto x = fb.parameter(kVec);
  fb.set_results({fb.binary("subtract", fb.call("k_sq_main", kSquarePlusOne, {x}, {kVec})[0], x)});
  const hlo::CalledFunction f = lowered("op0", fb);
  hlo::Builder gb;
  auto y = gb.parameter(kVec);
  gb.set_results({gb.call("k_sq_main", kSquarePlusOne, {gb.binary("add", y, y)}, {kVec})[0]});
  const hlo::CalledFunction g = lowered("op1", gb);
  EXPECT_THROW(gb.call("k_sq_main", std::make_shared<const std::string>("other"), {y}, {kVec}),
               std::invalid_argument);
  hlo::CallSequence seq;
  seq.params = {kVec};
  seq.calls.push_back({&f, {{-1, 0}}});
  seq.calls.push_back({&g, {{0, 0}}});
  seq.results = {{1, 0}};
  const std::string text = hlo::call_module_text(seq);
  EXPECT_EQ(text.find("@k_sq_main("), text.rfind("@k_sq_main("));

  auto c = plugin_client();
  auto exe = c->compile(text, pjrt::single_device_compile_options());
  std::vector<float> in{1, 2, 3};
  auto arg = c->buffer_from_host(in.data(), PJRT_Buffer_Type_F32, {3}, c->devices().at(0),
                                 pjrt::HostSemantics::kCopyDuringCall)
                 .buffer;
  auto result = exe->execute({arg->raw()}, c->devices().at(0).raw);
  result.done->await();
  std::vector<float> out(3);
  result.outputs.at(0)->to_host_async(out.data(), sizeof(float) * 3)->await();
  // f = x*x + 1 - x = {1, 3, 7}; g = (2f)^2 + 1 = {5, 37, 197}
  EXPECT_EQ(out, (std::vector<float>{5, 37, 197}));
}

// (v, s, keep) -> keep ? v * s : v
hlo::CalledFunction scale_if() {
  hlo::Builder b;
  auto v = b.parameter(kVec);
  auto s = b.parameter({hlo::ElementType::kF32, {}});
  auto keep = b.parameter({hlo::ElementType::kPred, {3}});
  b.set_results({b.select(keep, b.binary("multiply", v, b.splat(s, {3})), v)});
  return lowered("op2", b);
}

TEST(CallModule, ConstantParametersAreDefinedInMainAndNotTaken) {
  const hlo::CalledFunction f = scale_if();
  hlo::CallSequence seq;
  seq.params = {kVec, {hlo::ElementType::kF32, {}}, {hlo::ElementType::kPred, {3}}};
  seq.calls.push_back({&f, {{-1, 0}, {-1, 1}, {-1, 2}}});
  seq.results = {{0, 0}};
  const float scale = 2.5f;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&scale);
  seq.constants[1] = std::vector<unsigned char>(bytes, bytes + sizeof(scale));
  seq.constants[2] = {1, 0, 1};
  const std::string text = hlo::call_module_text(seq);

  auto c = plugin_client();
  auto exe = c->compile(text, pjrt::single_device_compile_options());
  std::vector<float> x{1, 2, 3};
  auto arg = c->buffer_from_host(x.data(), PJRT_Buffer_Type_F32, {3}, c->devices().at(0),
                                 pjrt::HostSemantics::kCopyDuringCall)
                 .buffer;
  auto result = exe->execute({arg->raw()}, c->devices().at(0).raw);  // the one parameter left
  result.done->await();
  std::vector<float> out(3);
  result.outputs.at(0)->to_host_async(out.data(), sizeof(float) * 3)->await();
  EXPECT_EQ(out, (std::vector<float>{2.5f, 2, 7.5f}));
}

TEST(CallModule, RejectsArgumentsOfTheWrongTypeOrCount) {
  const hlo::CalledFunction g = minus_one();
  hlo::CallSequence seq;
  seq.params = {hlo::TensorType{hlo::ElementType::kF32, {4}}};
  seq.calls.push_back({&g, {{-1, 0}}});
  seq.results = {{0, 0}};
  EXPECT_THROW(hlo::call_module_text(seq), std::invalid_argument);
  seq.params = {kVec};
  seq.calls[0].args.push_back({-1, 0});
  EXPECT_THROW(hlo::call_module_text(seq), std::invalid_argument);
}

}  // namespace
}  // namespace torch_tpu
