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
// GEMMs), except on the CPU plugin (finish_plan). Everything else is
// dequantized exactly first: each element times its block's scale is exact
// in float32 (a few mantissa bits times a power of two, or an e4m3 scale),
// then one float32 dot. use_fast_accum is accepted and changes nothing: the
// sums are float32 either way, as CPU's. (Also torch.nn.functional.scaled_mm,
// aten._scaled_mm_v2, whose recipes name the same scalings.)
#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype_map.h"
#include "core/runtime.h"
#include "exec/key_buffer.h"
#include "ops/device_empty.h"
#include "ops/matmul_forms.h"
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
  int64_t block = 0;               // elements of k per scale (block scaling)
  bool native_f8 = false;          // dot_general of the 8-bit operands as they are
  bool transposed_weight = false;  // b is W.T of a row-major W (ops/matmul_forms.h)
  // NVFP4's second level (_scaled_mm_v2): a float32 scale per operand
  // multiplying the block-scaled product
  bool global_scales = false;
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

// The shapes and operand dtypes of a @ b, checked as CPU checks them.
ScaledMmPlan plan_operands(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2, "mat1 must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat_a and mat_b shapes cannot be multiplied (", a.size(0),
              "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  ScaledMmPlan plan;
  plan.m = a.size(0);
  plan.n = b.size(1);
  plan.float4 =
      a.scalar_type() == at::kFloat4_e2m1fn_x2 && b.scalar_type() == at::kFloat4_e2m1fn_x2;
  plan.k = plan.float4 ? 2 * a.size(1) : a.size(1);
  return plan;
}

bool both_float8(const at::Tensor& a, const at::Tensor& b) {
  return c10::isFloat8Type(a.scalar_type()) && c10::isFloat8Type(b.scalar_type());
}

// Block scaling's checks: k a multiple of the block, the swizzled scales'
// count, contiguous scales.
void plan_block_scaling(ScaledMmPlan& plan, int64_t block, const at::Tensor& sa,
                        const at::Tensor& sb) {
  plan.scaling = Scaling::kBlock;
  plan.block = block;
  TORCH_CHECK_VALUE(plan.k % block == 0, "_scaled_mm: block scaling takes a k that is a ",
                    "multiple of its block size ", block, ", got k=", plan.k);
  const int64_t k_blocks = plan.k / block;
  const int64_t expected_a = swizzled_scale_count(plan.m, k_blocks);
  const int64_t expected_b = swizzled_scale_count(plan.n, k_blocks);
  TORCH_CHECK_VALUE(sa.numel() == expected_a && sb.numel() == expected_b,
                    "Invalid blockwise scaling configuration. For blockwise scaling, scale_a "
                    "should have ",
                    expected_a, " elements, got ", sa.numel(), ", scale_b should have ", expected_b,
                    " elements, got ", sb.numel(), ".");
  TORCH_CHECK_VALUE(sa.is_contiguous(), "scale_a must be contiguous");
  TORCH_CHECK_VALUE(sb.is_contiguous(), "scale_b must be contiguous");
}

// -1: the plugin's form; 0, 1: forced (set_scaled_mm_native_f8)
std::atomic<int> forced_native_f8{-1};

// The product's form. XLA's CPU backend has no 8-bit GEMM: it dots f8
// operands by a slower loop than its float32 GEMM (measured: [256, 1024] x
// [1024, 4096] 9.4 ms vs 6.8 ms converted first), so on the CPU plugin the
// operands are converted to float32 first (the same exact products).
void finish_plan(ScaledMmPlan& plan, const at::Tensor& a, const at::Tensor& b) {
  const int forced = forced_native_f8.load(std::memory_order_relaxed);
  const bool plugin_takes_f8 = forced >= 0 ? forced == 1 : !Runtime::get().device_memory_is_host();
  plan.native_f8 = plan.scaling != Scaling::kBlock && native_f8_type(a.scalar_type()) &&
                   native_f8_type(b.scalar_type()) && plugin_takes_f8;
  plan.transposed_weight = is_transposed_weight_product(a, b);
}

