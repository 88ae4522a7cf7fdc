#include "ops/nan_check.h"

#include <ATen/ops/isfinite.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <string>

namespace torch_tpu {

bool nan_check_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TORCH_TPU_DEBUG_NAN");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return enabled;
}

void check_outputs_finite(const char* op, const std::vector<at::Tensor>& outputs) {
  // Copying to the host runs tpu programs of its own: don't check those.
  thread_local bool checking = false;
  if (checking) return;
  checking = true;
  try {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const at::Tensor& t = outputs[i];
      if (!t.defined() || t.numel() == 0 || !at::isFloatingType(t.scalar_type())) continue;
      at::Tensor host = t.cpu();
      if (!at::isfinite(host).all().item<bool>()) {
        const bool has_nan = host.isnan().any().item<bool>();
        TORCH_CHECK(false, "TORCH_TPU_DEBUG_NAN: ", op, " produced ", has_nan ? "NaN" : "Inf",
                    " in output ", i, " (shape ", t.sizes(), ", dtype ", t.scalar_type(), ")");
      }
    }
  } catch (...) {
    checking = false;
    throw;
  }
  checking = false;
}

}  // namespace torch_tpu
