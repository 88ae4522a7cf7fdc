// linalg.matrix_exp (torch.matrix_exp; the orthogonal parametrization of
// square weights, continuous-time models): scaling and squaring on the
// device (ops/linalg_lowering.h); half types computed in float, as CPU.
#include <ATen/ATen.h>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/linalg_lowering.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {

at::Tensor linalg_matrix_exp(const at::Tensor& self) {
  const char* f = "linalg.matrix_exp";
  check_square(self, f);
  check_floating_or_complex(self, f);
  at::Tensor out = device_empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  const hlo::ElementType t = element_type_for(self.scalar_type(), f);
  const bool reduced = t == hlo::ElementType::kF16 || t == hlo::ElementType::kBF16;
  TensorProgram program(f, "matrix_exp");
  program.input(self);
  program.output(out);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    hlo::Value a = reduced ? b.convert(in[0], hlo::ElementType::kF32) : in[0];
    return std::vector<hlo::Value>{b.convert(matrix_exp(b, a), t)};
  });
  return out;
}

}  // namespace torch_tpu::ops
