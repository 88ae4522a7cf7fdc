// Separable linear resampling over the 1 to 3 trailing dims of [N, C, ...]:
// F.interpolate's nearest, nearest-exact, (bi/tri)linear and bicubic modes,
// and adaptive average pooling, forward and backward.
//
// Each of these maps every spatial dim on its own: out = M_d · x along dim
// d, with a small constant matrix M_d [out, in] per dim, built on the host
// with ATen's own index and weight formulas (UpSample.h, AdaptivePooling.h),
// in the precision the CPU kernel computes in (double for double, else
// float). The backward is the transpose of the same matrices, so forward and
// backward share one lowering, and the CPU's edge rules (clamped taps,
// guarded lambdas) hold in both.
#include <ATen/TensorUtils.h>
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Resize.h>
#include <ATen/native/UpSample.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/program_key.h"
#include "ops/resample_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

enum class Mode {
  kAdaptiveAverage,
  kNearest,
  kNearestExact,
  kLinear,
  kCubic,
  // antialias=True: the filter widens by the downscaling factor (PIL's
  // resampling, as ATen's separable AA kernels compute it)
  kLinearAntialias,
  kCubicAntialias,
};

// The AA kernels' filters: a triangle, and Keys' cubic with a = -0.5.
template <typename T>
T antialias_filter(Mode mode, T x) {
  x = x < 0 ? -x : x;
  if (mode == Mode::kLinearAntialias) return x < 1 ? 1 - x : 0;
  const T a = -0.5;
  if (x < 1) return at::native::cubic_convolution1<T>(x, a);
  if (x < 2) return at::native::cubic_convolution2<T>(x, a);
  return 0;
}

// One dim's map: weights [out, in], row o the weights output o gives inputs.
struct AxisMap {
  int64_t in = 0, out = 0;
  std::vector<double> weights;
};

template <typename T>
AxisMap axis_map(Mode mode, int64_t in, int64_t out, bool align_corners,
                 std::optional<double> scale) {
  AxisMap m{in, out, std::vector<double>(static_cast<size_t>(in * out), 0.0)};
  auto add = [&](int64_t o, int64_t i, T w) { m.weights[o * in + i] += static_cast<double>(w); };
  for (int64_t o = 0; o < out; ++o) {
    switch (mode) {
      case Mode::kAdaptiveAverage: {
        const int64_t s = at::native::start_index(o, out, in);
        const int64_t e = at::native::end_index(o, out, in);
        for (int64_t i = s; i < e; ++i) add(o, i, T(1) / static_cast<T>(e - s));
        break;
      }
      case Mode::kNearest:
        add(o, at::native::nearest_idx(o, in, out, scale), T(1));
        break;
      case Mode::kNearestExact:
        add(o, at::native::nearest_exact_idx(o, in, out, scale), T(1));
        break;
      case Mode::kLinear: {
        const T ratio = at::native::area_pixel_compute_scale<T>(in, out, align_corners, scale);
        int64_t i0, i1;
        T l0, l1;
        at::native::compute_source_index_and_lambda<T, T>(i0, i1, l0, l1, ratio, o, in, out,
                                                          align_corners);
        add(o, i0, l0);
        add(o, i1, l1);
        break;
      }
      case Mode::kLinearAntialias:
      case Mode::kCubicAntialias: {
        // Output o averages the inputs under a filter centred on its source
        // position, as wide as the downscaling factor (at least one pixel);
        // the weights are normalized to sum to 1.
        const T taps = mode == Mode::kLinearAntialias ? 2 : 4;
        const T ratio = at::native::area_pixel_compute_scale<T>(in, out, align_corners, scale);
        const T support = ratio >= 1 ? taps * T(0.5) * ratio : taps * T(0.5);
        const T center = ratio * (static_cast<T>(o) + T(0.5));
        const T invscale = ratio >= 1 ? T(1) / ratio : T(1);
        const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + T(0.5)), 0);
        const int64_t size =
            std::min<int64_t>(static_cast<int64_t>(center + support + T(0.5)), in) - lo;
        std::vector<T> w(static_cast<size_t>(std::max<int64_t>(size, 0)));
        T total = 0;
        for (int64_t j = 0; j < size; ++j) {
          w[j] = antialias_filter<T>(mode, (static_cast<T>(j + lo) - center + T(0.5)) * invscale);
          total += w[j];
        }
        for (int64_t j = 0; j < size; ++j) add(o, lo + j, total != 0 ? w[j] / total : w[j]);
        break;
      }
      case Mode::kCubic: {
        // Four taps around the source position, each index clamped into
        // the input (upsample_get_value_bounded).
        const T ratio = at::native::area_pixel_compute_scale<T>(in, out, align_corners, scale);
        const T real =
            at::native::area_pixel_compute_source_index<T>(ratio, o, align_corners, true);
        int64_t i;
        T t;
        at::native::guard_index_and_lambda(real, in, i, t);
        T coeffs[4];
        at::native::get_cubic_upsample_coefficients<T>(coeffs, t);
        for (int64_t k = 0; k < 4; ++k) {
          add(o, std::min(std::max<int64_t>(i - 1 + k, 0), in - 1), coeffs[k]);
        }
        break;
      }
    }
  }
  return m;
}

