// Discrete Fourier transforms (torch.fft.*): the three kernels every torch.fft
// function decomposes into, lowered to stablehlo.fft.
//
//   _fft_c2c  complex -> complex over `dim`, forward or inverse
//   _fft_r2c  real -> complex, the last of `dim` halved when onesided
//   _fft_c2r  complex (onesided) -> real, the last of `dim` of length
//             last_dim_size
//
// PyTorch's transforms are unnormalized; `normalization` then scales by
// 1 (0), 1/sqrt(n) (1) or 1/n (2), n the number of points transformed. XLA's
// inverse transforms (IFFT, IRFFT) divide by n themselves, so their results
// are scaled back by n first. stablehlo.fft transforms the trailing (at most
// three) dimensions: other dims are moved last and back, three at a time.
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/fft_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::TensorType;
using hlo::Value;

// `dims` wrapped and sorted; each once, as CPU's fft checks them.
std::vector<int64_t> wrap_dims(const at::Tensor& self, at::IntArrayRef dim, const char* op) {
  std::vector<int64_t> dims(dim.begin(), dim.end());
  at::maybe_wrap_dims(dims, self.dim());
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  TORCH_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), op,
              ": dims must be unique");
  return dims;
}

double scale_for(int64_t normalization, double n, bool inverse_by_xla, const char* op) {
  TORCH_CHECK(normalization >= 0 && normalization <= 2, op, ": invalid normalization ",
              normalization);
  const double norm = normalization == 0 ? 1.0 : normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
  return inverse_by_xla ? norm * n : norm;
}

// x with dims `move` (in order) last, and the permutation that undoes it.
std::pair<Value, std::vector<int64_t>> move_last(Builder& b, Value x,
                                                 const std::vector<int64_t>& move) {
  const int64_t rank = static_cast<int64_t>(x.type.dims.size());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(move.begin(), move.end(), d) == move.end()) perm.push_back(d);
  }
  perm.insert(perm.end(), move.begin(), move.end());
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  return {b.transpose(x, perm), inverse};
}

// stablehlo.fft of `kind` over `dims` of x (at most three), the result of
// `result_element` with the last of `dims` of size `last_out`.
Value fft_over(Builder& b, Value x, const std::vector<int64_t>& dims, const char* kind,
               ElementType result_element, int64_t last_out, int64_t last_length) {
  auto [moved, inverse] = move_last(b, x, dims);
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < dims.size(); ++i) {
    lengths.push_back(x.type.dims[dims[i]]);
  }
  lengths.back() = last_length;
  std::vector<int64_t> out_dims = moved.type.dims;
  out_dims.back() = last_out;
  Value y = b.op("stablehlo.fft", {moved}, TensorType{result_element, out_dims},
                 "fft_type = #stablehlo<fft_type " + std::string(kind) +
                     ">, fft_length = " + hlo::i64_array(lengths));
  return b.transpose(y, inverse);
}

// Complex transforms over any number of dims, three at a time.
Value c2c_over(Builder& b, Value x, const std::vector<int64_t>& dims, bool forward) {
  for (size_t start = 0; start < dims.size(); start += 3) {
    std::vector<int64_t> chunk(dims.begin() + start,
                               dims.begin() + std::min(dims.size(), start + 3));
    const int64_t n = x.type.dims[chunk.back()];
    x = fft_over(b, x, chunk, forward ? "FFT" : "IFFT", x.type.element, n, n);
  }
  return x;
}

Value scaled(Builder& b, Value x, double scale) {
  if (scale == 1.0) return x;
  return b.binary("multiply", x, b.splat(b.constant(x.type.element, scale), x.type.dims));
}

double points(const at::Tensor& t, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(t.size(d));
  return n;
}

std::string dims_key(const char* name, const std::vector<int64_t>& dims, int64_t normalization,
                     int64_t extra) {
  std::string key =
      std::string(name) + ":" + std::to_string(normalization) + ":" + std::to_string(extra) + ":";
  for (int64_t d : dims) key += std::to_string(d) + ",";
  return key;
}

void check_float_or_complex(const at::Tensor& self, bool complex) {
  if (complex) {
    TORCH_CHECK(self.is_complex(), "Only supports complex dtypes, but found: ", self.scalar_type());
  } else {
    TORCH_CHECK(at::isFloatingType(self.scalar_type()),
                "Only supports floating-point dtypes, but found: ", self.scalar_type());
  }
  // half and bfloat16 transforms: CPU's pocketfft has none either
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK(
      t == at::kFloat || t == at::kDouble || t == at::kComplexFloat || t == at::kComplexDouble,
      "Unsupported dtype ", t);
}

