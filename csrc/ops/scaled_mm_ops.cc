// torch._scaled_mm: products of 8-bit (and packed 4-bit) float matrices
// with their scales, as PyTorch defines them:
//
// * tensor-wise (one float32 scale per operand) and row-wise (float32
//   scale_a of [M, 1], scale_b of [1, N]) for the float8 dtypes, with CPU's
//   checks and results: out = (a @ b) * scale_a * scale_b (+ bias), divided
//   by scale_result where out_dtype names a float8 type, then rounded once
//   to the result's dtype;
// * block-scaled (CUDA's, which CPU lacks): MXFP8 and MXFP4 (float8 or
//   float4_e2m1fn_x2 data, one float8_e8m0fnu scale per 32 elements of k)
//   and NVFP4 (float4_e2m1fn_x2 data, one float8_e4m3fn scale per 16), the
//   scales in the swizzled 128x4-tile layout CUDA's kernels read
//   (torch.testing._internal.common_quantized.to_blocked).
//
// The float8_e4m3fn and float8_e5m2 products without block scales are a
// dot_general of the 8-bit operands themselves (StableHLO's f8 types,
// accumulating in float32; XLA's GPU backend takes this form to its FP8
// GEMMs). Everything else is dequantized exactly first: each element times
// its block's scale is exact in float32 (a few mantissa bits times a power
// of two, or an e4m3 scale), then one float32 dot. use_fast_accum is
// accepted and changes nothing: the sums are float32 either way, as CPU's.
#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>

#include <string>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/scaled_mm_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

enum class Scaling { kTensorwise, kRowwise, kBlock };