Value matrix_constant(Builder& b, const AxisMap& m, ElementType t) {
  std::vector<unsigned char> bytes;
  if (t == ElementType::kF64) {
    bytes.resize(m.weights.size() * sizeof(double));
    std::memcpy(bytes.data(), m.weights.data(), bytes.size());
  } else {
    std::vector<float> w(m.weights.begin(), m.weights.end());
    bytes.resize(w.size() * sizeof(float));
    std::memcpy(bytes.data(), w.data(), bytes.size());
  }
  return b.constant_tensor({t, {m.out, m.in}}, bytes);
}

// The whole separable map: forward (src [planes, *in] -> dst [planes, *out])
// or transposed (src [planes, *out] -> dst [planes, *in]).
at::Tensor& separable_map(const char* op, const std::string& key, const at::Tensor& src,
                          at::Tensor& dst, Mode mode, bool align_corners,
                          const std::vector<std::optional<double>>& scales,
                          const std::vector<int64_t>& in_sizes,
                          const std::vector<int64_t>& out_sizes, bool transpose) {
  if (dst.numel() == 0) return dst;
  const at::ScalarType st = src.scalar_type();
  const bool nearest = mode == Mode::kNearest || mode == Mode::kNearestExact;
  TORCH_CHECK_NOT_IMPLEMENTED(
      (at::isFloatingType(st) && !c10::isFloat8Type(st)) || (nearest && st == at::kByte), "\"", op,
      "\" not implemented for '", c10::toString(st), "'");
  const ElementType t = element_type_for(st, op);
  const ElementType compute = st == at::kDouble ? ElementType::kF64 : ElementType::kF32;
  const size_t k = in_sizes.size();
  const std::vector<int64_t>& from = transpose ? out_sizes : in_sizes;
  int64_t plane = 1;
  for (int64_t n : from) plane *= n;
  const int64_t planes = src.numel() / plane;
  TensorProgram program(op, key);
  program.input(src);
  program.output(dst);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    std::vector<int64_t> dims{planes};
    dims.insert(dims.end(), from.begin(), from.end());
    Value x = b.convert(b.reshape(in[0], dims), compute);
    const int64_t rank = static_cast<int64_t>(k) + 1;
    for (size_t j = 0; j < k; ++j) {
      const int64_t along = static_cast<int64_t>(j) + 1;
      // dot_general puts x's free dims first and the matrix's free dim
      // last; the permutation moves that one back to `along`.
      // The matrix is built here, when the program is lowered, not on
      // every call that finds it compiled.
      const AxisMap map =
          compute == ElementType::kF64
              ? axis_map<double>(mode, in_sizes[j], out_sizes[j], align_corners, scales[j])
              : axis_map<float>(mode, in_sizes[j], out_sizes[j], align_corners, scales[j]);
      x = b.dot_general(x, matrix_constant(b, map, compute), {}, {}, {along}, {transpose ? 0 : 1},
                        compute);
      std::vector<int64_t> perm;
      for (int64_t d = 0; d < rank; ++d) {
        perm.push_back(d < along ? d : d == along ? rank - 1 : d - 1);
      }
      if (along != rank - 1) x = b.transpose(x, perm);
    }
    return std::vector<Value>{b.reshape(b.convert(x, t), dst.sizes().vec())};
  });
  return dst;
}

std::string scales_key(const std::vector<std::optional<double>>& scales) {
  std::string s;
  for (const auto& v : scales) s += (v ? std::to_string(*v) : "-") + ";";
  return s;
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kAdaptiveAverage:
      return "adaptive_avg";
    case Mode::kNearest:
      return "nearest";
    case Mode::kNearestExact:
      return "nearest_exact";
    case Mode::kLinear:
      return "linear";
    case Mode::kCubic:
      return "cubic";
    case Mode::kLinearAntialias:
      return "linear_aa";
    case Mode::kCubicAntialias:
      return "cubic_aa";
  }
  return "";
}

