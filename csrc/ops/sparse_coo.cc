// Sparse COO tensors on tpu: the kernels whose CPU versions walk the indices
// on the host (coalescing, conversion to dense, sums and products with
// another tensor), written with dense tpu ops on the indices and values.
// A sparse tpu tensor is PyTorch's SparseTensorImpl holding two tpu tensors,
// indices [sparse_dim, nnz] and values [nnz, dense dims...]; everything that
// only rearranges those runs PyTorch's own kernels (ops/sparse_coo_generic.cc).
//
// Each element's position is flattened to one linear index over the sparse
// dims; coalescing sorts those with unique (one host read of the count, as
// CUDA's coalesce makes) and sums duplicates with index_add. Sums of two
// sparse tensors concatenate their entries without coalescing, as CUDA does
// (no host read; gradient accumulation is the common case).
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/native/TypeProperties.h>

#include <limits>
#include <vector>

#include "ops/sparse_coo_kernels.h"

namespace torch_tpu::ops {
namespace {

std::vector<int64_t> sparse_sizes(const at::Tensor& t) {
  const auto sizes = t.sizes();
  return std::vector<int64_t>(sizes.begin(), sizes.begin() + t.sparse_dim());
}

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// The shape of `values` ([nnz, dense dims...]) with `rows` rows.
std::vector<int64_t> rows_like(const at::Tensor& values, int64_t rows) {
  std::vector<int64_t> shape = values.sizes().vec();
  shape[0] = rows;
  return shape;
}

// Each entry's row-major position over the sparse dims, [nnz].
at::Tensor linear_index(const at::Tensor& indices, const std::vector<int64_t>& sizes) {
  if (sizes.empty()) return at::zeros({indices.size(1)}, indices.options());
  at::Tensor linear = indices.select(0, 0);
  for (size_t d = 1; d < sizes.size(); ++d) {
    linear = linear * sizes[d] + indices.select(0, static_cast<int64_t>(d));
  }
  return linear;
}

// Each entry's row-major position over some of the sparse dims (`dims`,
// ascending), and those dims' sizes.
struct PartialIndex {
  at::Tensor linear;
  std::vector<int64_t> sizes;
};
PartialIndex linear_index_over(const at::Tensor& indices, at::IntArrayRef all_sizes,
                               const std::vector<int64_t>& dims) {
  PartialIndex result;
  std::vector<at::Tensor> rows;
  for (int64_t d : dims) {
    result.sizes.push_back(all_sizes[d]);
    rows.push_back(indices.select(0, d));
  }
  result.linear = rows.empty() ? at::zeros({indices.size(1)}, indices.options())
                               : linear_index(at::stack(rows), result.sizes);
  return result;
}

// The inverse of linear_index: [sparse_dim, n].
at::Tensor unflatten_index(at::Tensor linear, const std::vector<int64_t>& sizes) {
  std::vector<at::Tensor> rows(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    rows[d] = linear.remainder(sizes[d]);
    linear = linear.div(sizes[d], "floor");
  }
  if (rows.empty()) return at::empty({0, linear.size(0)}, linear.options());
  return at::stack(rows);
}

// Rows of `source` added into `target`'s rows at `index` (duplicates sum).
// Bool values add as "or", as CPU's sparse kernels add them.
at::Tensor& add_rows(at::Tensor& target, const at::Tensor& index, const at::Tensor& source,
                     const at::Scalar& alpha = 1) {
  if (target.scalar_type() != at::kBool) return target.index_add_(0, index, source, alpha);
  at::Tensor counts = at::zeros(target.sizes(), target.options().dtype(at::kLong));
  counts.index_add_(0, index, source.to(at::kLong));
  return target.logical_or_(counts.ne(0));
}

at::Tensor make_sparse(const at::Tensor& like, at::IntArrayRef sizes, const at::Tensor& indices,
                       const at::Tensor& values, bool coalesced) {
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      like.sparse_dim(), like.dense_dim(), sizes, indices, values,
      values.options().layout(at::kSparse), coalesced);
}

// Makes the sparse `out` hold (indices, values) of the given sizes.
at::Tensor& set_sparse(at::Tensor& out, const at::Tensor& like, at::IntArrayRef sizes,
                       const at::Tensor& indices, const at::Tensor& values, bool coalesced) {
  out.sparse_resize_(sizes, like.sparse_dim(), like.dense_dim());
  at::sparse::alias_into_sparse(out, indices, values);
  out._coalesced_(coalesced);
  return out;
}

void check_castable(const at::Tensor& self, const at::Tensor& other, const at::Tensor& out,
                    const char* op) {
  const at::ScalarType type = at::result_type(self, other);
  TORCH_CHECK(at::canCast(type, out.scalar_type()), op, ": result type ", type,
              " can't be cast to the desired output type ", out.scalar_type());
}

// `dense` at the sparse entries of `like` ([nnz, dense dims...]).
at::Tensor gather_at(const at::Tensor& dense, const at::Tensor& like, const char* op) {
  const std::vector<int64_t> shape = at::infer_size(dense.sizes(), like.sizes());
  TORCH_CHECK_NOT_IMPLEMENTED(at::IntArrayRef(shape) == like.sizes(), op,
                              ": a dense operand of shape ", dense.sizes(),
                              " broadcasts a sparse one of shape ", like.sizes(),
                              " to a larger shape, which tpu does not support");
  const std::vector<int64_t> sparse = sparse_sizes(like);
  return dense.expand(like.sizes())
      .reshape(rows_like(like._values(), product(sparse)))
      .index_select(0, linear_index(like._indices(), sparse));
}

// Where each of `wanted` sits among `sorted` (ascending, no repeats, not
// empty): its slot there and whether it is there.
struct Lookup {
  at::Tensor slot, found;
};
Lookup lookup(const at::Tensor& sorted, const at::Tensor& wanted) {
  const at::Tensor slot = at::searchsorted(sorted, wanted).clamp_max(sorted.size(0) - 1);
  return {slot, sorted.index_select(0, slot).eq(wanted)};
}

// `rows` [n, ...] with the rows where `keep` [n] is false set to 0.
at::Tensor rows_where(const at::Tensor& keep, const at::Tensor& rows) {
  std::vector<int64_t> keep_shape(static_cast<size_t>(rows.dim()), 1);
  keep_shape[0] = keep.size(0);
  return at::where(keep.view(keep_shape), rows, at::zeros({}, rows.options()));
}

// A coalesced sparse tensor's values at `wanted` (linear positions over
// `sizes`, some of its sparse dims), 0 where it has no entry: [n, dense...].
at::Tensor values_at(const at::Tensor& source, const std::vector<int64_t>& sizes,
                     const at::Tensor& wanted) {
  const at::Tensor values = source._values();
  if (source._nnz() == 0 || wanted.size(0) == 0) {
    return at::zeros(rows_like(values, wanted.size(0)), values.options());
  }
  const Lookup in_source = lookup(linear_index(source._indices(), sizes), wanted);
  return rows_where(in_source.found, values.index_select(0, in_source.slot));
}

// Every pair (query, position) with sorted[position] == queries[query]
// (`sorted` ascending, repeats allowed): each query's matches are one run
// of `sorted`, found by two searchsorted; the number of pairs is read on
// the host (repeat_interleave's one read).
struct Matches {
  at::Tensor query, position;
};
Matches matching_runs(const at::Tensor& sorted, const at::Tensor& queries) {
  const at::Tensor first = at::searchsorted(sorted, queries);
  const at::Tensor copies = at::searchsorted(sorted, queries, false, /*right=*/true) - first;
  const at::Tensor query = at::repeat_interleave(copies);
  const at::Tensor run_start = copies.cumsum(0) - copies;
  const at::Tensor within =
      at::arange(query.size(0), query.options()) - run_start.index_select(0, query);
  return {query, first.index_select(0, query) + within};
}

}  // namespace

