// The argument checks of PyTorch's linear algebra functions, in CPU's words
// (ATen's LinearAlgebraUtils), shared by the tpu factorizations and solvers.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tpu::ops {

// "<f>: The input tensor A must have at least 2 dimensions."
void check_is_matrix(const at::Tensor& t, const char* f, const char* name = "A");
// check_is_matrix, then "<f>: A must be batches of square matrices, but
// they are 3 by 4 matrices".
void check_square(const at::Tensor& t, const char* f, const char* name = "A");
// "<f>: Expected a floating point or complex tensor as input. Got Long".
void check_floating_or_complex(const at::Tensor& t, const char* f);
// The dtypes CPU's LAPACK kernels have (float, double and their complex
// types): others raise NotImplementedError naming CPU's kernel, as the CPU
// dispatch does ("\"cholesky_cpu\" not implemented for 'Half'").
void check_lapack_dtype(const at::Tensor& t, const char* cpu_kernel);
// Resizes `out` to `sizes` with the last two dims column-major, as CPU's
// solvers and factorizations lay out their matrices (only when it needs a
// resize: a correctly sized out keeps its strides).
void resize_column_major(at::Tensor& out, at::IntArrayRef sizes);

}  // namespace torch_tpu::ops