// The CPU's checks of an upsampling of output_size.size() dims
// (upsample_{1,2,3}d_common_check): the input's full sizes and the output's.
std::vector<int64_t> checked_full_sizes(at::IntArrayRef input_size, at::IntArrayRef output_size,
                                        int k) {
  switch (k) {
    case 1: {
      auto s = at::native::upsample_1d_common_check(input_size, output_size);
      return {s.begin(), s.end()};
    }
    case 2: {
      auto s = at::native::upsample_2d_common_check(input_size, output_size);
      return {s.begin(), s.end()};
    }
    default: {
      auto s = at::native::upsample_3d_common_check(input_size, output_size);
      return {s.begin(), s.end()};
    }
  }
}

at::Tensor& upsample(const char* op, int k, const at::Tensor& self, at::IntArrayRef output_size,
                     Mode mode, bool align_corners,
                     const std::vector<std::optional<double>>& scales, at::Tensor& out) {
  const std::vector<int64_t> full = checked_full_sizes(self.sizes(), output_size, k);
  TORCH_CHECK(
      self.numel() != 0 || c10::multiply_integers(self.sizes().begin() + 1, self.sizes().end()),
      "Non-empty ", k + 2, "D data tensor expected but got a tensor with sizes ", self.sizes());
  at::native::resize_output(out, full);
  const std::vector<int64_t> in_sizes(self.sizes().end() - k, self.sizes().end());
  return separable_map(op, program_key(mode_name(mode), align_corners, scales_key(scales)), self,
                       out, mode, align_corners, scales, in_sizes, output_size.vec(), false);
}

at::Tensor& upsample_backward(const char* op, int k, const at::Tensor& grad_output,
                              at::IntArrayRef output_size, at::IntArrayRef input_size, Mode mode,
                              bool align_corners, const std::vector<std::optional<double>>& scales,
                              at::Tensor& grad_input) {
  const std::vector<int64_t> full = checked_full_sizes(input_size, output_size, k);
  // CPU's messages: 2d kernels name the shapes, 1d and 3d ones check_dim_size's.
  if (k == 2) {
    TORCH_CHECK(grad_output.dim() == k + 2, "Expected grad_output to be a tensor of dimension ",
                k + 2, " but got: dimension ", grad_output.dim());
  }
  for (int64_t i = 0; i < k + 2; ++i) {
    if (k != 2) {
      at::check_dim_size(grad_output, k + 2, i, full[i]);
      continue;
    }
    TORCH_CHECK(grad_output.size(i) == full[i],
                "Expected grad_output to have the same shape as output;", " output.size(", i,
                ") = ", full[i], " but got grad_output.size(", i, ") = ", grad_output.size(i));
  }
  at::native::resize_output(grad_input, input_size);
  const std::vector<int64_t> in_sizes(input_size.end() - k, input_size.end());
  return separable_map(op, program_key(mode_name(mode), "bwd", align_corners, scales_key(scales)),
                       grad_output, grad_input, mode, align_corners, scales, in_sizes,
                       output_size.vec(), true);
}

at::Tensor adaptive_avg_pool(const char* op, int k, const at::Tensor& self,
                             at::IntArrayRef output_size) {
  TORCH_CHECK(self.dim() == k + 1 || self.dim() == k + 2, op, ": Expected ", k + 1, "D or ", k + 2,
              "D tensor, but got ", self.sizes());
  TORCH_CHECK(static_cast<int>(output_size.size()) == k, op, ": output_size must be ", k);
  for (int64_t i = 1; i < self.dim(); ++i) {
    TORCH_CHECK(self.size(i) > 0, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ",
                self.sizes(), " with dimension ", i, " being empty");
  }
  std::vector<int64_t> sizes = self.sizes().vec();
  const std::vector<int64_t> in_sizes(sizes.end() - k, sizes.end());
  for (int j = 0; j < k; ++j) sizes[sizes.size() - k + j] = output_size[j];
  at::Tensor out = device_empty(sizes, self.options());
  return separable_map(op, program_key("adaptive_avg"), self, out, Mode::kAdaptiveAverage, false,
                       std::vector<Scale>(k), in_sizes, output_size.vec(), false);
}

