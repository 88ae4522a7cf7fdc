// F.scaled_dot_product_attention's "overrideable" backend forward (the
// backend csrc/device/attention_choice.cc picks): the math path's sums with
// no host read. A fully masked row gets zero probabilities, as the math
// path's _safe_softmax gives, decided from the values on the device. The
// backward (torch_tpu/_attention.py) recomputes the probabilities, so the
// log-sum-exp output is zeros. Its steps run as one program (a
// StrictOpsInOneRegion): one launch per call, and one compile for each new
// key length in a decoding loop instead of one per step.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/region.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/strict_ops_in_one_region.h"

namespace torch_tpu::ops {
namespace {

// Grouped-query attention: each key/value head serves heads/kv query heads.
at::Tensor expand_heads(const at::Tensor& x, int64_t heads) {
  if (x.size(1) == heads) return x;
  return x.repeat_interleave(heads / x.size(1), 1);
}

// `x` (of `query`'s shape but its own last size) laid out in memory as
// `query` is: PyTorch's meta function for this op promises that layout, and
// compiled graphs view the output accordingly.
at::Tensor in_query_layout(const at::Tensor& x, const at::Tensor& query) {
  std::vector<int64_t> order(query.dim());
  for (int64_t d = 0; d < query.dim(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return query.stride(a) > query.stride(b); });
  std::vector<int64_t> permuted_sizes;
  for (int64_t d : order) permuted_sizes.push_back(x.size(d));
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
  const at::Tensor laid_out = device_empty(permuted_sizes, x.options()).permute(inverse);
  if (laid_out.strides() == x.strides()) return x;
  return laid_out.copy_(x);
}

// softmax(q k^T * scale + bias) v. Its intermediates are gone when it
// returns, so the region that runs it keeps only the result.
at::Tensor attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                     const std::optional<at::Tensor>& attn_bias, bool is_causal,
                     std::optional<double> scale) {
  const int64_t heads = query.size(1);
  const at::Tensor k = expand_heads(key, heads);
  const at::Tensor v = expand_heads(value, heads);
  const double factor = scale.has_value() ? *scale : 1.0 / std::sqrt(double(query.size(-1)));
  at::Tensor scores = at::matmul(query, k.transpose(-2, -1)).mul(factor);
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (attn_bias.has_value() && attn_bias->defined()) {
    scores = attn_bias->scalar_type() == at::kBool
                 ? scores.masked_fill(attn_bias->logical_not(), minus_inf)
                 : scores.add(*attn_bias);
  }
  if (is_causal) {
    const at::Tensor above =
        at::ones({query.size(-2), key.size(-2)}, query.options().dtype(at::kBool)).triu(1);
    scores = scores.masked_fill(above, minus_inf);
  }
  return in_query_layout(at::matmul(at::_safe_softmax(scores, -1), v), query);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor,
           at::Tensor, at::Tensor>
scaled_dot_product_attention_overrideable(const at::Tensor& query, const at::Tensor& key,
                                          const at::Tensor& value,
                                          const std::optional<at::Tensor>& attn_bias,
                                          double dropout_p, bool is_causal, bool return_debug_mask,
                                          std::optional<double> scale) {
  (void)return_debug_mask;
  TORCH_CHECK(dropout_p == 0.0,
              "_scaled_dot_product_fused_attention_overrideable: dropout runs on the math path "
              "on tpu");
  TORCH_CHECK(
      query.dim() == 4 && key.dim() == 4 && value.dim() == 4,
      "_scaled_dot_product_fused_attention_overrideable: expected 4-d query, key and value");
  const int64_t heads = query.size(1);
  TORCH_CHECK(key.size(1) > 0 && heads % key.size(1) == 0 && key.size(1) == value.size(1),
              "_scaled_dot_product_fused_attention_overrideable: ", heads,
              " query heads cannot share ", key.size(1), " key/value heads");
  // Fewer queries than keys: decoding over a KV cache that grows every step.
  ShapeVaryingOps over_growing_cache(query.size(-2) < key.size(-2) ? ShapeVarying::kReadsGrowing
                                                                   : ShapeVarying::kNo);
  StrictOpsInOneRegion region;
  const at::Tensor out = attention(query, key, value, attn_bias, is_causal, scale);
  // The log-sum-exp has the shape PyTorch's meta function gives it; the
  // backward does not read it. Zeros rather than never-written memory: a
  // compiled backward graph binds it as an input, which needs a buffer.
  const at::Tensor logsumexp =
      at::zeros({query.size(0), heads, query.size(2)}, query.options().dtype(at::kFloat));
  region.close();
  const at::Tensor empty = device_empty({0}, query.options().dtype(at::kLong));
  return {out,
          logsumexp,
          empty,
          empty,
          c10::SymInt(query.size(-2)),
          c10::SymInt(key.size(-2)),
          empty,
          empty,
          device_empty({0}, query.options())};
}

}  // namespace torch_tpu::ops