at::Tensor sparse_coalesce(const at::Tensor& self) {
  const at::Tensor indices = self._indices(), values = self._values();
  if (self._nnz() < 2)
    return make_sparse(self, self.sizes(), indices.clone(), values.clone(), true);
  const std::vector<int64_t> sparse = sparse_sizes(self);
  auto [unique, inverse, counts] =
      at::_unique2(linear_index(indices, sparse), /*sorted=*/true, /*return_inverse=*/true,
                   /*return_counts=*/false);
  (void)counts;
  at::Tensor summed = at::zeros(rows_like(values, unique.size(0)), values.options());
  add_rows(summed, inverse, values);
  return make_sparse(self, self.sizes(), unflatten_index(unique, sparse), summed, true);
}

at::Tensor sparse_to_dense(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                           std::optional<bool> masked_grad) {
  (void)masked_grad;  // (it only chooses the gradient's formula)
  TORCH_CHECK(!dtype.has_value(), "dtype argument is not supported by sparse_to_dense");
  const at::Tensor values = self._values();
  at::Tensor dense = at::zeros(self.sizes(), values.options().layout(at::kStrided));
  if (self._nnz() == 0 || dense.numel() == 0) return dense;
  const std::vector<int64_t> sparse = sparse_sizes(self);
  at::Tensor rows = dense.view(rows_like(values, product(sparse)));
  add_rows(rows, linear_index(self._indices(), sparse), values);
  return dense;
}

