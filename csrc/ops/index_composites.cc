// Index producers and reducers written with other tpu kernels:
// triu_indices/tril_indices (computed on the host: they depend on three
// integers only, like a constant), nonzero_static (nonzero padded to a fixed
// size, computed on the device without reading a count back: what compiled
// code uses where nonzero would break the graph), index_reduce (a
// scatter_reduce with the index spread along the reduced dim) and
// embedding_renorm_ (nn.Embedding's max_norm: the rows it looks up,
// rescaled and written back, with no host read).
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>

#include "ops/index_composite_kernels.h"
#include "ops/out_checks.h"

namespace torch_tpu::ops {
namespace {

at::Tensor on_device(const at::Tensor& host, std::optional<at::Device> device) {
  return host.to(device.value_or(at::Device(c10::DeviceType::PrivateUse1)));
}

}  // namespace

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return on_device(at::triu_indices(row, col, offset, at::TensorOptions().dtype(dtype)), device);
}

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return on_device(at::tril_indices(row, col, offset, at::TensorOptions().dtype(dtype)), device);
}

at::Tensor nonzero_static(const at::Tensor& self, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  const int64_t ndim = self.dim();
  const auto long_options = self.options().dtype(at::kLong);
  if (ndim == 0 || self.numel() == 0 || size == 0) {
    // A 0-d input has no coordinates; an empty one no nonzero element.
    return at::full({size, ndim}, fill_value, long_options);
  }
  // The k-th nonzero element (row-major) goes to row k; the rest, and rows
  // past `size`, to a spare last row that is cut off.
  const at::Tensor set = self.reshape({-1}).ne(0);
  const at::Tensor rank = set.cumsum(0) - 1;
  const at::Tensor row = at::where(set.logical_and(rank.lt(size)), rank, size);
  std::vector<at::Tensor> coords;
  const at::Tensor flat = at::arange(self.numel(), long_options);
  int64_t stride = 1;
  std::vector<int64_t> strides(ndim);
  for (int64_t d = ndim - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= self.size(d);
  }
  for (int64_t d = 0; d < ndim; ++d) {
    coords.push_back(flat.div(strides[d], "floor").remainder(self.size(d)));
  }
  at::Tensor out = at::full({size + 1, ndim}, fill_value, long_options);
  out.index_put_({row}, at::stack(coords, 1));
  return out.narrow(0, 0, size).contiguous();
}

at::Tensor& nonzero_static_out(const at::Tensor& self, int64_t size, int64_t fill_value,
                               at::Tensor& out) {
  write_result(out, ops::nonzero_static(self, size, fill_value));
  return out;
}

at::Tensor& index_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& source, c10::string_view reduce, bool include_self,
                             at::Tensor& out) {
  const char* op = "index_reduce_()";
  TORCH_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ",
              reduce, ".");
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() <= 1, op,
                    ": Index is supposed to be a vector, but got dim: ", index.dim(),
                    " with type: ", index.scalar_type(), " and size: ", index.sizes());
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
              ": Expected dtype int32/int64 for index but got: ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), op, ": self (", self.scalar_type(),
              ") and source (", source.scalar_type(), ") must have the same scalar type");
  const int64_t along = source.dim() > 0 ? source.size(d) : 1;
  TORCH_CHECK(index.numel() == along, op, ": Number of indices (", index.numel(),
              ") should be equal to source.size(dim): (", along, "), for dim: ", dim);
  std::vector<int64_t> expected = self.sizes().vec();
  if (!expected.empty()) expected[d] = along;
  TORCH_CHECK(source.dim() == self.dim() && source.sizes().vec() == expected,
              "source tensor shape must match self tensor shape, excluding the specified "
              "dimension. Got self.shape = ",
              self.sizes(), " source.shape = ", source.sizes());
  // index along `dim`, the same in every other position: scatter_reduce's
  // form (a 0-d self and source as one element).
  const at::Tensor target = self.dim() == 0 ? self.reshape({1}) : self;
  const at::Tensor values = source.dim() == 0 ? source.reshape({1}) : source;
  std::vector<int64_t> view(values.dim(), 1);
  view[d] = index.numel();
  const at::Tensor spread = index.to(at::kLong).reshape(view).expand(values.sizes());
  const at::Tensor value =
      target.scatter_reduce(d, spread, values, c10::string_view(reduce), include_self)
          .reshape(self.sizes());
  if (!out.is_same(self)) at::native::resize_output(out, value.sizes());
  out.copy_(value);
  return out;
}

at::Tensor index_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source, c10::string_view reduce, bool include_self) {
  at::Tensor out = at::empty_like(self);
  return index_reduce_out(self, dim, index, source, reduce, include_self, out);
}

at::Tensor& index_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, c10::string_view reduce, bool include_self) {
  return index_reduce_out(self, dim, index, source, reduce, include_self, self);
}

at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm,
                              double norm_type) {
  // CPU's checks, in its words.
  at::TensorArg self_arg{self, "self", 1}, indices_arg{indices, "indices", 2};
  at::checkDim("embedding_renorm_", self_arg, 2);
  at::checkScalarTypes("embedding_renorm_", indices_arg, {at::kLong, at::kInt});
  if (indices.numel() == 0) return self;
  // A row looked up twice is rescaled once: every copy of it computes the
  // same new row, so writing them all back writes that row.
  const at::Tensor index = indices.reshape(-1).to(at::kLong);
  const at::Tensor rows = self.index_select(0, index);
  const at::Tensor norms = at::linalg_vector_norm(rows, norm_type, {1}, /*keepdim=*/true);
  const at::Tensor scale =
      at::where(norms > max_norm, max_norm / (norms + 1e-7), at::ones_like(norms));
  self.index_copy_(0, index, rows * scale);
  return self;
}

}  // namespace torch_tpu::ops