struct ScaledMmPlan {
  Scaling scaling = Scaling::kTensorwise;
  int64_t m = 0, k = 0, n = 0;  // k in elements: two per float4_e2m1fn_x2 byte
  bool float4 = false;
  int64_t block = 0;       // elements of k per scale (block scaling)
  bool native_f8 = false;  // dot_general of the 8-bit operands as they are
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The scales CUDA's block-scaled GEMMs read for `rows` rows and `k_blocks`
// blocks: tiles of 128 rows x 4 blocks, the partial ones padded.
int64_t swizzled_scale_count(int64_t rows, int64_t k_blocks) {
  return 128 * ceil_div(rows, 128) * 4 * ceil_div(k_blocks, 4);
}

bool native_f8_type(at::ScalarType t) { return t == at::kFloat8_e4m3fn || t == at::kFloat8_e5m2; }

[[noreturn]] void invalid_scaling(const at::Tensor& a, const at::Tensor& b, const at::Tensor& sa,
                                  const at::Tensor& sb) {
  TORCH_CHECK_VALUE(
      false,
      "Invalid scaling configuration.\n"
      "- For TensorWise scaling, a and b should be float8, scales should be float and "
      "singletons.\n"
      "- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be "
      "(",
      a.size(0), ", 1) and scale_b should be (1, ", b.size(1),
      "), and both should be contiguous.\n"
      "- For block scaling (MXFP8, MXFP4: float8_e8m0fnu scales per 32 elements of k; NVFP4: "
      "float4_e2m1fn_x2 data with float8_e4m3fn scales per 16), scales in the swizzled "
      "128x4-tile layout.\n"
      "Got mat_a.dtype()=",
      a.scalar_type(), ", scale_a.dtype()=", sa.scalar_type(), ", scale_a.size()=", sa.sizes(),
      ", scale_a.stride()=", sa.strides(), ", mat_b.dtype()=", b.scalar_type(),
      ", scale_b.dtype()=", sb.scalar_type(), ", scale_b.size()=", sb.sizes(),
      " and scale_b.stride()=", sb.strides());
}

void check_rowwise_scale_strides(const at::Tensor& sa, const at::Tensor& sb) {
  TORCH_CHECK_VALUE(sa.stride(1) == 1, "expected scale_a.stride(1) to be 1, but got ",
                    sa.stride(1));
  TORCH_CHECK_VALUE(sb.stride(1) == 1, "expected scale_b.stride(1) to be 1, but got ",
                    sb.stride(1));
  TORCH_CHECK_VALUE(sa.is_contiguous() && sb.is_contiguous(),
                    "Both scale_a and scale_b must be contiguous for rowwise scaling.");
}

ScaledMmPlan plan_scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& sa,
                            const at::Tensor& sb) {
  TORCH_CHECK(a.dim() == 2, "mat1 must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat_a and mat_b shapes cannot be multiplied (", a.size(0),
              "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  ScaledMmPlan plan;
  plan.m = a.size(0);
  plan.n = b.size(1);
  const at::ScalarType ta = a.scalar_type(), tb = b.scalar_type();
  const bool float8 = c10::isFloat8Type(ta) && c10::isFloat8Type(tb);
  plan.float4 = ta == at::kFloat4_e2m1fn_x2 && tb == at::kFloat4_e2m1fn_x2;
  plan.k = plan.float4 ? 2 * a.size(1) : a.size(1);
  const bool float_scales = sa.scalar_type() == at::kFloat && sb.scalar_type() == at::kFloat;
  const bool e8m0_scales =
      sa.scalar_type() == at::kFloat8_e8m0fnu && sb.scalar_type() == at::kFloat8_e8m0fnu;
  const bool e4m3_scales =
      sa.scalar_type() == at::kFloat8_e4m3fn && sb.scalar_type() == at::kFloat8_e4m3fn;
  if (float8 && float_scales && sa.numel() == 1 && sb.numel() == 1) {
    plan.scaling = Scaling::kTensorwise;
  } else if (float8 && float_scales && sa.dim() == 2 && sb.dim() == 2 && sa.size(0) == plan.m &&
             sa.size(1) == 1 && sb.size(0) == 1 && sb.size(1) == plan.n) {
    check_rowwise_scale_strides(sa, sb);
    plan.scaling = Scaling::kRowwise;
  } else if (((float8 || plan.float4) && e8m0_scales) || (plan.float4 && e4m3_scales)) {
    plan.scaling = Scaling::kBlock;
    plan.block = e8m0_scales ? 32 : 16;
    TORCH_CHECK_VALUE(plan.k % plan.block == 0, "_scaled_mm: block scaling takes a k that is a ",
                      "multiple of its block size ", plan.block, ", got k=", plan.k);
    const int64_t k_blocks = plan.k / plan.block;
    const int64_t expected_a = swizzled_scale_count(plan.m, k_blocks);
    const int64_t expected_b = swizzled_scale_count(plan.n, k_blocks);
    TORCH_CHECK_VALUE(sa.numel() == expected_a && sb.numel() == expected_b,
                      "Invalid blockwise scaling configuration. For blockwise scaling, scale_a "
                      "should have ",
                      expected_a, " elements, got ", sa.numel(), ", scale_b should have ",
                      expected_b, " elements, got ", sb.numel(), ".");
    TORCH_CHECK_VALUE(sa.is_contiguous(), "scale_a must be contiguous");
    TORCH_CHECK_VALUE(sb.is_contiguous(), "scale_b must be contiguous");
  } else {
    invalid_scaling(a, b, sa, sb);
  }
  plan.native_f8 = plan.scaling != Scaling::kBlock && native_f8_type(ta) && native_f8_type(tb);
  return plan;
}

// float4_e2m1fn_x2 bytes (ui8 in the program) as float32 values, two per
// byte along `packed_dim`, the low nibble first (PyTorch's packing). A
// nibble is sign, 2 exponent bits, 1 mantissa bit: in halves, m for
// exponent 0, else (2 + m) << (e - 1).
Value unpack_float4(Builder& b, Value bytes, int64_t packed_dim) {
  const std::vector<int64_t> dims = bytes.type.dims;
  const Value x = b.convert(bytes, ElementType::kS32);
  auto s32 = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kS32, v), dims); };
  auto value = [&](Value nibble) {
    const Value e = b.binary("and", b.binary("shift_right_logical", nibble, s32(1)), s32(3));
    const Value m = b.binary("and", nibble, s32(1));
    const Value normal = b.binary("shift_left", b.binary("add", m, s32(2)),
                                  b.maximum(b.binary("subtract", e, s32(1)), s32(0)));
    const Value halves = b.select(b.compare(Compare::kEQ, e, s32(0)), m, normal);
    const Value magnitude = b.binary("multiply", b.convert(halves, ElementType::kF32),
                                     b.splat(b.constant(ElementType::kF32, 0.5), dims));
    const Value negative = b.compare(Compare::kNE, b.binary("and", nibble, s32(8)), s32(0));
    return b.select(negative, b.unary("negate", magnitude), magnitude);
  };
  const Value low = value(b.binary("and", x, s32(15)));
  const Value high = value(b.binary("shift_right_logical", x, s32(4)));
  // [.., P, ..] -> [.., P, 2, ..] -> [.., 2P, ..]
  std::vector<int64_t> split = dims;
  split.insert(split.begin() + packed_dim + 1, 1);
  const Value pairs =
      b.concatenate({b.reshape(low, split), b.reshape(high, split)}, packed_dim + 1);
  std::vector<int64_t> unpacked = dims;
  unpacked[packed_dim] *= 2;
  return b.reshape(pairs, unpacked);
}