at::Tensor& sparse_add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                           at::Tensor& out) {
  check_castable(self, other, out, "add");
  TORCH_CHECK(other.is_sparse(),
              "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  if (!self.is_sparse()) {
    // dense + alpha * sparse: a dense result, the sparse entries added in place.
    TORCH_CHECK(self.sizes() == other.sizes(),
                "add: expected 'self' and 'other' to have same size, "
                "but self has size ",
                self.sizes(), " while other has size ", other.sizes(),
                " (FYI: dense-sparse addition does not currently support broadcasting)");
    TORCH_CHECK(!out.is_sparse(), "add: the result of dense + sparse is dense, got a sparse out=");
    if (!out.is_same(self)) {
      at::native::resize_output(out, self.sizes());
      out.copy_(self);
    }
    if (other._nnz() == 0 || out.numel() == 0) return out;
    const std::vector<int64_t> sparse = sparse_sizes(other);
    // (rows of a strided `out` are added in a contiguous copy, then copied back)
    at::Tensor target = out.is_contiguous() ? out : out.contiguous();
    at::Tensor rows = target.view(rows_like(other._values(), product(sparse)));
    add_rows(rows, linear_index(other._indices(), sparse), other._values().to(out.scalar_type()),
             alpha);
    if (!target.is_same(out)) out.copy_(target);
    return out;
  }
  TORCH_CHECK(self.sizes() == other.sizes(),
              "add: expected sizes of 'self' and 'other' to match, but ", self.sizes(),
              " != ", other.sizes());
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim() && self.dense_dim() == other.dense_dim(),
              "add: expected 'self' and 'other' to have same sparse and dense dimensions, but got ",
              self.sparse_dim(), ", ", self.dense_dim(), " and ", other.sparse_dim(), ", ",
              other.dense_dim());
  TORCH_CHECK(out.is_sparse(), "add: the result of sparse + sparse is sparse, got a dense out=");
  const at::ScalarType out_type = out.scalar_type();
  at::Tensor values = at::cat({self._values().to(out_type), other._values().to(out_type) * alpha});
  at::Tensor indices = at::cat({self._indices(), other._indices()}, 1);
  return set_sparse(out, self, self.sizes(), indices, values, false);
}

at::Tensor sparse_add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const at::ScalarType type = at::result_type(self, other);
  at::Tensor out = self.is_sparse() ? at::empty({0}, self.options().dtype(type).layout(at::kSparse))
                                    : at::empty(self.sizes(), self.options().dtype(type));
  return sparse_add_out(self, other, alpha, out);
}

at::Tensor& sparse_add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return sparse_add_out(self, other, alpha, self);
}