void copy_to_out(const at::Tensor& result, at::Tensor& out, const char* op) {
  TORCH_CHECK(out.scalar_type() == result.scalar_type(), op, ": expected out to have dtype ",
              result.scalar_type(), ", got ", out.scalar_type());
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
}

}  // namespace

at::Tensor fft_c2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool forward) {
  check_float_or_complex(self, /*complex=*/true);
  const std::vector<int64_t> dims = wrap_dims(self, dim, "_fft_c2c");
  // laid out as the input, as CPU's kernel writes it
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (out.numel() == 0) return out;
  const double scale = scale_for(normalization, points(self, dims), !forward, "_fft_c2c");
  TensorProgram program("_fft_c2c",
                        dims_key(forward ? "fft_c2c:f" : "fft_c2c:b", dims, normalization, 0));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    if (dims.empty()) return std::vector<Value>{scaled(b, in[0], scale)};
    return std::vector<Value>{scaled(b, c2c_over(b, in[0], dims, forward), scale)};
  });
  return out;
}

at::Tensor fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool onesided) {
  check_float_or_complex(self, /*complex=*/false);
  const std::vector<int64_t> dims = wrap_dims(self, dim, "_fft_r2c");
  TORCH_CHECK(!dims.empty(), "_fft_r2c: expected at least one dim");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  const int64_t last = dims.back();
  if (onesided) shape[last] = shape[last] / 2 + 1;
  at::Tensor out =
      device_empty(shape, self.options().dtype(c10::toComplexType(self.scalar_type())));
  if (out.numel() == 0) return out;
  const double scale = scale_for(normalization, points(self, dims), false, "_fft_r2c");
  TensorProgram program("_fft_r2c", dims_key("fft_r2c", dims, normalization, onesided));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const ElementType complex = hlo::complex_type_of(in[0].type.element);
    Value y;
    if (onesided) {
      // the real transform halves the last dim, the others are complex
      const int64_t n = self.size(last);
      y = fft_over(b, in[0], {last}, "RFFT", complex, n / 2 + 1, n);
      y = c2c_over(b, y, std::vector<int64_t>(dims.begin(), dims.end() - 1), true);
    } else {
      y = c2c_over(b, b.convert(in[0], complex), dims, true);
    }
    return std::vector<Value>{scaled(b, y, scale)};
  });
  return out;
}

at::Tensor fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   int64_t last_dim_size) {
  check_float_or_complex(self, /*complex=*/true);
  const std::vector<int64_t> dims = wrap_dims(self, dim, "_fft_c2r");
  TORCH_CHECK(!dims.empty(), "_fft_c2r: expected at least one dim");
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  const int64_t last = dims.back();
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[last] = last_dim_size;
  at::Tensor out =
      device_empty(shape, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  if (out.numel() == 0) return out;
  // The onesided input holds last_dim_size / 2 + 1 points of the last dim.
  const int64_t half = last_dim_size / 2 + 1;
  TORCH_CHECK(self.size(last) >= half, "_fft_c2r: expected the last transformed dim to hold at ",
              "least ", half, " points, got ", self.size(last));
  double n = static_cast<double>(last_dim_size);
  for (int64_t d : dims) {
    if (d != last) n *= static_cast<double>(self.size(d));
  }
  const double scale = scale_for(normalization, n, /*inverse_by_xla=*/true, "_fft_c2r");
  TensorProgram program("_fft_c2r", dims_key("fft_c2r", dims, normalization, last_dim_size));
  program.input(self);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = in[0];
    if (x.type.dims[last] != half) {
      std::vector<int64_t> start(x.type.dims.size(), 0), limit = x.type.dims,
                                                         strides(x.type.dims.size(), 1);
      limit[last] = half;
      x = b.slice(x, start, limit, strides);
    }
    x = c2c_over(b, x, std::vector<int64_t>(dims.begin(), dims.end() - 1), false);
    Value y = fft_over(b, x, {last}, "IRFFT", hlo::real_part_type(x.type.element), last_dim_size,
                       last_dim_size);
    return std::vector<Value>{scaled(b, y, scale)};
  });
  return out;
}

at::Tensor& fft_c2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool forward, at::Tensor& out) {
  copy_to_out(fft_c2c(self, dim, normalization, forward), out, "_fft_c2c");
  return out;
}

at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool onesided, at::Tensor& out) {
  copy_to_out(fft_r2c(self, dim, normalization, onesided), out, "_fft_r2c");
  return out;
}

at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        int64_t last_dim_size, at::Tensor& out) {
  copy_to_out(fft_c2r(self, dim, normalization, last_dim_size), out, "_fft_c2r");
  return out;
}

}  // namespace torch_tpu::ops
