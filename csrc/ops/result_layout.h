// The strides PyTorch gives the result of an elementwise op: TensorIterator
// lays a new result out like its inputs (a transposed input gives a
// transposed result, channels_last stays channels_last), so .view() and
// .stride() behave as on the CPU.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

namespace torch_tpu::ops {

// The strides TensorIterator computes for a new output of `shape` from
// `inputs` (tensors broadcastable to `shape`; scalars left out).
std::vector<int64_t> result_strides(at::IntArrayRef shape, c10::ArrayRef<const at::Tensor*> inputs);

// A new tensor of `shape` laid out as TensorIterator lays out the result of
// `inputs`. When every input has plain contiguous strides (the common case)
// that is a contiguous tensor, and nothing else is computed.
at::Tensor empty_result(at::IntArrayRef shape, const at::TensorOptions& options,
                        c10::ArrayRef<const at::Tensor*> inputs);

// out= resizing as structured kernels do it: an `out` of another shape is
// resized and takes the layout a new result would have; an `out` of the
// right shape keeps its own strides.
void resize_out(const at::Tensor& out, at::IntArrayRef shape,
                c10::ArrayRef<const at::Tensor*> inputs);

}  // namespace torch_tpu::ops