// _scaled_mm: the scaling is read from the scales' dtypes and shapes.
ScaledMmPlan plan_scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& sa,
                            const at::Tensor& sb) {
  ScaledMmPlan plan = plan_operands(a, b);
  const bool float8 = both_float8(a, b);
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
    plan_block_scaling(plan, e8m0_scales ? 32 : 16, sa, sb);
  } else {
    invalid_scaling(a, b, sa, sb);
  }
  finish_plan(plan, a, b);
  return plan;
}

// torch.nn.functional.ScalingType and SwizzleType's values.
enum Recipe : int64_t {
  kTensorWise = 0,
  kRowWise = 1,
  kBlockWise1x16 = 2,
  kBlockWise1x32 = 3,
  kBlockWise1x128 = 4,
  kBlockWise128x128 = 5
};
constexpr int64_t kSwizzle32x4x4 = 1;

bool recipes_are(at::IntArrayRef recipe_a, at::IntArrayRef recipe_b,
                 std::initializer_list<int64_t> want) {
  return recipe_a.equals(want) && recipe_b.equals(want);
}

// _scaled_mm_v2: the scaling is named by recipes (scale_recipe_a/b), the
// scales' layout by swizzles; CPU's checks and messages for the tensor-wise
// and row-wise recipes, CUDA's definitions for the block-scaled ones.
ScaledMmPlan plan_scaled_mm_v2(const at::Tensor& a, const at::Tensor& b, at::TensorList sa,
                               at::IntArrayRef recipe_a, at::IntArrayRef swizzle_a,
                               at::TensorList sb, at::IntArrayRef recipe_b,
                               at::IntArrayRef swizzle_b) {
  ScaledMmPlan plan = plan_operands(a, b);
  TORCH_CHECK_VALUE(
      !sa.empty() && sa.size() == recipe_a.size() && !sb.empty() && sb.size() == recipe_b.size(),
      "_scaled_mm_v2: one recipe per scale tensor, got ", sa.size(), " scales and ",
      recipe_a.size(), " recipes for a, ", sb.size(), " and ", recipe_b.size(), " for b");
  const bool float8 = both_float8(a, b);
  auto swizzled = [](at::IntArrayRef swizzle) {
    return swizzle.size() == 1 && swizzle[0] == kSwizzle32x4x4;
  };
  if (float8 && recipes_are(recipe_a, recipe_b, {kTensorWise})) {
    TORCH_CHECK_VALUE(sa[0].numel() == 1 && sa[0].scalar_type() == at::kFloat,
                      "scale_a must have 1 Float element");
    TORCH_CHECK_VALUE(sb[0].numel() == 1 && sb[0].scalar_type() == at::kFloat,
                      "scale_b must have 1 Float element");
    plan.scaling = Scaling::kTensorwise;
  } else if (float8 && recipes_are(recipe_a, recipe_b, {kRowWise})) {
    TORCH_CHECK_INDEX(sa[0].dim() == 2, "Dimension out of range (expected to be in range of [",
                      -sa[0].dim(), ", ", sa[0].dim() - 1, "], but got 1)");
    TORCH_CHECK_VALUE(sa[0].size(0) == plan.m && sa[0].size(1) == 1, "scale_a must have shape [",
                      plan.m, ", 1], got [", sa[0].sizes(), "]");
    TORCH_CHECK_VALUE(sa[0].scalar_type() == at::kFloat, "scale_a must have ", plan.m,
                      " Float elements, got ", sa[0].numel());
    TORCH_CHECK_VALUE(sb[0].numel() == plan.n && sb[0].scalar_type() == at::kFloat,
                      "scale_b must have ", plan.n, " Float elements, got ", sb[0].numel());
    TORCH_CHECK_VALUE(sb[0].dim() == 2 && sb[0].size(0) == 1, "scale_b must have shape [1, ",
                      plan.n, "], got ", sb[0].sizes());
    check_rowwise_scale_strides(sa[0], sb[0]);
    plan.scaling = Scaling::kRowwise;
  } else if ((float8 || plan.float4) && recipes_are(recipe_a, recipe_b, {kBlockWise1x32}) &&
             sa[0].scalar_type() == at::kFloat8_e8m0fnu &&
             sb[0].scalar_type() == at::kFloat8_e8m0fnu) {
    TORCH_CHECK_VALUE(swizzled(swizzle_a) && swizzled(swizzle_b),
                      "_scaled_mm_v2: MX scales must be swizzled (SWIZZLE_32_4_4)");
    plan_block_scaling(plan, 32, sa[0], sb[0]);
  } else if (plan.float4 &&
             (recipes_are(recipe_a, recipe_b, {kBlockWise1x16}) ||
              recipes_are(recipe_a, recipe_b, {kBlockWise1x16, kTensorWise})) &&
             sa[0].scalar_type() == at::kFloat8_e4m3fn &&
             sb[0].scalar_type() == at::kFloat8_e4m3fn) {
    TORCH_CHECK_VALUE(swizzled(swizzle_a) && swizzled(swizzle_b),
                      "_scaled_mm_v2: NVFP4 scales must be swizzled (SWIZZLE_32_4_4)");
    plan_block_scaling(plan, 16, sa[0], sb[0]);
    if (sa.size() == 2) {
      TORCH_CHECK_VALUE(sa[1].numel() == 1 && sa[1].scalar_type() == at::kFloat &&
                            sb[1].numel() == 1 && sb[1].scalar_type() == at::kFloat,
                        "_scaled_mm_v2: NVFP4's tensor-wise scales must be one float each");
      plan.global_scales = true;
    }
  } else {
    for (int64_t r : recipe_a) {
      TORCH_CHECK_NOT_IMPLEMENTED(r != kBlockWise1x128 && r != kBlockWise128x128,
                                  "_scaled_mm_v2: the 1x128 and 128x128 block recipes are not "
                                  "implemented on tpu");
    }
    invalid_scaling(a, b, sa[0], sb[0]);
  }
  finish_plan(plan, a, b);
  return plan;
}

