// aten::im2col and aten::col2im: unfold an image into its sliding blocks and
// fold blocks back, summing where they overlap.
//
// Both are pure data movement over a zero-padded image. im2col takes one
// strided slice of the padded image per kernel tap (ki, kj), each of shape
// [N, C, OH, OW], and stacks them after the channel dim, so row
// c*kh*kw + ki*kw + kj of the result holds tap (ki, kj) of channel c, as on
// CPU. col2im is the adjoint: each tap's block is spread back onto the
// padded image by a pad with interior padding (stride - 1 zeros between
// elements), the taps are summed in CPU's order starting from zero, and the
// padding is cropped. The argument checks are ATen's own shape checks, so
// what CPU refuses is refused here with the same error class, before any
// program is built.
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/empty.h>
#include <c10/util/safe_numerics.h>

#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/im2col_kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

// Kernel, dilation, padding and stride, each (height, width).
struct BlockParams {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

void check_pair(const char* op, const char* name, at::IntArrayRef v) {
  TORCH_CHECK(v.size() == 2, op, ": It is expected ", name, " equals to 2, but got size ",
              v.size());
}

BlockParams block_params(const char* op, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                         at::IntArrayRef padding, at::IntArrayRef stride) {
  check_pair(op, "kernel_size", kernel_size);
  check_pair(op, "dilation", dilation);
  check_pair(op, "padding", padding);
  check_pair(op, "stride", stride);
  return {kernel_size[0], kernel_size[1], dilation[0], dilation[1],
          padding[0],     padding[1],     stride[0],   stride[1]};
}

// Runs one of ATen's shape checks (CPU's conditions exactly) and names the op
// in its message, keeping the error class (IndexError for a missing dim).
template <typename Check>
void check_as(const char* op, Check&& check) {
  try {
    check();
  } catch (const c10::IndexError& e) {
    TORCH_CHECK_INDEX(false, op, ": ", e.msg());
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, op, ": ", e.msg());
  }
}

// Number of block positions along one dim; CPU's check has made it positive
// for sane arguments, this also refuses sizes that overflow int64.
int64_t block_count(const char* op, int64_t size, int64_t pad, int64_t dilation, int64_t kernel,
                    int64_t stride) {
  const int64_t n = at::native::sliding_window_count(size, pad, dilation, kernel, stride);
  TORCH_CHECK(n >= 1 && n <= size + 2 * pad, op, ": kernel_size, dilation, padding and stride ",
              "give ", n, " sliding blocks along a dim of size ", size);
  return n;
}

int64_t checked_product(const char* op, int64_t a, int64_t b) {
  int64_t r = 0;
  TORCH_CHECK(!c10::mul_overflows(a, b, &r), op, ": the size ", a, " * ", b, " overflows");
  return r;
}

// CPU resizes out= with resize_, without resize_output's warning, and an
// out= of the right size keeps its strides (our resize_ would restride it).
void resize_like_cpu(const at::Tensor& out, const std::vector<int64_t>& sizes) {
  if (out.sizes() != at::IntArrayRef(sizes)) out.resize_(sizes);
}

// The dtypes CPU's kernels are instantiated for.
bool has_cpu_kernel(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kComplexFloat:
    case at::kComplexDouble:
    case at::kBool:
      return true;
    default:
      return false;
  }
}

// After out= has been resized, as CPU orders its checks: the input's dtype
// must have a kernel, and out= must have the input's dtype.
void check_dtypes(const char* op, const at::Tensor& self, const at::Tensor& out) {
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(has_cpu_kernel(t), "\"", op, "\" not implemented for '",
                              c10::toString(t), "'");
  TORCH_CHECK(out.scalar_type() == t, op, ": expected scalar type ", t, " but found ",
              out.scalar_type());
}

}  // namespace

at::Tensor& im2col_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                       at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride,
                       at::Tensor& out) {
  const char* op = "im2col";
  const BlockParams p = block_params(op, kernel_size, dilation, padding, stride);
  check_as(op, [&] {
    at::native::im2col_shape_check(self, at::Tensor(), p.kh, p.kw, p.dh, p.dw, p.ph, p.pw, p.sh,
                                   p.sw);
  });
  const bool batched = self.dim() == 4;
  const int64_t N = batched ? self.size(0) : 1, C = self.size(-3);
  const int64_t H = self.size(-2), W = self.size(-1);
  const int64_t OH = block_count(op, H, p.ph, p.dh, p.kh, p.sh);
  const int64_t OW = block_count(op, W, p.pw, p.dw, p.kw, p.sw);
  const int64_t rows = checked_product(op, C, checked_product(op, p.kh, p.kw));
  const int64_t L = checked_product(op, OH, OW);
  const std::vector<int64_t> sizes =
      batched ? std::vector<int64_t>{N, rows, L} : std::vector<int64_t>{rows, L};
  resize_like_cpu(out, sizes);
  check_dtypes(op, self, out);
  if (out.numel() == 0) return out;

  TensorProgram program(op, program_key("im2col", p.kh, p.kw, p.dh, p.dw, p.ph, p.pw, p.sh, p.sw));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.reshape(in[0], {N, C, H, W});
    // Exact zeros (not a multiply by a mask), so inf and NaN stay where they are.
    Value padded = b.pad(x, b.constant(x.type.element, 0), {0, 0, p.ph, p.pw}, {0, 0, p.ph, p.pw});
    std::vector<Value> taps;
    for (int64_t ki = 0; ki < p.kh; ++ki) {
      for (int64_t kj = 0; kj < p.kw; ++kj) {
        const int64_t h0 = ki * p.dh, w0 = kj * p.dw;
        Value tap =
            b.slice(padded, {0, 0, h0, w0},
                    {N, C, h0 + (OH - 1) * p.sh + 1, w0 + (OW - 1) * p.sw + 1}, {1, 1, p.sh, p.sw});
        taps.push_back(b.reshape(tap, {N, C, 1, L}));
      }
    }
    Value cols = taps.size() == 1 ? taps[0] : b.concatenate(taps, 2);
    return std::vector<Value>{b.reshape(cols, sizes)};
  });
  return out;
}

