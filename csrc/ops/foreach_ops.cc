// torch._foreach_* ops on tpu: PyTorch's own per-tensor loop (the
// CompositeExplicitAutograd "slow" kernel every backend without
// multi-tensor kernels gets) run inside one DeferAndFuse region. A for-each
// op over N tensors is then one program in Strict instead of N launches:
// what torch.optim's foreach implementations (the default on tpu) and
// clip_grad_norm_ are made of. Values are the per-tensor ops' own, so every
// dtype, promotion and error rule is theirs.
//
// In DeferAndFuse (and inside a compiled graph's capture) the ops join the
// open region as before; Debug mode keeps one launch per op, so an error is
// raised at the tensor that caused it.
#include "ops/foreach_ops.h"

#include <ATen/NativeFunctions.h>

#include "ops/foreach_overloads.h"
#include "ops/strict_ops_in_one_region.h"

namespace torch_tpu::ops {

void register_foreach_ops(torch::Library& m) {
#define TORCH_TPU_REGISTER_FOREACH(name, kernel) \
  m.impl(name, TORCH_FN(InOneRegion<&at::native::kernel>::call));
  TORCH_TPU_FOREACH_OVERLOADS(TORCH_TPU_REGISTER_FOREACH)
#undef TORCH_TPU_REGISTER_FOREACH
}

}  // namespace torch_tpu::ops