// The float32 values of float4_e2m1fn_x2 nibbles (0..15 in ui32): sign, 2
// exponent bits, 1 mantissa bit, whose float32 bits are built directly:
// exponent e > 0 is 2^(e-1) * (1 + m/2), e = 0 is m/2 (0.5 or zero).
Value float4_values(Builder& b, Value nibble) {
  const std::vector<int64_t> dims = nibble.type.dims;
  auto u32 = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kU32, v), dims); };
  auto shl = [&](Value x, int64_t n) { return b.binary("shift_left", x, u32(n)); };
  auto shr = [&](Value x, int64_t n) { return b.binary("shift_right_logical", x, u32(n)); };
  const Value e = b.binary("and", shr(nibble, 1), u32(3));
  const Value m = b.binary("and", nibble, u32(1));
  const Value normal = b.binary("or", shl(b.binary("add", e, u32(126)), 23), shl(m, 22));
  const Value subnormal = b.binary("multiply", m, u32(126 << 23));
  const Value magnitude = b.select(b.compare(Compare::kEQ, e, u32(0)), subnormal, normal);
  const Value bits = b.binary("or", magnitude, shl(shr(nibble, 3), 31));
  return b.bitcast_convert(bits, {ElementType::kF32, dims});
}

// A float4_e2m1fn_x2 operand (ui8 bytes in the program) as its two halves:
// the low nibbles (elements 2j of k, PyTorch's packing puts the first in the
// low bits) and the high ones (2j + 1), float32 each.
std::pair<Value, Value> float4_halves(Builder& b, Value bytes) {
  const std::vector<int64_t> dims = bytes.type.dims;
  const Value x = b.convert(bytes, ElementType::kU32);
  const Value low = b.binary("and", x, b.splat(b.constant_int(ElementType::kU32, 15), dims));
  const Value high =
      b.binary("shift_right_logical", x, b.splat(b.constant_int(ElementType::kU32, 4), dims));
  return {float4_values(b, low), float4_values(b, high)};
}

