#include "ops/matmul_forms.h"

#include "core/runtime.h"

namespace torch_tpu::ops {

hlo::Value matmul2d(hlo::Builder& b, hlo::Value x, hlo::Value y, hlo::ElementType result) {
  return b.dot_general(x, y, {}, {}, {1}, {0}, result);
}

hlo::Value matmul2d(hlo::Builder& b, hlo::Value x, hlo::Value y) {
  return matmul2d(b, x, y, x.type.element);
}

// x @ W.T as (W @ x.T).T: the same sums, built so the large operand (a
// Linear's weight, stored [N, K]) is the dot's left side in its stored
// layout and only the small x and result are transposed. XLA's CPU backend
// otherwise copies W into its canonical layout on every call when x has
// more than one row (measured on this machine: [8, 576] @ [1536, 576].T
// 0.78 ms vs 0.19 ms; [2, 576] @ [49152, 576].T 40 ms vs 4.5 ms). The
// optimization barriers keep XLA's simplifier from folding the transposes
// back into the dot's dimension numbers, which is that slow form again.
// With one row the plain form is the fast one (a matrix-vector product), and
// with many rows too (is_transposed_weight_product says where).
hlo::Value matmul2d_transposed_rhs(hlo::Builder& b, hlo::Value x, hlo::Value y,
                                   hlo::ElementType result) {
  const hlo::Value w = b.transpose(y, {1, 0});
  const hlo::Value xt = b.transpose(x, {1, 0});
  const hlo::Value xt_kept = b.optimization_barrier(xt);
  const hlo::Value wx = b.dot_general(w, xt_kept, {}, {}, {1}, {0}, result);
  return b.transpose(b.optimization_barrier(wx), {1, 0});
}

hlo::Value matmul2d_transposed_rhs(hlo::Builder& b, hlo::Value x, hlo::Value y) {
  return matmul2d_transposed_rhs(b, x, y, x.type.element);
}

// GPU and TPU backends have GEMMs that take transposed operands as they are.
// The form moves x and the result (M * (K + N) elements) instead of W (N *
// K): it pays where W is the larger, as in decoding; a training batch of
// many rows is faster plain.
bool is_transposed_weight_product(const at::Tensor& mat1, const at::Tensor& mat2) {
  const int64_t m = mat1.size(0), k = mat2.size(0), n = mat2.size(1);
  return m > 1 && k > 1 && n > 1 && mat2.stride(0) == 1 && mat2.stride(1) == k &&
         n * k > m * (k + n) && Runtime::get().device_memory_is_host();
}

}  // namespace torch_tpu::ops
