// searchsorted and bucketize: a binary search per value over its row of
// boundaries, unrolled for the row length (ceil(log2(B + 1)) steps, each one
// gather), with CPU's exact steps and comparisons so that NaNs and unsorted
// boundaries give the same positions as CPU's kernel.
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/program_key.h"
#include "ops/search_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

bool dims_match_before_last(const at::Tensor& boundaries, const at::Tensor& input) {
  if (boundaries.dim() != input.dim()) return false;
  for (int64_t d = 0; d + 1 < boundaries.dim(); ++d) {
    if (boundaries.size(d) != input.size(d)) return false;
  }
  return true;
}

// ATen's searchsorted_pre_check, in its order.
void pre_check(const at::Tensor& boundaries, const at::Tensor& input, const at::Tensor& output,
               bool out_int32, bool right, std::optional<c10::string_view> side,
               const at::Tensor& sorter) {
  if (side.has_value()) {
    TORCH_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    TORCH_CHECK(!right || *side == "right", "torch.searchsorted(): side and right can't be set ",
                "to opposites, got side of ", *side, " while right was True");
  }
  TORCH_CHECK(boundaries.device() == input.device(), "torch.searchsorted(): boundaries and input ",
              "value tensors should have same device type, but got boundaries tensor device ",
              "type ", boundaries.device(), " and input value tensor device type ", input.device());
  if (sorter.defined()) {
    TORCH_CHECK(sorter.device() == boundaries.device(), "torch.searchsorted(): sorter and ",
                "boundary tensors should have same device type, but got sorter tensor device ",
                "type ", sorter.device(), " and input value tensor device type ",
                boundaries.device());
    TORCH_CHECK(sorter.sizes() == boundaries.sizes(), "torch.searchsorted(): boundary and sorter ",
                "must have the same size, but got boundary tensor ", boundaries.sizes(),
                "and got sorter tensor ", sorter.sizes());
    TORCH_CHECK(sorter.scalar_type() == at::kLong, "torch.searchsorted(): sorter must be a ",
                "tensor of long dtype but got dtype ", sorter.scalar_type());
  }
  TORCH_CHECK(input.dim() > 0 || (input.numel() == 1 && boundaries.dim() == 1),
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor ",
              "dimension is 1, but we got boundaries tensor dim(", boundaries.dim(),
              ") and input value's dim(", input.dim(), ") numel(", input.numel(), ")");
  TORCH_CHECK(boundaries.dim() != 0, "torch.searchsorted(): boundaries tensor should have ",
              "positive dimension, but got 0 dimension");
  TORCH_CHECK(boundaries.dim() == 1 || dims_match_before_last(boundaries, input),
              "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 ",
              "dimensions of boundaries tensor and input value tensor must match, but we got ",
              "boundaries tensor ", boundaries.sizes(), " and input value tensor ", input.sizes());
  const at::ScalarType out_type = output.scalar_type();
  TORCH_CHECK((out_type == at::kLong && !out_int32) || (out_type == at::kInt && out_int32),
              "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or ",
              "Long(int64) depending on whether out_int32 flag is True, but we got output ",
              "tensor's dtype ", out_type, " and out_int32 flag is ", out_int32 ? "True" : "False");
}

}  // namespace