// A block-scaled operand's scales, from CUDA's swizzled layout (tiles of
// 128 rows x 4 blocks, each stored as [row % 32][row / 32][block]) to one
// float32 per element of a [rows, columns] operand whose every `per_block`
// columns share a scale.
Value block_scales(Builder& b, Value swizzled, int64_t rows, int64_t k_blocks, int64_t columns,
                   int64_t per_block) {
  const int64_t row_tiles = ceil_div(rows, 128), col_tiles = ceil_div(k_blocks, 4);
  Value s = b.reshape(swizzled, {row_tiles, col_tiles, 32, 4, 4});
  s = b.transpose(s, {0, 3, 2, 1, 4});  // [row tile, row / 32, row % 32, col tile, block]
  s = b.reshape(s, {row_tiles * 128, col_tiles * 4});
  s = b.slice(s, {0, 0}, {rows, k_blocks}, {1, 1});
  s = b.broadcast_in_dim(b.convert(s, ElementType::kF32), {rows, k_blocks, per_block}, {0, 1});
  return b.reshape(s, {rows, columns});
}

Value product(Builder& b, const ScaledMmPlan& plan, Value x, Value y) {
  return plan.transposed_weight ? matmul2d_transposed_rhs(b, x, y, ElementType::kF32)
                                : matmul2d(b, x, y, ElementType::kF32);
}

