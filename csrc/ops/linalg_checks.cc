// See ops/linalg_checks.h.
#include "ops/linalg_checks.h"

#include <ATen/native/Resize.h>

namespace torch_tpu::ops {

void check_is_matrix(const at::Tensor& t, const char* f, const char* name) {
  TORCH_CHECK(t.dim() >= 2, f, ": The input tensor ", name, " must have at least 2 dimensions.");
}

void check_square(const at::Tensor& t, const char* f, const char* name) {
  check_is_matrix(t, f, name);
  TORCH_CHECK(t.size(-1) == t.size(-2), f, ": ", name,
              " must be batches of square matrices, but they are ", t.size(-2), " by ", t.size(-1),
              " matrices");
}

void check_floating_or_complex(const at::Tensor& t, const char* f) {
  const auto dtype = t.scalar_type();
  TORCH_CHECK(at::isFloatingType(dtype) || at::isComplexType(dtype), f,
              ": Expected a floating point or complex tensor as input. Got ", dtype);
}

void check_lapack_dtype(const at::Tensor& t, const char* cpu_kernel) {
  const auto dtype = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(dtype == at::kFloat || dtype == at::kDouble ||
                                  dtype == at::kComplexFloat || dtype == at::kComplexDouble,
                              "\"", cpu_kernel, "\" not implemented for '", c10::toString(dtype),
                              "'");
}

void resize_column_major(at::Tensor& out, at::IntArrayRef sizes) {
  if (!at::native::resize_output_check(out, sizes)) return;
  std::vector<int64_t> transposed = sizes.vec();
  if (transposed.size() >= 2)
    std::swap(transposed[transposed.size() - 1], transposed[transposed.size() - 2]);
  out.resize_(transposed);
  if (transposed.size() >= 2) out.transpose_(-2, -1);
}

}  // namespace torch_tpu::ops
