// torch.complex(real, imag) and torch.polar(abs, angle): complex tensors
// built from two real ones (rotary embeddings written with polar, signal
// processing), one program each, with CPU's dtype rules.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>

#include "core/dtype_map.h"
#include "ops/broadcast.h"
#include "ops/kernels.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Value;

at::ScalarType complex_result(const at::Tensor& a, const at::Tensor& b) {
  const auto ta = a.scalar_type(), tb = b.scalar_type();
  TORCH_CHECK(ta == tb, "Expected object of scalar type ", ta, " but got scalar type ", tb,
              " for second argument");
  TORCH_CHECK(ta == at::kFloat || ta == at::kDouble || ta == at::kHalf,
              "Expected both inputs to be Half, Float or Double tensors but got ", ta, " and ", tb);
  return c10::toComplexType(ta);
}

// out = build(first, second) elementwise over the broadcast shape.
template <typename Build>
at::Tensor& construct(const char* op, const at::Tensor& first, const at::Tensor& second,
                      at::Tensor& out, Build build) {
  const at::ScalarType result = complex_result(first, second);
  check_out_dtype(op, out, result);
  at::native::resize_output(out, at::infer_size(first.sizes(), second.sizes()));
  if (out.numel() == 0) return out;
  const hlo::ElementType complex = element_type_for(result, op);
  const auto dims = out.sizes().vec();
  TensorProgram program(op, op);
  program.input(first);
  program.input(second);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = broadcast_to(b, in[0], dims), y = broadcast_to(b, in[1], dims);
    auto [re, im] = build(b, x, y);
    return std::vector<Value>{b.op("stablehlo.complex", {re, im}, {complex, dims})};
  });
  return out;
}

}  // namespace

at::Tensor& complex_out(const at::Tensor& real, const at::Tensor& imag, at::Tensor& out) {
  return construct("complex", real, imag, out,
                   [](Builder&, Value re, Value im) { return std::make_pair(re, im); });
}

at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  return construct("polar", abs, angle, out, [](Builder& b, Value r, Value theta) {
    return std::make_pair(b.binary("multiply", r, b.unary("cosine", theta)),
                          b.binary("multiply", r, b.unary("sine", theta)));
  });
}

}  // namespace torch_tpu::ops
