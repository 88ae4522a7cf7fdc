#include "ops/out_checks.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

namespace torch_tpu::ops {

void check_out_dtype(const char* op, const at::Tensor& out, at::ScalarType expected) {
  // TypeMeta names ("long int", "c10::Half"), the ones CPU's message prints.
  TORCH_CHECK(out.scalar_type() == expected, op, ": Expected out tensor to have dtype ",
              c10::scalarTypeToTypeMeta(expected), ", but got ", out.dtype(), " instead");
}

void check_out_castable(const char* op, at::ScalarType result, const at::Tensor& out) {
  TORCH_CHECK(at::canCast(result, out.scalar_type()), op, ": result type ", result,
              " can't be cast to the desired output type ", out.scalar_type());
}

void check_out_overlap(const at::Tensor& out, TensorRefs inputs) {
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& in : inputs) {
    if (in.defined() && !in.is_same(out)) at::assert_no_partial_overlap(out, in);
  }
}

void check_out_disjoint(const at::Tensor& out, TensorRefs inputs) {
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& in : inputs) {
    if (in.defined()) at::assert_no_overlap(out, in);
  }
}

void write_result(at::Tensor& out, const at::Tensor& value) {
  at::native::resize_output(out, value.sizes());
  out.copy_(value);
}
}  // namespace torch_tpu::ops
