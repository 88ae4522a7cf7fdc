// Sparse CSR tensors on tpu. A CSR tensor is PyTorch's SparseCsrTensorImpl
// over tpu crow_indices, col_indices and values. The two index conversions
// are searchsorted on the device, with no host read; the CSR product goes
// through the coordinate (COO) form, whose kernels are tpu kernels
// (ops/sparse_coo.cc); accessors, copies and conversions run PyTorch's own
// kernels over the tpu tensors.
#include <ATen/ATen.h>
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <vector>

#include "ops/cpu_kernel_reuse.h"
#include "ops/sparse_compressed_kernels.h"
#include "ops/sparse_coo_kernels.h"

namespace torch_tpu::ops {
namespace {

// PyTorch's SparseCsrCPU kernels for the operators below only use ATen ops
// on the member tensors (checked in its source), so they run on tpu ones.
constexpr const char* kGenericCsrKernels[] = {
    "_nnz",
    "crow_indices",
    "col_indices",
    "ccol_indices",
    "row_indices",
    "values",
    "sparse_dim",
    "dense_dim",
    "_to_dense",
    "_to_sparse",
    "_to_sparse.sparse_dim",
    "clone",
    "copy_",
    "empty.memory_format",
    "empty_like",
    "resize_as_sparse_",
    "mul.Tensor",
    "mul.Scalar",
    "mul_.Scalar",
    "mm",
    "mm.out",
    "addmm",
    // Unary functions with f(0) = 0, applied to the values.
    "abs",
    "abs.out",
    "abs_",
    "neg",
    "neg.out",
    "neg_",
    "sqrt",
    "sqrt.out",
    "sqrt_",
    "sin",
    "sin.out",
    "sin_",
    "tanh",
    "tanh.out",
    "tanh_",
    "relu",
    "relu_",
    "sgn",
    "sgn.out",
    "sgn_",
};

// A dense tensor or a COO tensor to CSR: the CPU kernels (nonzero and the
// index conversion; coalesce and the conversion) dispatch on the tensors.
constexpr const char* kGenericToCsrKernels[] = {"_to_sparse_csr"};

bool is_compressed(const at::Tensor& t) {
  const at::Layout layout = t.layout();
  return layout == at::kSparseCsr || layout == at::kSparseCsc || layout == at::kSparseBsr ||
         layout == at::kSparseBsc;
}

at::Tensor& csr_addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  // The product in the coordinate form (a tpu kernel for sparse @ dense and
  // dense @ sparse).
  TORCH_CHECK_NOT_IMPLEMENTED(
      !is_compressed(self) && !is_compressed(out) && (is_compressed(mat1) != is_compressed(mat2)),
      "addmm: tpu multiplies a compressed sparse matrix by a dense one; "
      "got self ",
      self.layout(), ", mat1 ", mat1.layout(), ", mat2 ", mat2.layout());
  const at::Tensor a = is_compressed(mat1) ? mat1.to_sparse() : mat1;
  const at::Tensor b = is_compressed(mat2) ? mat2.to_sparse() : mat2;
  const at::Tensor product = at::mm(a, b);
  const at::Tensor result = addmm_combine(self, product, beta, alpha);
  if (!out.is_same(self)) at::native::resize_output(out, product.sizes());
  return out.copy_(result);
}

at::Tensor compressed_to_sparse_csr(const at::Tensor& self, std::optional<int64_t> dense_dim) {
  // (CPU's kernel reorders a CSC tensor's entries with a CPU-only kernel;
  // through the coordinate form, coalescing orders them by row)
  if (self.layout() == at::kSparseCsr) return self.clone();
  return self.to_sparse().to_sparse_csr(dense_dim);
}

at::Tensor& csr_addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                          const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1, "addmv: expected a matrix and a vector, got ",
              mat.dim(), "-D and ", vec.dim(), "-D tensors");
  at::Tensor product = at::empty({0}, vec.options());
  csr_addmm_out(self.dim() == 1 ? self.unsqueeze(1) : self, mat, vec.unsqueeze(1), beta, alpha,
                product);
  at::native::resize_output(out, {mat.size(0)});
  return out.copy_(product.squeeze(1));
}