at::Tensor& sparse_mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  const char* op = "mul";
  check_castable(self, other, out, op);
  TORCH_CHECK(out.is_sparse(), op,
              ": the product with a sparse tensor is sparse, got a dense out=");
  const at::ScalarType type = out.scalar_type();
  if (self.is_sparse() != other.is_sparse()) {
    // A dense factor: a 0-dim one is a scalar; any other broadcasts to the
    // sparse shape and is taken at the sparse entries.
    const at::Tensor& sparse = self.is_sparse() ? self : other;
    const at::Tensor& dense = self.is_sparse() ? other : self;
    const at::Tensor factor = dense.dim() == 0 ? dense : gather_at(dense, sparse, op);
    at::Tensor values = sparse._values().to(type) * factor.to(type);
    return set_sparse(out, sparse, sparse.sizes(), sparse._indices().clone(), values,
                      sparse.is_coalesced());
  }
  // Two sparse tensors: the entries both have, after coalescing both.
  TORCH_CHECK(self.sizes() == other.sizes() && self.sparse_dim() == other.sparse_dim(), op,
              "(): expects sparse inputs with equal dimensionality, number of sparse dimensions, "
              "and shape of sparse dimensions");
  const at::Tensor a = self.coalesce(), b = other.coalesce();
  const std::vector<int64_t> sparse = sparse_sizes(a);
  const at::Tensor a_index = linear_index(a._indices(), sparse);
  const at::Tensor b_index = linear_index(b._indices(), sparse);
  at::Tensor values, indices;
  if (a._nnz() == 0 || b._nnz() == 0) {
    indices = a._indices().narrow(1, 0, 0);
    values = a._values().narrow(0, 0, 0).to(type);
  } else {
    const Lookup in_b = lookup(b_index, a_index);
    const at::Tensor kept = in_b.found.nonzero().squeeze(1);
    indices = a._indices().index_select(1, kept);
    values = a._values().index_select(0, kept).to(type) *
             b._values().index_select(0, in_b.slot.index_select(0, kept)).to(type);
  }
  return set_sparse(out, a, a.sizes(), indices, values, true);
}

at::Tensor sparse_mul(const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor& sparse = self.is_sparse() ? self : other;
  at::Tensor out =
      at::empty({0}, sparse.options().dtype(at::result_type(self, other)).layout(at::kSparse));
  return sparse_mul_out(self, other, out);
}

at::Tensor& sparse_mul_(at::Tensor& self, const at::Tensor& other) {
  return sparse_mul_out(self, other, self);
}

at::Tensor addmm_combine(const at::Tensor& self, const at::Tensor& product, const at::Scalar& beta,
                         const at::Scalar& alpha) {
  // beta == 0 ignores self, NaN included, as a dense addmm does.
  if (beta.toComplexDouble() == 0.0) return product * alpha;
  return at::add(self.expand(product.sizes()) * beta, product, alpha);
}

at::Tensor& sparse_addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  const char* op = "addmm";
  TORCH_CHECK_NOT_IMPLEMENTED(mat1.is_sparse() && !mat2.is_sparse() && !self.is_sparse(), op,
                              ": tpu multiplies a sparse matrix by a dense one (sparse @ dense, "
                              "dense @ sparse); got self ",
                              self.layout(), ", mat1 ", mat1.layout(), ", mat2 ", mat2.layout());
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, op, ": matrices expected, got ", mat1.dim(),
              "D, ", mat2.dim(), "D tensors");
  TORCH_CHECK(mat1.sparse_dim() == 2, op, ": expected first two dims to be sparse (indices has ",
              "size 2 at first dim), but got ", mat1.sparse_dim(), " sparse dims");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), op, ": Argument #3 (dense): Expected dim 0 size ",
              mat1.size(1), ", got ", mat2.size(0));
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type() && self.scalar_type() == mat2.scalar_type(),
              op, ": expected self, mat1 and mat2 to have the same dtype, but got ",
              self.scalar_type(), ", ", mat1.scalar_type(), " and ", mat2.scalar_type());
  const int64_t n = mat1.size(0), p = mat2.size(1);
  at::Tensor product = at::zeros({n, p}, mat2.options());
  if (mat1._nnz() > 0 && p > 0) {
    const at::Tensor indices = mat1._indices();
    const at::Tensor rows =
        mat2.index_select(0, indices.select(0, 1)) * mat1._values().unsqueeze(1);
    product.index_add_(0, indices.select(0, 0), rows);
  }
  const at::Tensor result = addmm_combine(self, product, beta, alpha);
  if (!out.is_same(self)) at::native::resize_output(out, {n, p});
  return out.copy_(result);
}