at::Tensor im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                  at::IntArrayRef padding, at::IntArrayRef stride) {
  at::Tensor out = device_empty({0}, self.options());
  return im2col_out(self, kernel_size, dilation, padding, stride, out);
}

at::Tensor& col2im_out(const at::Tensor& self, at::IntArrayRef output_size,
                       at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                       at::IntArrayRef padding, at::IntArrayRef stride, at::Tensor& out) {
  const char* op = "col2im";
  check_pair(op, "output_size", output_size);
  const BlockParams p = block_params(op, kernel_size, dilation, padding, stride);
  const int64_t H = output_size[0], W = output_size[1];
  check_as(op, [&] {
    at::native::col2im_shape_check(self, at::Tensor(), H, W, p.kh, p.kw, p.dh, p.dw, p.ph, p.pw,
                                   p.sh, p.sw);
  });
  const bool batched = self.dim() == 3;
  const int64_t N = batched ? self.size(0) : 1;
  const int64_t taps = checked_product(op, p.kh, p.kw);
  const int64_t C = self.size(-2) / taps;
  const int64_t OH = block_count(op, H, p.ph, p.dh, p.kh, p.sh);
  const int64_t OW = block_count(op, W, p.pw, p.dw, p.kw, p.sw);
  const std::vector<int64_t> sizes =
      batched ? std::vector<int64_t>{N, C, H, W} : std::vector<int64_t>{C, H, W};
  resize_like_cpu(out, sizes);
  check_dtypes(op, self, out);
  if (out.numel() == 0) return out;

  TensorProgram program(
      op, program_key("col2im", H, W, p.kh, p.kw, p.dh, p.dw, p.ph, p.pw, p.sh, p.sw));
  const ElementType t = element_type_for(self.scalar_type(), op);
  const bool logical = t == ElementType::kPred;  // bool += bool is an or
  program.input(self);
  // CPU's sums start from its zero-filled output, so a sum of -0s is +0
  // there. The start is a runtime zero: XLA folds 0 + x to x for a constant
  // zero, which would keep the -0.
  if (!logical) program.scalar(0, t);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value cols = b.reshape(in[0], {N, C, taps, OH, OW});
    Value zero = b.constant(t, 0);
    const int64_t HP = H + 2 * p.ph, WP = W + 2 * p.pw;
    Value image = b.splat(logical ? zero : in[1], {N, C, HP, WP});
    for (int64_t ki = 0; ki < p.kh; ++ki) {
      for (int64_t kj = 0; kj < p.kw; ++kj) {
        const int64_t k = ki * p.kw + kj;
        Value block = b.reshape(
            b.slice(cols, {0, 0, k, 0, 0}, {N, C, k + 1, OH, OW}, {1, 1, 1, 1, 1}), {N, C, OH, OW});
        const int64_t h0 = ki * p.dh, w0 = kj * p.dw;
        const int64_t h_high = HP - (h0 + (OH - 1) * p.sh + 1);
        const int64_t w_high = WP - (w0 + (OW - 1) * p.sw + 1);
        Value placed =
            b.pad(block, zero, {0, 0, h0, w0}, {0, 0, h_high, w_high}, {0, 0, p.sh - 1, p.sw - 1});
        image = b.binary(logical ? "or" : "add", image, placed);
      }
    }
    Value cropped = b.slice(image, {0, 0, p.ph, p.pw}, {N, C, p.ph + H, p.pw + W}, {1, 1, 1, 1});
    return std::vector<Value>{b.reshape(cropped, sizes)};
  });
  return out;
}

at::Tensor col2im(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel_size,
                  at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  at::Tensor out = device_empty({0}, self.options());
  return col2im_out(self, output_size, kernel_size, dilation, padding, stride, out);
}

}  // namespace torch_tpu::ops