// A matrix's CSC form is its transpose's CSR form, transposed back (the
// same member tensors: ccol_indices = crow of the transpose).
at::Tensor to_sparse_csc(const at::Tensor& self, std::optional<int64_t> dense_dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() == 2 && dense_dim.value_or(0) == 0,
                              "to_sparse_csc: tpu converts 2-D matrices without dense dims; got ",
                              self.dim(), " dims");
  if (self.layout() == at::kSparseCsc) return self.clone();
  return self.t().to_sparse_csr().t();
}

// A COO matrix in a compressed layout (CSR or CSC).
at::Tensor coo_to_compressed(const at::Tensor& coo, at::Layout layout) {
  return layout == at::kSparseCsc ? to_sparse_csc(coo, std::nullopt) : coo.to_sparse_csr();
}

// self's values at a compressed mask's entries, in the mask's layout.
at::Tensor compressed_sparse_mask(const at::Tensor& self, const at::Tensor& mask) {
  const at::Tensor source = is_compressed(self) ? self.to_sparse() : self;
  const at::Tensor masked = source.sparse_mask(mask.to_sparse());
  return coo_to_compressed(masked, mask.layout());
}

// In the coordinate form. A compressed + compressed sum is compressed, in
// `out`'s layout (its member tensors replaced: the count of entries can
// change); dense + compressed is dense.
at::Tensor& compressed_add_out(const at::Tensor& self, const at::Tensor& other,
                               const at::Scalar& alpha, at::Tensor& out) {
  const at::Tensor a = is_compressed(self) ? self.to_sparse() : self;
  const at::Tensor b = is_compressed(other) ? other.to_sparse() : other;
  if (!is_compressed(out)) return at::add_out(out, a, b, alpha);
  TORCH_CHECK(is_compressed(self) && is_compressed(other),
              "add: a compressed sparse result needs compressed sparse operands, got ",
              self.layout(), " and ", other.layout());
  const at::Tensor sum = at::add(a, b, alpha).coalesce().to(out.scalar_type());
  const at::Tensor result = coo_to_compressed(sum, out.layout());
  const auto [compressed, plain] = at::sparse_csr::getCompressedPlainIndices(result);
  at::sparse_csr::get_sparse_csr_impl(out)->set_member_tensors(compressed, plain, result.values(),
                                                               result.sizes());
  return out;
}

at::Tensor compressed_add(const at::Tensor& self, const at::Tensor& other,
                          const at::Scalar& alpha) {
  // (a compressed result's member tensors are replaced, so its out holds
  // no copy of self's)
  const at::TensorOptions options = self.options().dtype(at::result_type(self, other));
  at::Tensor out =
      is_compressed(self) ? at::empty_like(self, options) : at::empty(self.sizes(), options);
  return compressed_add_out(self, other, alpha, out);
}

at::Tensor& compressed_add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return compressed_add_out(self, other, alpha, self);
}

}  // namespace

at::Tensor convert_indices_from_coo_to_csr(const at::Tensor& rows, int64_t size, bool out_int32) {
  TORCH_CHECK(rows.dim() <= 1, "_convert_indices_from_coo_to_csr: expected a 1-D tensor of row ",
              "indices, got ", rows.dim(), " dims");
  TORCH_CHECK(size >= 0, "_convert_indices_from_coo_to_csr: size must be non-negative, got ", size);
  // crow[i] = the number of entries in rows before i (rows are sorted).
  const at::Tensor boundaries = at::arange(size + 1, rows.options().dtype(at::kLong));
  at::Tensor crow = rows.numel() == 0
                        ? at::zeros({size + 1}, boundaries.options())
                        : at::searchsorted(rows.reshape({-1}).to(at::kLong), boundaries);
  return crow.to(out_int32 ? at::kInt : at::kLong);
}