// A block-scaled operand's scales, from CUDA's swizzled layout (tiles of
// 128 rows x 4 blocks, each stored as [row % 32][row / 32][block]) to one
// float32 per element of the [rows, k] operand.
Value block_scales(Builder& b, Value swizzled, int64_t rows, int64_t k, int64_t block) {
  const int64_t k_blocks = k / block;
  const int64_t row_tiles = ceil_div(rows, 128), col_tiles = ceil_div(k_blocks, 4);
  Value s = b.reshape(swizzled, {row_tiles, col_tiles, 32, 4, 4});
  s = b.transpose(s, {0, 3, 2, 1, 4});  // [row tile, row / 32, row % 32, col tile, block]
  s = b.reshape(s, {row_tiles * 128, col_tiles * 4});
  s = b.slice(s, {0, 0}, {rows, k_blocks}, {1, 1});
  s = b.broadcast_in_dim(b.convert(s, ElementType::kF32), {rows, k_blocks, block}, {0, 1});
  return b.reshape(s, {rows, k});
}

Value operand_f32(Builder& b, Value x, const ScaledMmPlan& plan, int64_t packed_dim) {
  return plan.float4 ? unpack_float4(b, x, packed_dim) : b.convert(x, ElementType::kF32);
}

// a @ b * scales in float32, [m, n].
Value scaled_product(Builder& b, const ScaledMmPlan& plan, const std::vector<Value>& in) {
  const std::vector<int64_t> shape = {plan.m, plan.n};
  if (plan.k == 0) return b.zeros({ElementType::kF32, shape});
  if (plan.native_f8) return b.dot_general(in[0], in[1], {}, {}, {1}, {0}, ElementType::kF32);
  Value x = operand_f32(b, in[0], plan, 1);  // [m, k]
  Value y = operand_f32(b, in[1], plan, 0);  // [k, n]
  if (plan.scaling == Scaling::kBlock) {
    x = b.binary("multiply", x, block_scales(b, in[2], plan.m, plan.k, plan.block));
    y = b.binary("multiply", y,
                 b.transpose(block_scales(b, in[3], plan.n, plan.k, plan.block), {1, 0}));
  }
  return b.dot_general(x, y, {}, {}, {1}, {0}, ElementType::kF32);
}

const char* scaling_name(Scaling s) {
  switch (s) {
    case Scaling::kTensorwise:
      return "tensor";
    case Scaling::kRowwise:
      return "row";
    case Scaling::kBlock:
      return "block";
  }
  return "?";
}

}  // namespace

