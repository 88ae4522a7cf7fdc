// torch.amp.GradScaler's two kernels on tpu, each one program: unscaling
// the gradients while noting any inf/NaN in them, and updating the scale
// and its growth tracker from what was found. Written with tpu ops on the
// 0-dim state tensors (no host read: the step that follows is not held up
// waiting for found_inf), with CUDA's and CPU's rules.
#include <ATen/ATen.h>

#include "ops/amp_kernels.h"
#include "ops/strict_ops_in_one_region.h"

namespace torch_tpu::ops {
namespace {

void check_state(const char* op, const at::Tensor& t, const char* name, at::ScalarType dtype) {
  TORCH_CHECK(t.numel() == 1, op, ": ", name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == dtype, op, ": ", name, " must be a ", c10::toString(dtype),
              " tensor.");
}

}  // namespace

void amp_foreach_non_finite_check_and_unscale_(at::TensorList grads, at::Tensor& found_inf,
                                               const at::Tensor& inv_scale) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_state(op, inv_scale, "inv_scale", at::kFloat);
  check_state(op, found_inf, "found_inf", at::kFloat);
  for (const at::Tensor& g : grads) {
    TORCH_CHECK(g.device() == found_inf.device() && g.device() == inv_scale.device(), op,
                ": scaled_grads, found_inf and inv_scale must be on the same device");
    TORCH_CHECK(at::isFloatingType(g.scalar_type()), op, ": scaled_grads must be floating point");
  }
  if (grads.empty()) return;
  StrictOpsInOneRegion region;
  const at::Tensor scale = inv_scale.reshape({});
  at::Tensor bad = found_inf.reshape({}).ne(0);
  for (const at::Tensor& g : grads) {
    if (g.numel() == 0) continue;
    bad = bad.logical_or(g.isfinite().logical_not().any());
    // Non-finite values are multiplied too, as CPU and CUDA do.
    const_cast<at::Tensor&>(g).mul_(scale);
  }
  found_inf.copy_(at::where(bad, 1.0, found_inf.reshape({})).reshape(found_inf.sizes()));
  region.close();
}

at::Tensor& amp_update_scale_(at::Tensor& current_scale, at::Tensor& growth_tracker,
                              const at::Tensor& found_inf, double growth_factor,
                              double backoff_factor, int64_t growth_interval) {
  const char* op = "_amp_update_scale_";
  check_state(op, current_scale, "current_scale", at::kFloat);
  check_state(op, growth_tracker, "growth_tracker", at::kInt);
  check_state(op, found_inf, "found_inf", at::kFloat);
  StrictOpsInOneRegion region;
  const at::Tensor scale = current_scale.reshape({});
  const at::Tensor inf = found_inf.reshape({}).ne(0);
  const at::Tensor successful = growth_tracker.reshape({}) + 1;
  const at::Tensor grow = inf.logical_not().logical_and(successful.eq(growth_interval));
  // The factors are applied in float32 (CUDA multiplies in double and
  // rounds; equal for the power-of-two defaults). A grown scale that is
  // not finite is not taken.
  const at::Tensor grown = scale * growth_factor;
  const at::Tensor next = at::where(inf, scale * backoff_factor,
                                    at::where(grow.logical_and(grown.isfinite()), grown, scale));
  const at::Tensor tracker = at::where(inf.logical_or(grow), 0, successful);
  current_scale.copy_(next.reshape(current_scale.sizes()));
  growth_tracker.copy_(tracker.reshape(growth_tracker.sizes()));
  region.close();
  return current_scale;
}

}  // namespace torch_tpu::ops
