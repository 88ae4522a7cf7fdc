// Reading and writing a strided view of a flat buffer, in StableHLO.
//
// A device storage is one flat (rank-1) PJRT buffer. A tensor is a view of it
// (element type, sizes, strides, offset). Reads lower to slice / reshape /
// transpose / broadcast where the strides allow, and to a gather otherwise;
// writes produce a new flat buffer through dynamic_update_slice or scatter.
// This is what keeps views and in-place mutation exact with immutable buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

struct StridedView {
  ElementType element;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements of `element`
  int64_t offset = 0;            // in elements of `element`

  int64_t numel() const;
  bool is_contiguous() const;
  // Elements from the first to one past the last the view reaches (0 when
  // empty): the part of the storage a view at any offset depends on.
  int64_t span() const;
};

// StridedView::span() of a view given as `rank` sizes and strides (for
// callers that keep them in their own containers).
int64_t view_span(const int64_t* sizes, const int64_t* strides, size_t rank);

// `base` is the flat storage buffer (any element type; reinterpreted as
// view.element when the types differ). Returns a value of shape view.sizes.
Value read_view(Builder& b, Value base, const StridedView& view);

// Returns a new flat storage buffer equal to `base` with `value` (shape
// view.sizes, element view.element) written through the view. The result's
// element type is written_storage_element(base's, view.element).
Value write_view(Builder& b, Value base, const StridedView& view, Value value);

// The same with the view's offset a runtime s64 scalar `offset` (in
// view.element units; view.offset is ignored): one program serves the view
// at every position, `x[i]` for every i. The caller guarantees that
// offset + view.span() fits the storage, as every PyTorch view does.
Value read_view_at(Builder& b, Value base, const StridedView& view, Value offset);
Value write_view_at(Builder& b, Value base, const StridedView& view, Value value, Value offset);

// The element type a storage holds after a write through a view of `view`
// elements into a storage of `storage` elements: the storage's own, except
// that a bool storage written through a non-bool view keeps the view's
// bytes (bool holds only 0/1: `b.view(torch.uint8).add_(5)` must leave 5s,
// as on CPU).
ElementType written_storage_element(ElementType storage, ElementType view);

// The elements of `value` (shape view.sizes) in storage order, for a view
// that is a permutation of a contiguous layout at offset 0 (non-overlapping
// and dense): a transpose and a reshape, where a general write scatters.
Value dense_to_flat(Builder& b, Value value, const StridedView& view);

// Reinterprets a flat buffer as a flat buffer of another element type (same
// total bytes; the byte count must divide evenly).
Value bitcast_flat(Builder& b, Value flat, ElementType to);

}  // namespace torch_tpu::hlo