at::Tensor& scaled_mm_out(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& scale_a,
                          const at::Tensor& scale_b, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& scale_result,
                          std::optional<at::ScalarType> out_dtype, bool /*use_fast_accum*/,
                          at::Tensor& out) {
  const ScaledMmPlan plan = plan_scaled_mm(self, mat2, scale_a, scale_b);
  TORCH_CHECK_VALUE(!out_dtype || *out_dtype == out.scalar_type(),
                    "out_dtype must match output matrix type");
  const at::ScalarType result = out.scalar_type();
  TORCH_CHECK_VALUE(result != at::kFloat4_e2m1fn_x2,
                    "_scaled_mm: float4_e2m1fn_x2 is no result dtype; pass out_dtype (a float "
                    "type or a float8 type)");
  if (bias) {
    TORCH_CHECK(bias->numel() == plan.n, "Bias must be size ", plan.n, " but got ", bias->numel());
  }
  at::native::resize_output(out, {plan.m, plan.n});
  if (out.numel() == 0) return out;
  const hlo::ElementType out_type = element_type_for(result, "_scaled_mm");
  // scale_result divides the result only where out_dtype names a float8
  // type (CPU's rule: a float8 result by default or through out= ignores it)
  const bool divide = scale_result.has_value() && out_dtype && c10::isFloat8Type(*out_dtype);
  if (divide) {
    TORCH_CHECK(scale_result->numel() == 1, "_scaled_mm: scale_result must have one element, got ",
                scale_result->numel());
  }
  std::string key = std::string("_scaled_mm:") + scaling_name(plan.scaling) + ":" +
                    std::to_string(plan.block) + (plan.float4 ? ":f4" : "") +
                    (plan.native_f8 ? ":f8dot" : "") + ":" + hlo::mlir_name(out_type) +
                    (bias ? ":bias" : "") + (divide ? ":sr" : "");
  TensorProgram program("_scaled_mm", std::move(key));
  program.input(self);
  program.input(mat2);
  program.input(scale_a);
  program.input(scale_b);
  if (bias) program.input(*bias);
  if (divide) program.input(*scale_result);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const std::vector<int64_t> shape = {plan.m, plan.n};
    auto f32 = [&](Value v) { return b.convert(v, ElementType::kF32); };
    Value acc = scaled_product(b, plan, in);
    if (plan.scaling == Scaling::kTensorwise) {
      const Value scale =
          b.binary("multiply", f32(b.reshape(in[2], {})), f32(b.reshape(in[3], {})));
      acc = b.binary("multiply", acc, b.splat(scale, shape));
    } else if (plan.scaling == Scaling::kRowwise) {
      acc = b.binary("multiply", acc,
                     b.broadcast_in_dim(f32(b.reshape(in[2], {plan.m})), shape, {0}));
      acc = b.binary("multiply", acc,
                     b.broadcast_in_dim(f32(b.reshape(in[3], {plan.n})), shape, {1}));
    }
    size_t next = 4;
    if (bias) {
      acc = b.binary("add", acc,
                     b.broadcast_in_dim(f32(b.reshape(in[next++], {plan.n})), shape, {1}));
    }
    if (divide) acc = b.binary("divide", acc, b.splat(f32(b.reshape(in[next++], {})), shape));
    return std::vector<Value>{b.convert(acc, out_type)};
  });
  return out;
}

at::Tensor scaled_mm(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& scale_a,
                     const at::Tensor& scale_b, const std::optional<at::Tensor>& bias,
                     const std::optional<at::Tensor>& scale_result,
                     std::optional<at::ScalarType> out_dtype, bool use_fast_accum) {
  const at::ScalarType result = out_dtype.value_or(self.scalar_type());
  at::Tensor out = device_empty({0}, self.options().dtype(result));
  return scaled_mm_out(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum,
                       out);
}

}  // namespace torch_tpu::ops
