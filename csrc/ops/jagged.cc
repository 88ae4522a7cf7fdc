// A jagged nested tensor (torch.nested's layout=torch.jagged) keeps its
// sequences packed in one `values` tensor [total, ...] with `offsets` [B + 1]
// marking where each starts. to_padded_tensor, reductions over the ragged
// dimension and their gradients go through these two conversions. CPU's
// kernels copy one sequence at a time after reading its offsets on the host;
// here each output row finds its source row from the offsets on the device
// (a gather and a select), so no offset is read back.
#include <ATen/ATen.h>

#include <vector>

#include "ops/jagged_kernels.h"

namespace torch_tpu::ops {
namespace {

// The one offsets tensor both conversions take, as int64 on values' device.
at::Tensor single_offsets(at::TensorList offsets, const at::Tensor& like, const char* op) {
  TORCH_CHECK(offsets.size() == 1, op, "(): only a single jagged dim is supported for now");
  TORCH_CHECK(offsets[0].dim() == 1 && offsets[0].numel() >= 1, op,
              "(): expected offsets to be a 1-D tensor of B + 1 entries, got shape ",
              offsets[0].sizes());
  TORCH_CHECK(!at::isFloatingType(offsets[0].scalar_type()) && !offsets[0].is_complex(), op,
              "(): expected integer offsets, got ", offsets[0].scalar_type());
  return offsets[0].to(like.device(), at::kLong);
}

// `mask` with `trailing_dims` size-1 dims appended, to broadcast over the
// trailing dims of the rows it selects.
at::Tensor rowwise(const at::Tensor& mask, int64_t trailing_dims) {
  std::vector<int64_t> shape = mask.sizes().vec();
  shape.insert(shape.end(), trailing_dims, 1);
  return mask.view(shape);
}

}  // namespace

at::Tensor jagged_to_padded_dense(const at::Tensor& values, at::TensorList offsets_list,
                                  c10::SymIntArrayRef max_lengths, double padding_value) {
  const char* op = "_jagged_to_padded_dense_forward";
  TORCH_CHECK(max_lengths.size() == 1, op, "(): expected single max_length, got ",
              max_lengths.size());
  TORCH_CHECK(values.dim() >= 1, op, "(): expected values of at least one dimension");
  const at::Tensor offsets = single_offsets(offsets_list, values, op);
  const int64_t batch = offsets.size(0) - 1;
  const int64_t max_length = max_lengths[0].guard_int(__FILE__, __LINE__);
  TORCH_CHECK(max_length >= 0, op, "(): max_length must be non-negative, got ", max_length);

  std::vector<int64_t> shape = values.sizes().vec();
  shape[0] = max_length;
  shape.insert(shape.begin(), batch);
  at::Tensor padding = at::full({}, padding_value, values.options());
  if (batch == 0 || max_length == 0 || values.size(0) == 0) return padding.expand(shape).clone();

  // Row j of sequence b is values[offsets[b] + j] where j < its length; a
  // sequence longer than max_length is cut, as CPU's and CUDA's kernels do.
  const at::Tensor position = at::arange(max_length, offsets.options()).unsqueeze(0);
  const at::Tensor start = offsets.narrow(0, 0, batch).unsqueeze(1);
  const at::Tensor length =
      (offsets.narrow(0, 1, batch) - offsets.narrow(0, 0, batch)).unsqueeze(1);
  const at::Tensor valid = position.lt(length);
  const at::Tensor source = at::where(valid, start + position, 0).clamp(0, values.size(0) - 1);
  const at::Tensor gathered = values.index_select(0, source.reshape(-1)).view(shape);
  return at::where(rowwise(valid, values.dim() - 1), gathered, padding);
}

at::Tensor padded_dense_to_jagged(const at::Tensor& dense, at::TensorList offsets_list,
                                  std::optional<c10::SymInt> total_length) {
  const char* op = "_padded_dense_to_jagged_forward";
  TORCH_CHECK(dense.dim() >= 2, op, "(): expected a padded tensor [B, L, ...], got shape ",
              dense.sizes());
  const at::Tensor offsets = single_offsets(offsets_list, dense, op);
  const int64_t batch = dense.size(0), max_length = dense.size(1);
  TORCH_CHECK(offsets.size(0) == batch + 1, op, "(): expected ", batch + 1,
              " offsets for a batch of ", batch, ", got ", offsets.size(0));
  // Without total_L the jagged size is the last offset, read on the host as
  // CPU's kernel reads it.
  const int64_t total = total_length.has_value() ? total_length->guard_int(__FILE__, __LINE__)
                                                 : offsets.select(0, -1).item<int64_t>();
  TORCH_CHECK(total >= 0, op, "(): total_L must be non-negative, got ", total);

  std::vector<int64_t> shape = dense.sizes().vec();
  shape.erase(shape.begin());
  shape[0] = total;
  if (total == 0 || batch == 0 || max_length == 0) return at::zeros(shape, dense.options());

  // Jagged row r belongs to the sequence whose offsets bracket it and sits at
  // r - offsets[b] in it; rows outside every sequence, or past the padded
  // length, are 0.
  const at::Tensor row = at::arange(total, offsets.options());
  const at::Tensor sequence =
      at::searchsorted(offsets, row, /*out_int32=*/false, /*right=*/true) - 1;
  const at::Tensor clamped = sequence.clamp(0, batch - 1);
  const at::Tensor position = row - offsets.index_select(0, clamped);
  const at::Tensor valid = sequence.ge(0) & sequence.lt(batch) & position.lt(max_length);
  const at::Tensor source = clamped * max_length + position.clamp(0, max_length - 1);
  std::vector<int64_t> flat_shape = shape;
  flat_shape[0] = batch * max_length;
  const at::Tensor gathered = dense.reshape(flat_shape).index_select(0, source);
  return at::where(rowwise(valid, dense.dim() - 2), gathered, at::zeros({}, dense.options()));
}

}  // namespace torch_tpu::ops
