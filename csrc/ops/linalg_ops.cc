// Matrix products: mm, bmm, addmm, mv, dot, baddbmm (matmul and linear
// decompose into these in PyTorch itself).
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_efficientzerotensor.h>
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "core/runtime.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/matmul_forms.h"
#include "ops/out_checks.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

void check_same_dtype(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "expected m1 and m2 to have the same dtype, "
              "but got: ",
              a.scalar_type(), " != ", b.scalar_type());
}

// CPU's BLAS-backed kernels have no bool version (NotImplementedError naming
// the kernel); integer ones they have.
void refuse_bool(const at::Tensor& a, const char* kernel) {
  TORCH_CHECK_NOT_IMPLEMENTED(a.scalar_type() != at::kBool, "\"", kernel,
                              "\" not implemented for 'Bool'");
}

// out = beta * input + alpha * (a @ b), where `contract` builds a @ b. The
// scalars are runtime arguments; beta == 0 ignores `input` (even NaN), as
// PyTorch documents. Like CPU's kernels, half and bfloat16 scale and add in
// float (the scalars too, so beta = 1e30 is no overflow) and round once, and
// an empty contraction (a @ b of zero terms) leaves out beta * input, with
// no alpha * 0 term (alpha = inf would make it NaN).
void run_product(const char* op, const std::string& key, at::Tensor& out, const at::Tensor& a,
                 const at::Tensor& b, const at::Tensor* input, const at::Scalar& beta,
                 const at::Scalar& alpha,
                 const std::function<hlo::Value(hlo::Builder&, hlo::Value, hlo::Value)>& contract) {
  if (out.numel() == 0) return;
  const hlo::ElementType type = element_type_for(out.scalar_type(), op);
  const bool reduced = type == hlo::ElementType::kF16 || type == hlo::ElementType::kBF16;
  const hlo::ElementType opmath = reduced ? hlo::ElementType::kF32 : type;
  const bool empty_sum = a.dim() > 0 && a.size(-1) == 0;
  const bool use_input = input != nullptr && !beta.equal(0);
  const bool scale_input = use_input && !beta.equal(1);
  const bool scale_product = !empty_sum && !alpha.equal(1);
  TensorProgram program(op, key + ":" + hlo::mlir_name(type) + (use_input ? ":in" : "") +
                                (scale_input ? ":beta" : "") + (scale_product ? ":alpha" : "") +
                                (empty_sum ? ":empty" : ""));
  program.input(a);
  program.input(b);
  if (use_input) program.input(*input);
  if (scale_input) program.scalar(beta, opmath);
  if (scale_product) program.scalar(alpha, opmath);
  program.output(out);
  const std::vector<int64_t> shape = out.sizes().vec();
  program.run([&](hlo::Builder& bld, const std::vector<hlo::Value>& in) {
    size_t next = 2;
    hlo::Value result =
        empty_sum ? bld.zeros({opmath, shape}) : bld.convert(contract(bld, in[0], in[1]), opmath);
    hlo::Value bias;
    if (use_input) bias = broadcast_to(bld, bld.convert(in[next++], opmath), shape);
    if (scale_input) bias = bld.binary("multiply", bias, bld.splat(in[next++], shape));
    if (scale_product) result = bld.binary("multiply", result, bld.splat(in[next++], shape));
    if (use_input) result = empty_sum ? bias : bld.binary("add", bias, result);
    return std::vector<hlo::Value>{bld.convert(result, type)};
  });
}

// A 2-d product's (mm, addmm) cache key and contraction, decided once per
// call: the transposed-weight form where it applies.
struct Product2d {
  std::string key;
  hlo::Value (*contract)(hlo::Builder&, hlo::Value, hlo::Value);
};

Product2d product_2d(const char* op, const at::Tensor& mat1, const at::Tensor& mat2) {
  if (is_transposed_weight_product(mat1, mat2)) {
    return {std::string(op) + ":wt", matmul2d_transposed_rhs};
  }
  return {op, matmul2d};
}

hlo::Value matmul3d(hlo::Builder& b, hlo::Value x, hlo::Value y) {
  return b.dot_general(x, y, {0}, {0}, {2}, {1}, x.type.element);
}

void check_mm(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2, "self must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
              a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  check_same_dtype(a, b);
  refuse_bool(a, "addmm_impl_cpu_");
}

// addmm/baddbmm's input joins the product in its dtype.
void check_input_dtype(const at::Tensor& input, const at::Tensor& mat2) {
  TORCH_CHECK(input.scalar_type() == mat2.scalar_type(),
              "self and mat2 must have the same dtype, but got ", input.scalar_type(), " and ",
              mat2.scalar_type());
}

// A product's out= has the operands' dtype and no elements sharing memory
// (CPU does not check it against the operands).
void check_product_out(const char* op, const at::Tensor& out, const at::Tensor& operand) {
  check_out_dtype(op, out, operand.scalar_type());
  check_out_overlap(out, {});
}