at::Tensor sparse_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor out = at::empty({0}, mat2.options());
  return sparse_addmm_out(self, mat1, mat2, beta, alpha, out);
}

at::Tensor& sparse_addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha) {
  return sparse_addmm_out(self, mat1, mat2, beta, alpha, self);
}

at::Tensor& sparse_mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  if (self.is_sparse() && mat2.is_sparse()) {
    TORCH_CHECK(out.is_sparse(),
                "mm: the product of two sparse matrices is sparse, got a dense out=");
    const at::Tensor product = sparse_sparse_matmul(self, mat2);
    return set_sparse(out, product, product.sizes(), product._indices(), product._values(), true);
  }
  if (!self.is_sparse() && mat2.is_sparse()) {
    // dense @ sparse = (sparse^T @ dense^T)^T
    at::native::resize_output(out, {self.size(0), mat2.size(1)});
    return out.copy_(sparse_mm(mat2.t(), self.t()).t());
  }
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "mm: matrices expected, got ", self.dim(), "D, ",
              mat2.dim(), "D tensors");
  const at::Tensor zeros = at::zeros({self.size(0), mat2.size(1)}, mat2.options());
  return sparse_addmm_out(zeros, self, mat2, 0, 1, out);
}

at::Tensor sparse_mm(const at::Tensor& self, const at::Tensor& mat2) {
  if (self.is_sparse() && mat2.is_sparse()) return sparse_sparse_matmul(self, mat2);
  const at::Tensor& dense = self.is_sparse() ? mat2 : self;
  at::Tensor out = at::empty({0}, dense.options());
  return sparse_mm_out(self, mat2, out);
}

at::Tensor sparse_mask(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.is_sparse(), "sparse_mask(): expected mask to be a sparse COO tensor");
  TORCH_CHECK(self.sizes() == mask.sizes(),
              "sparse_mask(): operands have incompatible sizes; self ", "has size ", self.sizes(),
              " but mask has size ", mask.sizes());
  TORCH_CHECK(!self.is_sparse() || self.sparse_dim() == mask.sparse_dim(),
              "sparse_mask(): the number of sparse dimensions in `self` should match that of the "
              "`mask`. Got `self.sparse_dim() == ",
              self.sparse_dim(), "` != `mask.sparse_dim() == ", mask.sparse_dim(), "`.");
  at::Tensor values;
  if (mask._nnz() == 0) {
    values = at::empty(mask._values().sizes(), self.options().layout(at::kStrided));
  } else if (!self.is_sparse()) {
    values = gather_at(self, mask, "sparse_mask");
  } else {
    // self's value at each of mask's entries (0 where self has none): each
    // mask entry looks its position up among self's sorted positions.
    const at::Tensor source = self.coalesce();
    const std::vector<int64_t> sparse = sparse_sizes(mask);
    values = values_at(source, sparse, linear_index(mask._indices(), sparse));
  }
  return make_sparse(mask, mask.sizes(), mask._indices().clone(), values, mask.is_coalesced());
}

at::Tensor sparse_mask_projection(const at::Tensor& self, const at::Tensor& mask,
                                  bool accumulate_matches) {
  // self's entries, each kept where mask has its coordinate and 0 elsewhere
  // (CPU's result keeps self's indices; accumulate_matches only matters for
  // a mask with repeated coordinates, which coalescing it makes moot).
  (void)accumulate_matches;
  TORCH_CHECK(self.is_sparse() && mask.is_sparse() && self.sizes() == mask.sizes() &&
                  self.sparse_dim() == mask.sparse_dim(),
              "_sparse_mask_projection(): expected sparse self and mask of the same shape and "
              "sparse dims, got ",
              self.sizes(), " and ", mask.sizes());
  const at::Tensor values = self._values();
  const at::Tensor pattern = mask.coalesce();
  at::Tensor kept;
  if (self._nnz() == 0 || pattern._nnz() == 0) {
    kept = at::zeros_like(values);
  } else {
    const std::vector<int64_t> sparse = sparse_sizes(self);
    const Lookup in_mask =
        lookup(linear_index(pattern._indices(), sparse), linear_index(self._indices(), sparse));
    kept = rows_where(in_mask.found, values);
  }
  return make_sparse(self, self.sizes(), self._indices().clone(), kept, self.is_coalesced());
}