at::Tensor adaptive_avg_pool_backward(const char* op, int k, const at::Tensor& grad_output,
                                      const at::Tensor& self) {
  const std::vector<int64_t> in_sizes(self.sizes().end() - k, self.sizes().end());
  const std::vector<int64_t> out_sizes(grad_output.sizes().end() - k, grad_output.sizes().end());
  at::Tensor grad_input = device_empty(self.sizes(), self.options());
  return separable_map(op, program_key("adaptive_avg_bwd"), grad_output, grad_input,
                       Mode::kAdaptiveAverage, false, std::vector<Scale>(k), in_sizes, out_sizes,
                       true);
}

}  // namespace

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, at::IntArrayRef output_size) {
  return adaptive_avg_pool("adaptive_avg_pool2d", 2, self, output_size);
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  return adaptive_avg_pool_backward("adaptive_avg_pool2d_backward", 2, grad_output, self);
}

at::Tensor adaptive_avg_pool3d(const at::Tensor& self, at::IntArrayRef output_size) {
  return adaptive_avg_pool("adaptive_avg_pool3d", 3, self, output_size);
}

at::Tensor adaptive_avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  return adaptive_avg_pool_backward("adaptive_avg_pool3d_backward", 3, grad_output, self);
}

// F.interpolate's modes. Each forward and backward names its op and rank.

at::Tensor& upsample_nearest1d_out(const at::Tensor& self, at::IntArrayRef output_size, Scale s,
                                   at::Tensor& out) {
  return upsample("upsample_nearest1d", 1, self, output_size, Mode::kNearest, false, {s}, out);
}

at::Tensor& upsample_nearest1d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            Scale s, at::Tensor& grad_input) {
  return upsample_backward("upsample_nearest1d_backward", 1, grad_output, output_size, input_size,
                           Mode::kNearest, false, {s}, grad_input);
}

at::Tensor& upsample_nearest2d_out(const at::Tensor& self, at::IntArrayRef output_size, Scale h,
                                   Scale w, at::Tensor& out) {
  return upsample("upsample_nearest2d", 2, self, output_size, Mode::kNearest, false, {h, w}, out);
}

at::Tensor& upsample_nearest2d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            Scale h, Scale w, at::Tensor& grad_input) {
  return upsample_backward("upsample_nearest2d_backward", 2, grad_output, output_size, input_size,
                           Mode::kNearest, false, {h, w}, grad_input);
}

at::Tensor& upsample_nearest3d_out(const at::Tensor& self, at::IntArrayRef output_size, Scale d,
                                   Scale h, Scale w, at::Tensor& out) {
  return upsample("upsample_nearest3d", 3, self, output_size, Mode::kNearest, false, {d, h, w},
                  out);
}

at::Tensor& upsample_nearest3d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            Scale d, Scale h, Scale w, at::Tensor& grad_input) {
  return upsample_backward("upsample_nearest3d_backward", 3, grad_output, output_size, input_size,
                           Mode::kNearest, false, {d, h, w}, grad_input);
}

at::Tensor& upsample_nearest_exact1d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                         Scale s, at::Tensor& out) {
  return upsample("_upsample_nearest_exact1d", 1, self, output_size, Mode::kNearestExact, false,
                  {s}, out);
}

at::Tensor& upsample_nearest_exact1d_backward_out(const at::Tensor& grad_output,
                                                  at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, Scale s,
                                                  at::Tensor& grad_input) {
  return upsample_backward("_upsample_nearest_exact1d_backward", 1, grad_output, output_size,
                           input_size, Mode::kNearestExact, false, {s}, grad_input);
}

at::Tensor& upsample_nearest_exact2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                         Scale h, Scale w, at::Tensor& out) {
  return upsample("_upsample_nearest_exact2d", 2, self, output_size, Mode::kNearestExact, false,
                  {h, w}, out);
}

at::Tensor& upsample_nearest_exact2d_backward_out(const at::Tensor& grad_output,
                                                  at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, Scale h, Scale w,
                                                  at::Tensor& grad_input) {
  return upsample_backward("_upsample_nearest_exact2d_backward", 2, grad_output, output_size,
                           input_size, Mode::kNearestExact, false, {h, w}, grad_input);
}

at::Tensor& upsample_nearest_exact3d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                         Scale d, Scale h, Scale w, at::Tensor& out) {
  return upsample("_upsample_nearest_exact3d", 3, self, output_size, Mode::kNearestExact, false,
                  {d, h, w}, out);
}

at::Tensor& upsample_nearest_exact3d_backward_out(const at::Tensor& grad_output,
                                                  at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, Scale d, Scale h,
                                                  Scale w, at::Tensor& grad_input) {
  return upsample_backward("_upsample_nearest_exact3d_backward", 3, grad_output, output_size,
                           input_size, Mode::kNearestExact, false, {d, h, w}, grad_input);
}

