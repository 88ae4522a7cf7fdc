#include "ops/result_layout.h"

#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

#include "ops/device_empty.h"

namespace torch_tpu::ops {
namespace {

// Exactly the strides at::empty gives these sizes. A tensor can be
// is_contiguous() with other strides on its size-1 dims, and TensorIterator
// orders dims by those strides too.
bool has_default_strides(const at::Tensor& t) {
  if (!t.is_contiguous()) return false;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (strides[i] != expected) return false;
    expected *= std::max<int64_t>(sizes[i], 1);
  }
  return true;
}

bool all_default(c10::ArrayRef<const at::Tensor*> inputs) {
  for (const at::Tensor* t : inputs) {
    if (!has_default_strides(*t)) return false;
  }
  return true;
}

}  // namespace

std::vector<int64_t> result_strides(at::IntArrayRef shape,
                                    c10::ArrayRef<const at::Tensor*> inputs) {
  // TensorIterator itself decides, over meta tensors with the inputs' sizes
  // and strides: its dimension ordering (ambiguous broadcast dims, size-1
  // dims, ties) is subtle, and this reproduces it by construction.
  const auto meta = at::TensorOptions().device(at::kMeta).dtype(at::kFloat);
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false)
      .check_all_same_dtype(false)
      .declare_static_dtype_and_device(at::kFloat, at::kMeta)
      .add_owned_output(at::Tensor());
  for (const at::Tensor* t : inputs) {
    config.add_owned_const_input(at::empty_strided(t->sizes(), t->strides(), meta));
  }
  at::TensorIterator iter = config.build();
  const at::Tensor& out = iter.output(0);
  TORCH_INTERNAL_ASSERT(out.sizes() == shape, "result layout: TensorIterator's shape ", out.sizes(),
                        " is not the broadcast shape ", shape);
  return out.strides().vec();
}

at::Tensor empty_result(at::IntArrayRef shape, const at::TensorOptions& options,
                        c10::ArrayRef<const at::Tensor*> inputs) {
  if (all_default(inputs)) return device_empty(shape, options);
  return at::empty_strided(shape, result_strides(shape, inputs), options);
}

void resize_out(const at::Tensor& out, at::IntArrayRef shape,
                c10::ArrayRef<const at::Tensor*> inputs) {
  const bool resized = at::native::resize_output(out, shape);
  if (resized && !all_default(inputs)) out.as_strided_(shape, result_strides(shape, inputs));
}

}  // namespace torch_tpu::ops