void check_bmm(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1),
              "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ",
              a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
  check_same_dtype(a, b);
  refuse_bool(a, "bmm");
}

}  // namespace

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_mm(self, mat2);
  check_product_out("mm", out, self);
  at::native::resize_output(out, {self.size(0), mat2.size(1)});
  if (self.size(1) == 0) return out.zero_();
  const Product2d product = product_2d("mm", self, mat2);
  run_product("mm", product.key, out, self, mat2, nullptr, 0, 1, product.contract);
  return out;
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  check_mm(self, mat2);
  at::Tensor out = device_empty({self.size(0), mat2.size(1)}, self.options());
  return mm_out(self, mat2, out);
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_bmm(self, mat2);
  check_product_out("bmm", out, self);
  at::native::resize_output(out, {self.size(0), self.size(1), mat2.size(2)});
  if (self.size(2) == 0) return out.zero_();
  run_product("bmm", "bmm", out, self, mat2, nullptr, 0, 1, matmul3d);
  return out;
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  check_bmm(self, mat2);
  at::Tensor out = device_empty({self.size(0), self.size(1), mat2.size(2)}, self.options());
  return bmm_out(self, mat2, out);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_mm(mat1, mat2);
  check_input_dtype(self, mat2);
  check_product_out("addmm", out, mat1);
  const std::vector<int64_t> shape{mat1.size(0), mat2.size(1)};
  TORCH_CHECK(at::is_expandable_to(self.sizes(), shape), "The expanded size of the tensor (", shape,
              ") must match the existing size (", self.sizes(), ")");
  at::Tensor input = self;
  if (out.is_same(self) || (out.defined() && out.storage().is_alias_of(self.storage()))) {
    input = self.clone();  // the product reads input while out is written
  }
  at::native::resize_output(out, shape);
  const Product2d product = product_2d("addmm", mat1, mat2);
  run_product("addmm", product.key, out, mat1, mat2, &input, beta, alpha, product.contract);
  return out;
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor out = device_empty({mat1.size(0), mat2.size(1)}, mat1.options());
  return addmm_out(self, mat1, mat2, beta, alpha, out);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  return addmm_out(self, mat1, mat2, beta, alpha, self);
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_bmm(batch1, batch2);
  check_input_dtype(self, batch2);
  check_product_out("baddbmm", out, batch1);
  const std::vector<int64_t> shape{batch1.size(0), batch1.size(1), batch2.size(2)};
  TORCH_CHECK(at::is_expandable_to(self.sizes(), shape), "The expanded size of the tensor (", shape,
              ") must match the existing size (", self.sizes(), ")");
  at::Tensor input = self;
  if (out.defined() && out.storage().is_alias_of(self.storage())) input = self.clone();
  at::native::resize_output(out, shape);
  run_product("baddbmm", "baddbmm", out, batch1, batch2, &input, beta, alpha, matmul3d);
  return out;
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor out = device_empty({batch1.size(0), batch1.size(1), batch2.size(2)}, batch1.options());
  return baddbmm_out(self, batch1, batch2, beta, alpha, out);
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  return baddbmm_out(self, batch1, batch2, beta, alpha, self);
}

at::Tensor& mv_out(const at::Tensor& self, const at::Tensor& vec, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ",
              self.dim(), ", ", vec.dim());
  TORCH_CHECK(self.size(1) == vec.size(0), "size mismatch, got input (", self.size(0), "), mat (",
              self.size(0), "x", self.size(1), "), vec (", vec.size(0), ")");
  check_same_dtype(self, vec);
  refuse_bool(self, "addmv_impl_cpu");
  // CPU's mv writes through addmv with out as its input: the dtypes must agree.
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "addmv input tensors must have the same dtype, but got ", out.scalar_type(), ", ",
              self.scalar_type(), ", and ", vec.scalar_type());
  check_out_overlap(out, {});
  at::native::resize_output(out, {self.size(0)});
  if (self.size(1) == 0) return out.zero_();
  run_product("mv", "mv", out, self, vec, nullptr, 0, 1,
              [](hlo::Builder& b, hlo::Value m, hlo::Value v) {
                return b.dot_general(m, v, {}, {}, {1}, {0}, m.type.element);
              });
  return out;
}

at::Tensor mv(const at::Tensor& self, const at::Tensor& vec) {
  at::Tensor out = device_empty({self.size(0)}, self.options());
  return mv_out(self, vec, out);
}

at::Tensor dot(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(),
              "dot : expected both vectors to have same dtype, but found ", self.scalar_type(),
              " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [",
              self.numel(), "] and src [", other.numel(),
              "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
  refuse_bool(self, "dot");
  // (ATen's ZeroTensor key passes dot through to the backend, as on CPU)
  if (self._is_zerotensor() || other._is_zerotensor()) {
    return at::_efficientzerotensor({}, self.options());
  }
  at::Tensor out = device_empty({}, self.options());
  if (self.numel() == 0) return out.zero_();
  run_product("dot", "dot", out, self, other, nullptr, 0, 1,
              [](hlo::Builder& b, hlo::Value x, hlo::Value y) {
                return b.dot_general(x, y, {}, {}, {0}, {0}, x.type.element);
              });
  return out;
}

}  // namespace torch_tpu::ops