at::Tensor& upsample_linear1d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                  bool align_corners, Scale s, at::Tensor& out) {
  return upsample("upsample_linear1d", 1, self, output_size, Mode::kLinear, align_corners, {s},
                  out);
}

at::Tensor& upsample_linear1d_backward_out(const at::Tensor& grad_output,
                                           at::IntArrayRef output_size, at::IntArrayRef input_size,
                                           bool align_corners, Scale s, at::Tensor& grad_input) {
  return upsample_backward("upsample_linear1d_backward", 1, grad_output, output_size, input_size,
                           Mode::kLinear, align_corners, {s}, grad_input);
}

at::Tensor& upsample_bilinear2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                    bool align_corners, Scale h, Scale w, at::Tensor& out) {
  return upsample("upsample_bilinear2d", 2, self, output_size, Mode::kLinear, align_corners, {h, w},
                  out);
}

at::Tensor& upsample_bilinear2d_backward_out(const at::Tensor& grad_output,
                                             at::IntArrayRef output_size,
                                             at::IntArrayRef input_size, bool align_corners,
                                             Scale h, Scale w, at::Tensor& grad_input) {
  return upsample_backward("upsample_bilinear2d_backward", 2, grad_output, output_size, input_size,
                           Mode::kLinear, align_corners, {h, w}, grad_input);
}

at::Tensor& upsample_bicubic2d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                   bool align_corners, Scale h, Scale w, at::Tensor& out) {
  return upsample("upsample_bicubic2d", 2, self, output_size, Mode::kCubic, align_corners, {h, w},
                  out);
}

at::Tensor& upsample_bicubic2d_backward_out(const at::Tensor& grad_output,
                                            at::IntArrayRef output_size, at::IntArrayRef input_size,
                                            bool align_corners, Scale h, Scale w,
                                            at::Tensor& grad_input) {
  return upsample_backward("upsample_bicubic2d_backward", 2, grad_output, output_size, input_size,
                           Mode::kCubic, align_corners, {h, w}, grad_input);
}

at::Tensor& upsample_bilinear2d_aa_out(const at::Tensor& self, at::IntArrayRef output_size,
                                       bool align_corners, Scale h, Scale w, at::Tensor& out) {
  return upsample("_upsample_bilinear2d_aa", 2, self, output_size, Mode::kLinearAntialias,
                  align_corners, {h, w}, out);
}

at::Tensor& upsample_bilinear2d_aa_backward_out(const at::Tensor& grad_output,
                                                at::IntArrayRef output_size,
                                                at::IntArrayRef input_size, bool align_corners,
                                                Scale h, Scale w, at::Tensor& grad_input) {
  return upsample_backward("_upsample_bilinear2d_aa_backward", 2, grad_output, output_size,
                           input_size, Mode::kLinearAntialias, align_corners, {h, w}, grad_input);
}

at::Tensor& upsample_bicubic2d_aa_out(const at::Tensor& self, at::IntArrayRef output_size,
                                      bool align_corners, Scale h, Scale w, at::Tensor& out) {
  return upsample("_upsample_bicubic2d_aa", 2, self, output_size, Mode::kCubicAntialias,
                  align_corners, {h, w}, out);
}

at::Tensor& upsample_bicubic2d_aa_backward_out(const at::Tensor& grad_output,
                                               at::IntArrayRef output_size,
                                               at::IntArrayRef input_size, bool align_corners,
                                               Scale h, Scale w, at::Tensor& grad_input) {
  return upsample_backward("_upsample_bicubic2d_aa_backward", 2, grad_output, output_size,
                           input_size, Mode::kCubicAntialias, align_corners, {h, w}, grad_input);
}

at::Tensor& upsample_trilinear3d_out(const at::Tensor& self, at::IntArrayRef output_size,
                                     bool align_corners, Scale d, Scale h, Scale w,
                                     at::Tensor& out) {
  return upsample("upsample_trilinear3d", 3, self, output_size, Mode::kLinear, align_corners,
                  {d, h, w}, out);
}

at::Tensor& upsample_trilinear3d_backward_out(const at::Tensor& grad_output,
                                              at::IntArrayRef output_size,
                                              at::IntArrayRef input_size, bool align_corners,
                                              Scale d, Scale h, Scale w, at::Tensor& grad_input) {
  return upsample_backward("upsample_trilinear3d_backward", 3, grad_output, output_size, input_size,
                           Mode::kLinear, align_corners, {d, h, w}, grad_input);
}

}  // namespace torch_tpu::ops