at::Tensor sparse_index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  const char* op = "index_select";
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() <= 1 && !index.is_sparse() &&
                        (index.scalar_type() == at::kLong || index.scalar_type() == at::kInt),
                    op, "() argument index must be 1-D strided (non-sparse) long-tensor.");
  const int64_t size = self.size(dim);
  at::Tensor wanted = index.reshape({-1}).to(self._indices().options());
  bool increasing = true;  // (a coalesced input then gives a coalesced result)
  if (wanted.numel() > 0) {
    // CPU checks the indices on the host too: one read of their range and
    // whether they increase.
    const at::Tensor steps =
        wanted.narrow(0, 1, wanted.numel() - 1) - wanted.narrow(0, 0, wanted.numel() - 1);
    const at::Tensor facts =
        at::stack({wanted.min(), wanted.max(),
                   steps.numel() == 0 ? wanted.new_ones({}) : steps.gt(0).all().to(at::kLong)})
            .cpu();
    const int64_t low = facts[0].item<int64_t>(), high = facts[1].item<int64_t>();
    increasing = facts[2].item<int64_t>() != 0 && low >= 0;
    const int64_t bad = low < -size ? low : high;
    TORCH_CHECK_INDEX(low >= -size && high < size, op, "(): index contains ", bad,
                      " that is out of range for tensor of size ", self.sizes(), " at dimension ",
                      dim);
    wanted = at::where(wanted.lt(0), wanted + size, wanted);
  }
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[dim] = wanted.numel();
  const at::Tensor indices = self._indices(), values = self._values();
  if (dim >= self.sparse_dim()) {
    return make_sparse(self, sizes, indices.clone(),
                       values.index_select(dim - self.sparse_dim() + 1, wanted),
                       self.is_coalesced());
  }
  // Each entry repeats once per position of `index` holding its coordinate.
  auto [sorted, order] = wanted.sort();
  const Matches matches = matching_runs(sorted, indices.select(0, dim));
  const at::Tensor& entry = matches.query;
  const at::Tensor position = order.index_select(0, matches.position);
  at::Tensor new_indices = indices.index_select(1, entry);
  new_indices.select(0, dim).copy_(position);
  const bool coalesced = entry.size(0) == 0 || (self.is_coalesced() && increasing);
  return make_sparse(self, sizes, new_indices, values.index_select(0, entry), coalesced);
}

at::Tensor sparse_sparse_matmul(const at::Tensor& self, const at::Tensor& other) {
  const char* op = "sparse_sparse_matmul";
  TORCH_CHECK(
      self.dim() == 2 && other.dim() == 2 && self.sparse_dim() == 2 && other.sparse_dim() == 2, op,
      ": expected 2-D sparse matrices with two sparse dims, got ", self.sizes(), " and ",
      other.sizes());
  TORCH_CHECK(self.size(1) == other.size(0), op, ": mat1 and mat2 shapes cannot be multiplied (",
              self.size(0), "x", self.size(1), " and ", other.size(0), "x", other.size(1), ")");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), op, ": mat1 dtype ", self.scalar_type(),
              " does not match mat2 dtype ", other.scalar_type());
  // Each entry (i, k) of self meets the entries (k, j) of other: other's
  // entries sorted by row make those one run each.
  const at::Tensor a = self._indices(), b = other._indices();
  auto [rows, order] = b.select(0, 0).sort(/*stable=*/std::optional<bool>(true), 0);
  const Matches matches = matching_runs(rows, a.select(0, 1));
  const at::Tensor b_entry = order.index_select(0, matches.position);
  const at::Tensor indices = at::stack(
      {a.select(0, 0).index_select(0, matches.query), b.select(0, 1).index_select(0, b_entry)});
  const at::Tensor values =
      self._values().index_select(0, matches.query) * other._values().index_select(0, b_entry);
  // (the products of one output entry are summed by coalescing, as CPU's
  // result is coalesced)
  return make_sparse(self, {self.size(0), other.size(1)}, indices, values, false).coalesce();
}