at::Tensor& convert_indices_from_coo_to_csr_out(const at::Tensor& rows, int64_t size,
                                                bool out_int32, at::Tensor& out) {
  const at::Tensor result = convert_indices_from_coo_to_csr(rows, size, out_int32);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

at::Tensor convert_indices_from_csr_to_coo(const at::Tensor& crow_indices,
                                           const at::Tensor& col_indices, bool out_int32,
                                           bool transpose) {
  const char* op = "_convert_indices_from_csr_to_coo";
  TORCH_CHECK(crow_indices.dim() == col_indices.dim() && crow_indices.dim() >= 1, op,
              ": crow_indices and col_indices must have the same number of dims (at least 1), "
              "got ",
              crow_indices.dim(), " and ", col_indices.dim());
  const at::ScalarType type = out_int32 ? at::kInt : at::kLong;
  const int64_t batch_dims = crow_indices.dim() - 1;
  const auto batch_shape = crow_indices.sizes().slice(0, batch_dims);
  int64_t batches = 1;
  for (int64_t s : batch_shape) batches *= s;
  const int64_t rows = crow_indices.size(-1) - 1, nnz = col_indices.size(-1);
  const at::Tensor crow = crow_indices.reshape({batches, rows + 1}).to(at::kLong);
  const at::Tensor col = col_indices.reshape({batches, nnz}).to(at::kLong);
  // Entry e of a batch is in row r where crow[r] <= e < crow[r + 1].
  const at::Tensor entry = at::arange(nnz, crow.options()).expand({batches, nnz}).contiguous();
  const at::Tensor row = rows == 0
                             ? at::zeros({batches, nnz}, crow.options())
                             : at::searchsorted(crow.narrow(1, 1, rows).contiguous(), entry, false,
                                                /*right=*/true);
  std::vector<at::Tensor> coordinates;
  // The batch coordinates of each entry, row-major over the batch shape.
  at::Tensor batch = at::arange(batches, crow.options()).unsqueeze(1).expand({batches, nnz});
  std::vector<at::Tensor> batch_rows(static_cast<size_t>(batch_dims));
  for (int64_t d = batch_dims; d-- > 0;) {
    batch_rows[d] = batch.remainder(batch_shape[d]);
    batch = batch.div(batch_shape[d], "floor");
  }
  for (const at::Tensor& b : batch_rows) coordinates.push_back(b.reshape({-1}));
  coordinates.push_back((transpose ? col : row).reshape({-1}));
  coordinates.push_back((transpose ? row : col).reshape({-1}));
  return at::stack(coordinates).to(type);
}

at::Tensor& convert_indices_from_csr_to_coo_out(const at::Tensor& crow_indices,
                                                const at::Tensor& col_indices, bool out_int32,
                                                bool transpose, at::Tensor& out) {
  const at::Tensor result =
      convert_indices_from_csr_to_coo(crow_indices, col_indices, out_int32, transpose);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::SparseCsrCPU>(m, kGenericCsrKernels);
  m.impl("addmm.out", TORCH_FN(csr_addmm_out));
  m.impl("addmv.out", TORCH_FN(csr_addmv_out));
  m.impl("_to_sparse_csr", TORCH_FN(compressed_to_sparse_csr));
  m.impl("_to_sparse_csc", TORCH_FN(to_sparse_csc));
  m.impl("sparse_mask", TORCH_FN(compressed_sparse_mask));
  m.impl("add.out", TORCH_FN(compressed_add_out));
  m.impl("add.Tensor", TORCH_FN(compressed_add));
  m.impl("add_.Tensor", TORCH_FN(compressed_add_));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::CPU>(m, kGenericToCsrKernels);
  m.impl("_to_sparse_csc", TORCH_FN(to_sparse_csc));
}

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::SparseCPU>(m, kGenericToCsrKernels);
  m.impl("_to_sparse_csc", TORCH_FN(to_sparse_csc));
}

}  // namespace torch_tpu::ops
