// Which backend F.scaled_dot_product_attention takes on tpu. PyTorch asks
// a device's `_fused_sdp_choice_stub` (a DispatchStub, not an operator);
// with none registered it runs its math path, which reads on the host
// whether any mask row is fully masked: a device sync per attention call.
// The "overrideable" backend's forward and backward operators are
// torch_tpu/_attention.py's, which answer that from the values instead.
#include <ATen/core/Tensor.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/native/transformers/sdp_utils_cpp.h>

namespace torch_tpu::device {
namespace {

int64_t choose_attention_backend(const at::Tensor& query, const at::Tensor& key, const at::Tensor&,
                                 const std::optional<at::Tensor>&, double dropout_p, bool,
                                 std::optional<double>, bool enable_gqa) {
  const auto math = static_cast<int64_t>(sdp::SDPBackend::math);
  // Dropout's mask would have to be replayed in the backward: math keeps it.
  if (dropout_p > 0.0 || query.dim() != 4 || key.dim() != 4 || query.is_nested()) return math;
  // Unequal head counts without enable_gqa: the math path raises PyTorch's
  // error. Head counts read without specializing any size of a tensor
  // traced with symbolic sizes (torch.compile): a symbolic head count takes
  // the math path.
  const std::optional<int64_t> query_heads = query.sym_size(1).maybe_as_int();
  const std::optional<int64_t> key_heads = key.sym_size(1).maybe_as_int();
  if (!query_heads || !key_heads) return math;
  if (*query_heads != *key_heads &&
      (!enable_gqa || *key_heads == 0 || *query_heads % *key_heads != 0)) {
    return math;
  }
  return static_cast<int64_t>(sdp::SDPBackend::overrideable);
}

}  // namespace
}  // namespace torch_tpu::device

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_tpu::device::choose_attention_backend)
}  // namespace at::native