// a @ b * scales in float32, [m, n].
Value scaled_product(Builder& b, const ScaledMmPlan& plan, const std::vector<Value>& in) {
  const std::vector<int64_t> shape = {plan.m, plan.n};
  if (plan.k == 0) return b.zeros({ElementType::kF32, shape});
  const int64_t k_blocks = plan.block ? plan.k / plan.block : 0;
  if (plan.float4) {
    // a @ b = a_low @ b_low + a_high @ b_high (the even and the odd terms
    // of k), with no interleaving of the halves; both nibbles of a byte
    // share its block's scale (blocks are even)
    const int64_t bytes = plan.k / 2, per_block = plan.block / 2;
    auto [xl, xh] = float4_halves(b, in[0]);  // [m, k/2]
    auto [yl, yh] = float4_halves(b, in[1]);  // [k/2, n]
    const Value sx = block_scales(b, in[2], plan.m, k_blocks, bytes, per_block);
    const Value sy =
        b.transpose(block_scales(b, in[3], plan.n, k_blocks, bytes, per_block), {1, 0});
    auto scaled = [&](Value v, Value scale) { return b.binary("multiply", v, scale); };
    return b.binary("add", product(b, plan, scaled(xl, sx), scaled(yl, sy)),
                    product(b, plan, scaled(xh, sx), scaled(yh, sy)));
  }
  Value x = in[0], y = in[1];
  if (!plan.native_f8) {
    x = b.convert(x, ElementType::kF32);  // [m, k]
    y = b.convert(y, ElementType::kF32);  // [k, n]
  }
  if (plan.scaling == Scaling::kBlock) {
    x = b.binary("multiply", x, block_scales(b, in[2], plan.m, k_blocks, plan.k, plan.block));
    y = b.binary("multiply", y,
                 b.transpose(block_scales(b, in[3], plan.n, k_blocks, plan.k, plan.block), {1, 0}));
  }
  return product(b, plan, x, y);
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

// The operands of one product: the scales, the bias, the scale that
// divides a float8 result (where CPU applies it), NVFP4's tensor-wise scales.
struct ScaledMmArgs {
  const at::Tensor& a;
  const at::Tensor& b;
  const at::Tensor& scale_a;
  const at::Tensor& scale_b;
  const at::Tensor* global_a = nullptr;
  const at::Tensor* global_b = nullptr;
  const std::optional<at::Tensor>& bias;
  const at::Tensor* divide_by = nullptr;
};

at::Tensor& run_scaled_mm(const ScaledMmPlan& plan, const ScaledMmArgs& args,
                          std::optional<at::ScalarType> out_dtype, at::Tensor& out) {
  TORCH_CHECK_VALUE(!out_dtype || *out_dtype == out.scalar_type(),
                    "out_dtype must match output matrix type");
  const at::ScalarType result = out.scalar_type();
  TORCH_CHECK_VALUE(result != at::kFloat4_e2m1fn_x2,
                    "_scaled_mm: float4_e2m1fn_x2 is no result dtype; pass out_dtype (a float "
                    "type or a float8 type)");
  if (args.bias) {
    TORCH_CHECK(args.bias->numel() == plan.n, "Bias must be size ", plan.n, " but got ",
                args.bias->numel());
  }
  if (args.divide_by) {
    TORCH_CHECK(args.divide_by->numel() == 1,
                "_scaled_mm: scale_result must have one element, got ", args.divide_by->numel());
  }
  at::native::resize_output(out, {plan.m, plan.n});
  if (out.numel() == 0) return out;
  const hlo::ElementType out_type = element_type_for(result, "_scaled_mm");
  // (built in a borrowed buffer: no allocation per call, as elementwise ops)
  KeyBuffer key_buffer;
  std::string& key = key_buffer.str();
  key += "_scaled_mm:";
  key += scaling_name(plan.scaling);
  key += ':';
  key += std::to_string(plan.block);
  if (plan.float4) key += ":f4";
  if (plan.native_f8) key += ":f8dot";
  if (plan.transposed_weight) key += ":wt";
  if (plan.global_scales) key += ":global";
  key += ':';
  key += hlo::mlir_name(out_type);
  if (args.bias) key += ":bias";
  if (args.divide_by) key += ":sr";
  TensorProgram program("_scaled_mm", TensorProgram::BorrowedKey{key});
  program.input(args.a);
  program.input(args.b);
  program.input(args.scale_a);
  program.input(args.scale_b);
  if (plan.global_scales) {
    program.input(*args.global_a);
    program.input(*args.global_b);
  }
  if (args.bias) program.input(*args.bias);
  if (args.divide_by) program.input(*args.divide_by);
  program.output(out);
  const bool bias = args.bias.has_value(), divide = args.divide_by != nullptr;
  program.run([&, bias, divide](Builder& b, const std::vector<Value>& in) {
    const std::vector<int64_t> shape = {plan.m, plan.n};
    auto f32 = [&](Value v) { return b.convert(v, ElementType::kF32); };
    auto scalar = [&](Value v) { return b.splat(f32(b.reshape(v, {})), shape); };
    Value acc = scaled_product(b, plan, in);
    size_t next = 4;
    if (plan.scaling == Scaling::kTensorwise) {
      const Value scale =
          b.binary("multiply", f32(b.reshape(in[2], {})), f32(b.reshape(in[3], {})));
      acc = b.binary("multiply", acc, b.splat(scale, shape));
    } else if (plan.scaling == Scaling::kRowwise) {
      acc = b.binary("multiply", acc,
                     b.broadcast_in_dim(f32(b.reshape(in[2], {plan.m})), shape, {0}));
      acc = b.binary("multiply", acc,
                     b.broadcast_in_dim(f32(b.reshape(in[3], {plan.n})), shape, {1}));
    } else if (plan.global_scales) {
      acc = b.binary("multiply", acc, scalar(in[next++]));
      acc = b.binary("multiply", acc, scalar(in[next++]));
    }
    if (bias) {
      acc = b.binary("add", acc,
                     b.broadcast_in_dim(f32(b.reshape(in[next++], {plan.n})), shape, {1}));
    }
    if (divide) acc = b.binary("divide", acc, scalar(in[next++]));
    return std::vector<Value>{b.convert(acc, out_type)};
  });
  return out;
}

at::Tensor new_result(const at::Tensor& self, at::ScalarType dtype) {
  return device_empty({0}, self.options().dtype(dtype));
}

}  // namespace

