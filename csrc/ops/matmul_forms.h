// The two forms of a 2-d product a @ b that lowerings choose between: the
// plain dot, and the transposed-weight form the XLA CPU backend needs for
// x @ W.T (matmul_forms.cc). Shared by mm/addmm and _scaled_mm.
#pragma once

#include <ATen/core/Tensor.h>

#include "hlo/builder.h"

namespace torch_tpu::ops {

// x @ y, [M, K] x [K, N], in `result` (x's element type by default).
hlo::Value matmul2d(hlo::Builder& b, hlo::Value x, hlo::Value y);
hlo::Value matmul2d(hlo::Builder& b, hlo::Value x, hlo::Value y, hlo::ElementType result);

// x @ y as (y.T @ x.T).T (see matmul_forms.cc for why).
hlo::Value matmul2d_transposed_rhs(hlo::Builder& b, hlo::Value x, hlo::Value y);
hlo::Value matmul2d_transposed_rhs(hlo::Builder& b, hlo::Value x, hlo::Value y,
                                   hlo::ElementType result);

// True where mat1 @ mat2 should take the transposed-weight form: on the CPU
// plugin, mat2 the transpose of a row-major [N, K] matrix (x @ W.T, as
// Linear computes it), mat1 of more than one row, and W larger than mat1
// and the result together.
bool is_transposed_weight_product(const at::Tensor& mat1, const at::Tensor& mat2);

}  // namespace torch_tpu::ops
