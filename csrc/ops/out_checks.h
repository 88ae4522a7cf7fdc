// The checks CPU makes on a destination before an op writes it (an out=
// tensor, or self of an in-place op): the dtype rules of structured kernels
// and TensorIterator, and TensorIterator's memory-overlap rules. Kept in one
// place so that every kernel refuses what CPU refuses, with CPU's words.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <functional>

namespace torch_tpu::ops {

// A braced list {a, b} or any array of tensor references.
using TensorRefs = c10::ArrayRef<std::reference_wrapper<const at::Tensor>>;

// An out= whose dtype the op fixes (a structured kernel's output):
// "Expected out tensor to have dtype float, but got long int instead".
void check_out_dtype(const char* op, const at::Tensor& out, at::ScalarType expected);

// TensorIterator's rule for out= and in-place results: the computed type must
// cast safely to the destination's ("result type Float can't be cast to the
// desired output type Long").
void check_out_castable(const char* op, at::ScalarType result, const at::Tensor& out);

// TensorIterator's overlap rules for a destination written from `inputs`: no
// two of its elements share memory, and it is either exactly one of the
// inputs (in place) or shares no memory with it. Checked before any resize,
// as TensorIterator checks them.
void check_out_overlap(const at::Tensor& out, TensorRefs inputs);

// Writes a composite op's result into its out= destination: resized as
// CPU's resize_output does (with its warning for a non-empty one of another
// shape), then copied.
void write_result(at::Tensor& out, const at::Tensor& value);

// The stricter rule of gather-like kernels (index_select, gather, sort's
// values): the destination shares no memory with an input at all.
void check_out_disjoint(const at::Tensor& out, TensorRefs inputs);

}  // namespace torch_tpu::ops