at::Tensor& sparse_bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  const char* op = "bmm_sparse";
  TORCH_CHECK(self.dim() == 3 && self.sparse_dim() == 3, op,
              ": Tensor 'self' must be 3-D with three sparse dims, got sizes ", self.sizes());
  TORCH_CHECK(!mat2.is_sparse() && mat2.dim() == 3, op, ": Tensor 'mat2' must be a dense 3-D ",
              "tensor, got sizes ", mat2.sizes());
  TORCH_CHECK(self.size(0) == mat2.size(0), op, ": 'self.size(0)' and 'mat2.size(0)' must match");
  TORCH_CHECK(self.size(2) == mat2.size(1), op, ": Matrices sizes do not match: self ",
              self.sizes(), ", mat2 ", mat2.sizes());
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), op, ": self dtype ", self.scalar_type(),
              " does not match mat2 dtype ", mat2.scalar_type());
  const int64_t batch = self.size(0), n = self.size(1), m = self.size(2), p = mat2.size(2);
  at::Tensor product = at::zeros({batch * n, p}, mat2.options());
  if (self._nnz() > 0 && p > 0) {
    // Entry (b, i, k, v) adds v * mat2[b, k] to row (b, i).
    const at::Tensor indices = self._indices();
    const at::Tensor source = indices.select(0, 0) * m + indices.select(0, 2);
    const at::Tensor target = indices.select(0, 0) * n + indices.select(0, 1);
    product.index_add_(
        0, target,
        mat2.reshape({batch * m, p}).index_select(0, source) * self._values().unsqueeze(1));
  }
  at::native::resize_output(out, {batch, n, p});
  return out.copy_(product.view({batch, n, p}));
}

at::Tensor sparse_bmm(const at::Tensor& self, const at::Tensor& mat2) {
  at::Tensor out = at::empty({0}, mat2.options());
  return sparse_bmm_out(self, mat2, out);
}

at::Tensor sparse_sum_backward(const at::Tensor& grad, const at::Tensor& input_,
                               at::IntArrayRef dims) {
  const char* op = "_sparse_sum_backward";
  TORCH_CHECK(input_.is_sparse(), op, ": expected a sparse input");
  // The gradient is over the coalesced input's entries, as CPU's: the
  // constructor's backward then gives each of duplicate entries the value.
  const at::Tensor self = input_.coalesce();
  const int64_t sparse_dims = self.sparse_dim();
  std::vector<bool> summed(static_cast<size_t>(self.dim()), false);
  for (int64_t d : dims) summed[c10::maybe_wrap_dim(d, self.dim())] = true;
  std::vector<int64_t> kept_sparse;
  for (int64_t d = 0; d < sparse_dims; ++d) {
    if (!summed[d]) kept_sparse.push_back(d);
  }
  const at::Tensor values = self._values();
  // The gradient's value for each entry, over the dense dims it kept.
  at::Tensor per_entry;
  if (kept_sparse.empty()) {
    // Every sparse dim summed: the gradient is dense, the same for all entries.
    TORCH_CHECK(!grad.is_sparse(), op,
                ": expected a dense gradient when every sparse dim is summed");
    std::vector<int64_t> shape = grad.sizes().vec();
    shape.insert(shape.begin(), self._nnz());
    per_entry = grad.unsqueeze(0).expand(shape);
  } else {
    TORCH_CHECK(grad.is_sparse(), op, ": expected a sparse gradient when sparse dims are kept");
    const PartialIndex kept = linear_index_over(self._indices(), self.sizes(), kept_sparse);
    per_entry = values_at(grad.coalesce(), kept.sizes, kept.linear);
  }
  // Dense dims that were summed come back as broadcasts.
  for (int64_t d = sparse_dims; d < self.dim(); ++d) {
    if (summed[d]) per_entry = per_entry.unsqueeze(d - sparse_dims + 1);
  }
  at::Tensor result_values = per_entry.expand(values.sizes()).to(values.scalar_type()).clone();
  return make_sparse(self, self.sizes(), self._indices(), result_values, true);
}

