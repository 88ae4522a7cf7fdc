// torch.autocast("tpu"): the same per-op policy CUDA uses, through the op
// lists ATen exports for backends to reuse. Matmuls, convolutions, linear
// and scaled_dot_product_attention run in the autocast dtype (bfloat16 by
// default); norms, losses, softmax and reductions run in float32; ops that
// mix operands promote to the widest. Everything else falls through.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_tpu {
namespace {

using at::Tensor;
using c10::IntArrayRef;
using c10::Scalar;
using c10::ScalarType;

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TORCH_TPU_AUTOCAST_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TORCH_TPU_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TORCH_TPU_AUTOCAST_FP32_OPT(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define TORCH_TPU_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TORCH_TPU_AUTOCAST_LOWER)
  AT_FORALL_FP32(TORCH_TPU_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TORCH_TPU_AUTOCAST_FP32_OPT)
  AT_FORALL_PROMOTE(TORCH_TPU_AUTOCAST_PROMOTE)
#undef TORCH_TPU_AUTOCAST_LOWER
#undef TORCH_TPU_AUTOCAST_FP32
#undef TORCH_TPU_AUTOCAST_FP32_OPT
#undef TORCH_TPU_AUTOCAST_PROMOTE
}

}  // namespace
}  // namespace torch_tpu