void set_scaled_mm_native_f8(std::optional<bool> forced) {
  forced_native_f8.store(forced ? (*forced ? 1 : 0) : -1, std::memory_order_relaxed);
}

at::Tensor& scaled_mm_out(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& scale_a,
                          const at::Tensor& scale_b, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& scale_result,
                          std::optional<at::ScalarType> out_dtype, bool /*use_fast_accum*/,
                          at::Tensor& out) {
  const ScaledMmPlan plan = plan_scaled_mm(self, mat2, scale_a, scale_b);
  ScaledMmArgs args{self, mat2, scale_a, scale_b, nullptr, nullptr, bias};
  // scale_result divides the result only where out_dtype names a float8
  // type (CPU's rule: a float8 result by default or through out= ignores it)
  if (scale_result && out_dtype && c10::isFloat8Type(*out_dtype)) {
    args.divide_by = &*scale_result;
  }
  return run_scaled_mm(plan, args, out_dtype, out);
}

at::Tensor scaled_mm(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& scale_a,
                     const at::Tensor& scale_b, const std::optional<at::Tensor>& bias,
                     const std::optional<at::Tensor>& scale_result,
                     std::optional<at::ScalarType> out_dtype, bool use_fast_accum) {
  at::Tensor out = new_result(self, out_dtype.value_or(self.scalar_type()));
  return scaled_mm_out(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum,
                       out);
}

at::Tensor& scaled_mm_v2_out(const at::Tensor& self, const at::Tensor& mat2, at::TensorList scale_a,
                             at::IntArrayRef recipe_a, at::IntArrayRef swizzle_a,
                             at::TensorList scale_b, at::IntArrayRef recipe_b,
                             at::IntArrayRef swizzle_b, const std::optional<at::Tensor>& bias,
                             std::optional<at::ScalarType> out_dtype,
                             at::IntArrayRef /*contraction_dim: CPU's kernel ignores it too*/,
                             bool /*use_fast_accum*/, at::Tensor& out) {
  const ScaledMmPlan plan =
      plan_scaled_mm_v2(self, mat2, scale_a, recipe_a, swizzle_a, scale_b, recipe_b, swizzle_b);
  ScaledMmArgs args{self, mat2, scale_a[0], scale_b[0], nullptr, nullptr, bias};
  if (plan.global_scales) {
    args.global_a = &scale_a[1];
    args.global_b = &scale_b[1];
  }
  return run_scaled_mm(plan, args, out_dtype, out);
}

at::Tensor scaled_mm_v2(const at::Tensor& self, const at::Tensor& mat2, at::TensorList scale_a,
                        at::IntArrayRef recipe_a, at::IntArrayRef swizzle_a, at::TensorList scale_b,
                        at::IntArrayRef recipe_b, at::IntArrayRef swizzle_b,
                        const std::optional<at::Tensor>& bias,
                        std::optional<at::ScalarType> out_dtype, at::IntArrayRef contraction_dim,
                        bool use_fast_accum) {
  at::Tensor out = new_result(self, out_dtype.value_or(self.scalar_type()));
  return scaled_mm_v2_out(self, mat2, scale_a, recipe_a, swizzle_a, scale_b, recipe_b, swizzle_b,
                          bias, out_dtype, contraction_dim, use_fast_accum, out);
}

}  // namespace torch_tpu::ops