namespace {

// For softmax over a sparse dim: each entry's group, the entries that share
// every other sparse coordinate ([nnz], ids 0..groups-1; one host read).
at::Tensor softmax_groups(const at::Tensor& indices, const std::vector<int64_t>& sparse,
                          int64_t dim, int64_t* groups) {
  std::vector<int64_t> others;
  for (int64_t d = 0; d < static_cast<int64_t>(sparse.size()); ++d) {
    if (d != dim) others.push_back(d);
  }
  if (others.empty()) {
    *groups = 1;
    return at::zeros({indices.size(1)}, indices.options());
  }
  auto [unique, inverse, counts] =
      at::_unique2(linear_index_over(indices, sparse, others).linear, false, true, false);
  (void)counts;
  *groups = unique.size(0);
  return inverse;
}

at::Tensor sparse_softmax_common(const at::Tensor& self, int64_t dim, bool half_to_float,
                                 bool log) {
  const char* op = log ? "_sparse_log_softmax" : "_sparse_softmax";
  TORCH_CHECK(!half_to_float, op,
              ": softmax with half to float conversion is not supported on tpu");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const at::Tensor input = self.coalesce();
  const at::Tensor values = input._values();
  at::Tensor result;
  if (input._nnz() == 0) {
    result = values.clone();
  } else if (dim >= input.sparse_dim()) {
    const int64_t value_dim = dim - input.sparse_dim() + 1;
    result =
        log ? at::_log_softmax(values, value_dim, false) : at::_softmax(values, value_dim, false);
  } else {
    // Over a sparse dim, the unspecified entries are left out (as if -inf).
    int64_t groups = 0;
    const at::Tensor group = softmax_groups(input._indices(), sparse_sizes(input), dim, &groups);
    const at::Tensor largest = at::full(rows_like(values, groups),
                                        -std::numeric_limits<double>::infinity(), values.options())
                                   .index_reduce_(0, group, values, "amax");
    const at::Tensor shifted = values - largest.index_select(0, group);
    const at::Tensor exponent = shifted.exp();
    const at::Tensor total =
        at::zeros(rows_like(values, groups), values.options()).index_add_(0, group, exponent);
    result = log ? shifted - total.log().index_select(0, group)
                 : exponent / total.index_select(0, group);
  }
  return make_sparse(input, input.sizes(), input._indices(), result, true);
}

at::Tensor sparse_softmax_backward_common(const at::Tensor& grad, const at::Tensor& output,
                                          int64_t dim, bool log) {
  dim = c10::maybe_wrap_dim(dim, output.dim());
  const at::Tensor y = output._values();
  if (output._nnz() == 0)
    return make_sparse(output, output.sizes(), output._indices(), y.clone(), true);
  // The gradient at the output's entries (a sparse gradient may have others).
  const at::Tensor g = grad.is_sparse() ? sparse_mask(grad, output)._values()
                                        : gather_at(grad, output, "softmax_backward");
  at::Tensor result;
  if (dim >= output.sparse_dim()) {
    const int64_t value_dim = dim - output.sparse_dim() + 1;
    result = log ? at::_log_softmax_backward_data(g, y, value_dim, y.scalar_type())
                 : at::_softmax_backward_data(g, y, value_dim, y.scalar_type());
  } else {
    int64_t groups = 0;
    const at::Tensor group = softmax_groups(output._indices(), sparse_sizes(output), dim, &groups);
    const at::Tensor weighted = log ? g : g * y;
    const at::Tensor total =
        at::zeros(rows_like(y, groups), y.options()).index_add_(0, group, weighted);
    const at::Tensor spread = total.index_select(0, group);
    result = log ? g - y.exp() * spread : y * (g - spread);
  }
  return make_sparse(output, output.sizes(), output._indices(), result, output.is_coalesced());
}

}  // namespace

at::Tensor sparse_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return sparse_softmax_common(self, dim, half_to_float, false);
}
at::Tensor sparse_log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return sparse_softmax_common(self, dim, half_to_float, true);
}
at::Tensor sparse_softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                   const at::Tensor& /*self*/) {
  return sparse_softmax_backward_common(grad, output, dim, false);
}
at::Tensor sparse_log_softmax_backward(const at::Tensor& grad, const at::Tensor& output,
                                       int64_t dim, const at::Tensor& /*self*/) {
  return sparse_softmax_backward_common(grad, output, dim, true);
}

}  // namespace torch_tpu::ops