at::Tensor& searchsorted_out(const at::Tensor& boundaries, const at::Tensor& input, bool out_int32,
                             bool right, std::optional<c10::string_view> side,
                             const std::optional<at::Tensor>& sorter_in, at::Tensor& out) {
  const char* op = "searchsorted";
  const at::Tensor sorter = sorter_in.has_value() ? *sorter_in : at::Tensor();
  pre_check(boundaries, input, out, out_int32, right, side, sorter);
  // Values and boundaries compare in their promoted dtype, as on CPU.
  const at::ScalarType common = c10::promoteTypes(input.scalar_type(), boundaries.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(common != at::kBool,
                              "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  at::native::resize_output(out, input.sizes());
  if (out.numel() == 0) return out;
  const bool is_right = side.has_value() ? *side == "right" : right;
  const int64_t bound = boundaries.size(-1);
  if (bound == 0) {
    fill_tensor(out, 0, op);
    return out;
  }
  // Rows of boundaries and the values searched in each.
  const int64_t rows = boundaries.numel() / bound;
  const int64_t per_row = input.numel() / rows;
  const ElementType t = element_type_for(common, op);
  int steps = 0;
  while ((int64_t{1} << steps) <= bound) ++steps;
  TensorProgram program(op,
                        program_key("searchsorted", is_right, sorter.defined(), hlo::mlir_name(t)));
  program.input(boundaries);
  program.input(input);
  if (sorter.defined()) program.input(sorter);
  program.output(out);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const std::vector<int64_t> shape{rows, per_row};
    auto s64 = [&](int64_t v) { return b.splat(b.constant_int(ElementType::kS64, v), shape); };
    Value bd = b.reshape(b.convert(in[0], t), {rows * bound});
    Value v = b.reshape(b.convert(in[1], t), shape);
    Value order = sorter.defined() ? b.reshape(in[2], {rows * bound}) : Value();
    Value base = b.binary("multiply", b.iota({ElementType::kS64, shape}, 0), s64(bound));
    Value lo = s64(0), hi = s64(bound);
    // CPU's loop: mid = lo + (hi - lo) / 2; go right unless bd[mid] >= v
    // (> v for the right side), negated so that NaNs go right.
    for (int i = 0; i < steps; ++i) {
      Value active = b.compare(Compare::kLT, lo, hi);
      Value mid = b.binary("add", lo, b.binary("divide", b.binary("subtract", hi, lo), s64(2)));
      Value at = b.binary("minimum", mid, s64(bound - 1));
      if (sorter.defined()) at = b.gather_1d(order, b.binary("add", base, at));
      Value mid_value = b.gather_1d(bd, b.binary("add", base, at));
      Value stop = b.compare(is_right ? Compare::kGT : Compare::kGE, mid_value, v);
      Value go_right = b.binary("and", active, b.unary("not", stop));
      Value go_left = b.binary("and", active, stop);
      lo = b.select(go_right, b.binary("add", mid, s64(1)), lo);
      hi = b.select(go_left, mid, hi);
    }
    return std::vector<Value>{lo};
  });
  return out;
}

at::Tensor searchsorted(const at::Tensor& boundaries, const at::Tensor& input, bool out_int32,
                        bool right, std::optional<c10::string_view> side,
                        const std::optional<at::Tensor>& sorter) {
  at::Tensor out = device_empty({0}, input.options().dtype(out_int32 ? at::kInt : at::kLong));
  return searchsorted_out(boundaries, input, out_int32, right, side, sorter, out);
}

at::Tensor& searchsorted_scalar_out(const at::Tensor& boundaries, const at::Scalar& value,
                                    bool out_int32, bool right,
                                    std::optional<c10::string_view> side,
                                    const std::optional<at::Tensor>& sorter, at::Tensor& out) {
  // A 0-d tensor of the scalar's own type (filled on the device: no upload).
  return searchsorted_out(boundaries, c10::scalar_to_tensor(value, boundaries.device()), out_int32,
                          right, side, sorter, out);
}

at::Tensor searchsorted_scalar(const at::Tensor& boundaries, const at::Scalar& value,
                               bool out_int32, bool right, std::optional<c10::string_view> side,
                               const std::optional<at::Tensor>& sorter) {
  return ops::searchsorted(boundaries, c10::scalar_to_tensor(value, boundaries.device()), out_int32,
                           right, side, sorter);
}

at::Tensor& bucketize_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                          bool right, at::Tensor& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsorted_out(boundaries, self, out_int32, right, std::nullopt, std::nullopt, out);
}

at::Tensor bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                     bool right) {
  at::Tensor out = device_empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return bucketize_out(self, boundaries, out_int32, right, out);
}

at::Tensor bucketize_scalar(const at::Scalar& value, const at::Tensor& boundaries, bool out_int32,
                            bool right) {
  return ops::bucketize(c10::scalar_to_tensor(value, boundaries.device()), boundaries, out_int32,
                        right);
}

}  // namespace torch_tpu::ops
