// Indexing: every op here reads or writes `self` at coordinates computed
// from index tensors, so all of them lower to one gather or one scatter on
// the flattened operand (flat position = sum of coordinate * stride). What
// differs per op is only how the coordinates are formed and, for writes, how
// an update combines with the old value.
//
// Out-of-range indices: Debug mode checks them on the host and raises
// IndexError naming the op before launching anything. In Strict mode every
// indexing program checks its indices on the device and reports the first
// bad one, raised as IndexError at the next host read or synchronize
// (ops/index_bounds.h); until then a read clamps each coordinate into its own
// dimension and a write out of range is dropped, so no other row is touched.
#include <ATen/Dispatch_v2.h>
#include <ATen/ExpandUtils.h>
#include <ATen/OpMathType.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "exec/eager_mode.h"
#include "hlo/int_constants.h"
#include "hlo/reduce_identity.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/index_bounds.h"
#include "ops/index_kernels.h"
#include "ops/out_checks.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::s64_splat;
using hlo::TensorType;
using hlo::Value;

// Flat positions in a contiguous array of `shape` for per-dim coordinates
// (all s64, of one common shape).
Value flat_positions(Builder& b, const std::vector<Value>& coords,
                     const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  Value flat = s64_splat(b, 0, dims);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    flat = b.binary("add", flat, b.binary("multiply", coords[d], s64_splat(b, stride, dims)));
    stride *= shape[d];
  }
  return flat;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// self[coords] with the result in the coordinates' shape. Out-of-range
// coordinates are clamped per dimension (the program reports them).
Value gather_at(Builder& b, Value self, const std::vector<Value>& coords,
                const std::vector<int64_t>& dims) {
  const auto shape = self.type.dims;
  Value flat = b.reshape(self, {numel_of(shape)});
  if (shape.empty()) return b.splat(b.reshape(flat, {}), dims);
  return b.gather_1d(flat, flat_positions(b, clamp_coords(b, coords, shape), shape, dims));
}

// self with self[coords] = body(self[coords], updates) (replace if body is
// null). An update with an out-of-range coordinate is dropped (its flat
// position is pointed past the end, which scatter skips).
Value scatter_at(Builder& b, Value self, const std::vector<Value>& coords, Value updates,
                 const char* body) {
  const auto shape = self.type.dims;
  const auto& dims = updates.type.dims;
  const int64_t n = numel_of(dims);
  const int64_t total = numel_of(shape);
  Value pos = s64_splat(b, 0, dims);
  if (shape.empty()) {
    // A 0-d self: the one coordinate must be 0 (or -1 where negatives wrap,
    // which the caller has already wrapped).
    Value ok = b.compare(Compare::kEQ, coords.at(0), s64_splat(b, 0, dims));
    pos = b.select(ok, pos, s64_splat(b, total, dims));
  } else {
    pos = b.select(coords_in_range(b, coords, shape), flat_positions(b, coords, shape, dims),
                   s64_splat(b, total, dims));
  }
  Value r =
      b.scatter_1d(b.reshape(self, {total}), b.reshape(pos, {n}), b.reshape(updates, {n}), body);
  return b.reshape(r, shape);
}

// Coordinates for the ops that index one dim: iota everywhere except `dim`,
// which reads `index` (int32 or int64, already of shape `dims`).
std::vector<Value> dim_coords(Builder& b, Value index, int64_t dim,
                              const std::vector<int64_t>& dims) {
  index = b.convert(index, ElementType::kS64);
  std::vector<Value> coords;
  for (size_t d = 0; d < dims.size(); ++d) {
    coords.push_back(static_cast<int64_t>(d) == dim ? index : b.iota({ElementType::kS64, dims}, d));
  }
  if (dims.empty()) coords.push_back(index);
  return coords;
}

// Negative indices count from the end (advanced indexing, take).
Value wrap_negative(Builder& b, Value index, int64_t size) {
  const auto& dims = index.type.dims;
  Value neg = b.compare(Compare::kLT, index, s64_splat(b, 0, dims));
  return b.select(neg, b.binary("add", index, s64_splat(b, size, dims)), index);
}

// gather/scatter, as ATen checks them: an empty index may have any dtype.
void check_scatter_gather_index(const at::Tensor& index, const char* op) {
  TORCH_CHECK(
      index.numel() == 0 || index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
      "(): Expected dtype int32/int64 for index");
}

bool is_int_index(const at::Tensor& index) {
  return index.scalar_type() == at::kLong || index.scalar_type() == at::kInt;
}

// CPU's RuntimeError for an index of another dtype (advanced indexing
// raises IndexError instead, see below).
void check_index_dtype(const at::Tensor& index, const char* op) {
  TORCH_CHECK(is_int_index(index), op,
              "(): Expected dtype int32/int64 for index but got: ", index.scalar_type());
}

// Debug mode checks on the host before launching (a sync, like everything
// in Debug); `dim` is only for the message.
void debug_check_range(const char* op, const at::Tensor& index, int64_t size, bool allow_negative,
                       int64_t dim, IndexErrorClass error_class = IndexErrorClass::kIndexError) {
  if (current_eager_mode() == EagerMode::kDebug) {
    check_index_range_on_host(op, index, dim, size, allow_negative, error_class);
  }
}

// CPU raises RuntimeError, not IndexError, for these ops' bad indices.
constexpr auto kRuntime = IndexErrorClass::kRuntimeError;

int64_t size_at(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }

}  // namespace

at::Tensor& index_select_as(const char* op, IndexErrorClass error_class, const at::Tensor& self,
                            int64_t dim, const at::Tensor& index, at::Tensor& out) {
  TORCH_CHECK(is_int_index(index), op, "(): Expected dtype int32 or int64 for index");
  TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), op,
              "(): self and result must have the same scalar type");
  check_out_disjoint(out, {self, index});
  dim = c10::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> dims = self.sizes().vec();
  if (self.dim() > 0) dims[dim] = index.numel();
  at::native::resize_output(out, dims);
  debug_check_range(op, index, size_at(self, dim), false, dim, error_class);
  if (out.numel() == 0) return out;
  TensorProgram program(op, program_key("index_select", dim));
  program.input(self);
  program.input(index);
  program.output(out);
  program.report_findings(op, error_class);
  const int64_t size = size_at(self, dim);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], dim, size, false);
    Value idx = b.reshape(b.convert(in[1], ElementType::kS64), {index.numel()});
    Value idx_b = dims.empty() ? b.reshape(idx, {}) : b.broadcast_in_dim(idx, dims, {dim});
    return std::vector<Value>{gather_at(b, in[0], dim_coords(b, idx_b, dim, dims), dims),
                              bounds.finding(b)};
  });
  return out;
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out) {
  return index_select_as("index_select", IndexErrorClass::kIndexError, self, dim, index, out);
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = device_empty({0}, self.options());
  return index_select_out(self, dim, index, out);
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool /*sparse_grad*/, at::Tensor& out) {
  const char* op = "gather";
  check_scatter_gather_index(index, op);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(
      index.dim() == self.dim() || index.numel() == 0 || self.dim() == 0 || index.dim() == 0,
      "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t d = 0; d < index.dim() && index.dim() == self.dim(); ++d) {
    TORCH_CHECK(d == dim || index.size(d) <= self.size(d), "Size does not match at dimension ", d,
                " expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim);
  }
  check_out_dtype(op, out, self.scalar_type());
  check_out_disjoint(out, {self});
  check_out_overlap(out, {index});
  at::native::resize_output(out, index.sizes());
  debug_check_range(op, index, size_at(self, dim), false, dim, kRuntime);
  if (out.numel() == 0) return out;
  const auto dims = index.sizes().vec();
  TensorProgram program(op, program_key("gather", dim));
  program.input(self);
  program.input(index);
  program.output(out);
  program.report_findings(op, kRuntime);
  const int64_t size = size_at(self, dim);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], dim, size, false);
    return std::vector<Value>{gather_at(b, in[0], dim_coords(b, in[1], dim, dims), dims),
                              bounds.finding(b)};
  });
  return out;
}

namespace {

// The scatter family: out = self, then out[coords(index)] (body)= updates,
// where updates is src cut to index's shape, or a scalar.
at::Tensor& scatter_common(const char* op, const at::Tensor& self, int64_t dim,
                           const at::Tensor& index, const at::Tensor* src, const at::Scalar* value,
                           const char* body, at::Tensor& out,
                           IndexErrorClass error_class = kRuntime) {
  check_scatter_gather_index(index, op);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (src != nullptr) {
    TORCH_CHECK(src->scalar_type() == self.scalar_type(), op,
                "(): Expected self.dtype to be equal to src.dtype");
  }
  at::native::resize_output(out, self.sizes());
  debug_check_range(op, index, size_at(self, dim), false, dim, error_class);
  if (out.numel() == 0) return out;
  const ElementType t = element_type_for(self.scalar_type(), op);
  const auto dims = index.sizes().vec();
  TensorProgram program(op, program_key("scatter", dim, body ? body : "set", src != nullptr));
  if (index.numel() == 0) {  // (CPU never converts value then)
    copy_on_device(out, self, op);
    return out;
  }
  program.input(self);
  program.input(index);
  if (src != nullptr) program.input(*src);
  if (value != nullptr) program.scalar(*value, t);
  program.output(out);
  program.report_findings(op, error_class);
  const int64_t size = size_at(self, dim);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], dim, size, false);
    Value updates;
    if (src != nullptr) {
      std::vector<int64_t> zero(dims.size(), 0), one(dims.size(), 1);
      updates = dims.empty() ? b.reshape(in[2], {}) : b.slice(in[2], zero, dims, one);
    } else {
      updates = b.splat(in[2], dims);
    }
    return std::vector<Value>{scatter_at(b, in[0], dim_coords(b, in[1], dim, dims), updates, body),
                              bounds.finding(b)};
  });
  return out;
}

const char* reduce_body(c10::string_view reduce, const char* op) {
  if (reduce == "add" || reduce == "sum") return "add";
  if (reduce == "multiply" || reduce == "prod") return "multiply";
  if (reduce == "amax") return "maximum";
  if (reduce == "amin") return "minimum";
  TORCH_CHECK(false, op, "(): reduce argument must be either sum, prod, mean, amax or amin, got ",
              reduce);
}

}  // namespace

at::Tensor& scatter_as(const char* op, IndexErrorClass error_class, const at::Tensor& self,
                       int64_t dim, const at::Tensor& index, const at::Tensor* src,
                       const at::Scalar* value, at::Tensor& out) {
  return scatter_common(op, self, dim, index, src, value, nullptr, out, error_class);
}

at::Tensor& scatter_src_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out) {
  return scatter_common("scatter", self, dim, index, &src, nullptr, nullptr, out);
}
at::Tensor& scatter_value_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Scalar& value, at::Tensor& out) {
  return scatter_common("scatter", self, dim, index, nullptr, &value, nullptr, out);
}
at::Tensor& scatter_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& src, c10::string_view reduce, at::Tensor& out) {
  return scatter_common("scatter", self, dim, index, &src, nullptr, reduce_body(reduce, "scatter"),
                        out);
}
at::Tensor& scatter_value_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                     const at::Scalar& value, c10::string_view reduce,
                                     at::Tensor& out) {
  return scatter_common("scatter", self, dim, index, nullptr, &value,
                        reduce_body(reduce, "scatter"), out);
}
at::Tensor& scatter_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out) {
  return scatter_common("scatter_add", self, dim, index, &src, nullptr, "add", out);
}

at::Tensor& scatter_reduce_two_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce,
                                   bool include_self, at::Tensor& out) {
  const char* op = "scatter_reduce";
  const bool mean = reduce == "mean";
  const char* body = mean ? "add" : reduce_body(reduce, op);
  check_scatter_gather_index(index, op);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(out, self.sizes());
  debug_check_range(op, index, size_at(self, dim), false, dim, kRuntime);
  if (out.numel() == 0) return out;
  if (index.numel() == 0) {
    copy_on_device(out, self, op);
    return out;
  }
  const ElementType t = element_type_for(self.scalar_type(), op);
  const auto dims = index.sizes().vec();
  const auto self_dims = self.sizes().vec();
  TensorProgram program(op, program_key("scatter_reduce", dim, body, mean, include_self));
  program.input(self);
  program.input(index);
  program.input(src);
  program.output(out);
  program.report_findings(op, kRuntime);
  const int64_t size = size_at(self, dim);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], dim, size, false);
    std::vector<int64_t> zero(dims.size(), 0), one(dims.size(), 1);
    Value updates = dims.empty() ? b.reshape(in[2], {}) : b.slice(in[2], zero, dims, one);
    const auto coords = dim_coords(b, in[1], dim, dims);
    // Positions some index hits; without include_self they start from the
    // reduction's identity instead of self.
    Value hit = scatter_at(b, b.zeros({ElementType::kS64, self_dims}), coords,
                           s64_splat(b, 1, dims), "add");
    Value base = in[0];
    if (!include_self) {
      Value touched = b.compare(Compare::kGT, hit, s64_splat(b, 0, self_dims));
      base = b.select(touched, b.splat(hlo::reduce_identity(b, body, t), self_dims), in[0]);
    }
    Value r = scatter_at(b, base, coords, updates, body);
    if (mean) {
      Value count = b.convert(hit, t);
      if (include_self) count = b.binary("add", count, b.splat(b.constant(t, 1), self_dims));
      Value safe = b.binary("maximum", count, b.splat(b.constant(t, 1), self_dims));
      Value q = b.binary("divide", r, safe);
      if (hlo::is_signed_int(t)) {
        // Integer division truncates; CPU's mean floors (count > 0).
        Value inexact = b.compare(Compare::kNE, b.binary("remainder", r, safe), b.zeros(r.type));
        Value negative = b.compare(Compare::kLT, r, b.zeros(r.type));
        q = b.select(b.binary("and", inexact, negative),
                     b.binary("subtract", q, b.splat(b.constant(t, 1), self_dims)), q);
      }
      r = q;
    }
    return std::vector<Value>{r, bounds.finding(b)};
  });
  return out;
}

at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, const at::Scalar& alpha, at::Tensor& out) {
  const char* op = "index_add";
  // CPU's index_add raises IndexError from its 1-d and int32-index paths,
  // RuntimeError from the others.
  const IndexErrorClass error_class =
      self.dim() <= 1 || index.scalar_type() == at::kInt ? IndexErrorClass::kIndexError : kRuntime;
  check_index_dtype(index, op);
  TORCH_CHECK(index.dim() <= 1, op, "(): Index is supposed to be a vector");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(source.dim() == 0 || index.numel() == source.size(source.dim() > dim ? dim : 0), op,
              "(): Number of indices (", index.numel(), ") should be equal to source.size(dim)");
  at::native::resize_output(out, self.sizes());
  debug_check_range(op, index, size_at(self, dim), false, dim, error_class);
  // CPU converts alpha to self's dtype (refusing an overflow) whatever index holds.
  AT_DISPATCH_V2(self.scalar_type(), "index_add", AT_WRAP([&] { (void)alpha.to<scalar_t>(); }),
                 AT_EXPAND(AT_ALL_TYPES_AND_COMPLEX), at::kHalf, at::kBFloat16, at::kBool);
  if (out.numel() == 0) return out;
  if (index.numel() == 0) {
    copy_on_device(out, self, op);
    return out;
  }
  const ElementType t = element_type_for(self.scalar_type(), op);
  const auto dims = source.sizes().vec();
  TensorProgram program(op, program_key("index_add", dim));
  program.input(self);
  program.input(index);
  program.input(source);
  program.scalar(alpha, t);
  program.output(out);
  program.report_findings(op, error_class);
  const int64_t size = size_at(self, dim);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], dim, size, false);
    Value idx = b.reshape(b.convert(in[1], ElementType::kS64), {index.numel()});
    Value idx_b = dims.empty() ? b.reshape(idx, {}) : b.broadcast_in_dim(idx, dims, {dim});
    Value updates = b.binary("multiply", b.convert(in[2], t), b.splat(in[3], dims));
    return std::vector<Value>{scatter_at(b, in[0], dim_coords(b, idx_b, dim, dims), updates, "add"),
                              bounds.finding(b)};
  });
  return out;
}

at::Tensor embedding(const at::Tensor& weight, const at::Tensor& indices, int64_t padding_idx,
                     bool scale_grad_by_freq, bool sparse) {
  TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  TORCH_CHECK(is_int_index(indices),
              "Expected tensor for argument #1 'indices' to have one of the following scalar "
              "types: Long, Int; but got ",
              indices.scalar_type(), " instead (while checking arguments for embedding)");
  // (padding_idx, scale_grad_by_freq and sparse only shape the gradient)
  (void)padding_idx;
  (void)scale_grad_by_freq;
  (void)sparse;
  at::Tensor flat = device_empty({0}, weight.options());
  index_select_as("embedding", IndexErrorClass::kIndexError, weight, 0, indices.reshape({-1}),
                  flat);
  std::vector<int64_t> shape = indices.sizes().vec();
  shape.push_back(weight.size(1));
  return flat.view(shape);
}

at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                    int64_t num_weights, int64_t padding_idx,
                                    bool scale_grad_by_freq) {
  const char* op = "embedding_dense_backward";
  const int64_t dim = grad_output.size(-1);
  const int64_t n = indices.numel();
  at::Tensor grad = device_empty({num_weights, dim}, grad_output.options());
  if (grad.numel() == 0) return grad;
  if (n == 0) {
    fill_tensor(grad, 0, op);
    return grad;
  }
  const ElementType t = element_type_for(grad_output.scalar_type(), op);
  const ElementType acc = opmath_element_type_for(grad_output.scalar_type(), op);
  TensorProgram program(op, program_key("embedding_bwd", padding_idx, scale_grad_by_freq));
  program.input(grad_output);
  program.input(indices);
  program.output(grad);
  program.report_findings(op);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], 0, num_weights, false);
    Value g = b.convert(b.reshape(in[0], {n, dim}), acc);
    Value idx = b.reshape(b.convert(in[1], ElementType::kS64), {n});
    if (padding_idx >= 0) {
      Value pad = b.compare(Compare::kEQ, idx, s64_splat(b, padding_idx, {n}));
      g = b.select(b.broadcast_in_dim(pad, {n, dim}, {0}), b.zeros(g.type), g);
    }
    if (scale_grad_by_freq) {
      Value counts = b.scatter_1d(b.zeros({ElementType::kS64, {num_weights}}), idx,
                                  s64_splat(b, 1, {n}), "add");
      Value freq = b.convert(b.gather_1d(counts, idx), acc);
      g = b.binary("divide", g, b.broadcast_in_dim(freq, {n, dim}, {0}));
    }
    Value idx_b = b.broadcast_in_dim(idx, {n, dim}, {0});
    std::vector<Value> coords{idx_b, b.iota({ElementType::kS64, {n, dim}}, 1)};
    Value r = scatter_at(b, b.zeros({acc, {num_weights, dim}}), coords, g, "add");
    return std::vector<Value>{b.convert(r, t), bounds.finding(b)};
  });
  return grad;
}

namespace {

// Advanced indexing: the index tensors (bool masks turned into long
// coordinates), broadcast together; where their common shape goes in the
// result; and the result shape.
struct AdvancedIndex {
  std::vector<at::Tensor> index;  // one per self dim; undefined = full slice
  std::vector<int64_t> broadcast;
  std::vector<int64_t> result;
  int64_t position = 0;  // first result dim of the broadcast index shape
};

AdvancedIndex advanced_index(const at::Tensor& self,
                             const c10::List<std::optional<at::Tensor>>& indices, const char* op) {
  AdvancedIndex ai;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> maybe = indices.get(i);
    at::Tensor t = maybe.has_value() ? *maybe : at::Tensor();
    // CPU index tensors are allowed, as with CUDA tensors.
    if (t.defined() && t.device() != self.device()) t = t.to(self.device());
    if (t.defined() && (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte)) {
      // A mask stands for one coordinate tensor per dim it covers.
      const size_t first = ai.index.size();
      for (int64_t d = 0; d < t.dim(); ++d) {
        TORCH_CHECK_INDEX(
            first + d < static_cast<size_t>(self.dim()) && t.size(d) == self.size(first + d),
            "The shape of the mask ", t.sizes(), " at index ", d,
            " does not match the shape of the indexed tensor ", self.sizes(), " at index ",
            first + d);
      }
      at::Tensor nz = ops::nonzero(t);
      for (int64_t d = 0; d < t.dim(); ++d) ai.index.push_back(nz.select(1, d));
    } else {
      TORCH_CHECK_INDEX(!t.defined() || is_int_index(t),
                        "tensors used as indices must be long, int, byte or bool tensors");
      ai.index.push_back(t);
    }
  }
  TORCH_CHECK_INDEX(ai.index.size() <= static_cast<size_t>(self.dim()), "too many indices for ",
                    "tensor of dimension ", self.dim(), " (got ", ai.index.size(), ")");
  ai.index.resize(self.dim());
  std::vector<at::Tensor> defined;
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!ai.index[d].defined()) continue;
    defined.push_back(ai.index[d]);
    if (first < 0) first = d;
    last = d;
  }
  TORCH_CHECK_INDEX(!defined.empty(), op, ": at least one index must be a tensor");
  std::vector<int64_t> bshape;
  for (const auto& t : defined) bshape = at::infer_size(bshape, t.sizes());
  ai.broadcast = bshape;
  bool adjacent = true;
  for (int64_t d = first; d <= last; ++d) adjacent &= ai.index[d].defined();
  ai.position = adjacent ? first : 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (ai.index[d].defined()) continue;
    if (adjacent && d > last) continue;
    if (!adjacent || d < first) ai.result.push_back(self.size(d));
  }
  ai.result.insert(ai.result.begin() + ai.position, bshape.begin(), bshape.end());
  if (adjacent) {
    for (int64_t d = last + 1; d < self.dim(); ++d) ai.result.push_back(self.size(d));
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (ai.index[d].defined()) debug_check_range(op, ai.index[d], self.size(d), true, d);
  }
  return ai;
}

// Per-dim coordinates over the result shape: broadcast index values for the
// indexed dims, iotas over the matching result dim for the others.
std::vector<Value> advanced_coords(Builder& b, const AdvancedIndex& ai,
                                   const std::vector<Value>& index_values,
                                   const std::vector<int64_t>& self_shape, IndexBounds& bounds) {
  const auto& R = ai.result;
  const int64_t nb = static_cast<int64_t>(ai.broadcast.size());
  std::vector<int64_t> bdims;  // where the broadcast shape sits in R
  for (int64_t i = 0; i < nb; ++i) bdims.push_back(ai.position + i);
  std::vector<Value> coords;
  size_t next_index = 0;
  int64_t next_free = 0;  // result dim of the next non-indexed self dim
  for (size_t d = 0; d < self_shape.size(); ++d) {
    if (next_free == ai.position) next_free += nb;
    if (ai.index[d].defined()) {
      bounds.check(b, index_values[next_index], static_cast<int64_t>(d), self_shape[d], true);
      Value v =
          wrap_negative(b, b.convert(index_values[next_index++], ElementType::kS64), self_shape[d]);
      v = broadcast_to(b, v, ai.broadcast);
      coords.push_back(b.broadcast_in_dim(v, R, bdims));
    } else {
      coords.push_back(b.iota({ElementType::kS64, R}, next_free++));
    }
  }
  return coords;
}

}  // namespace

at::Tensor& index_out(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                      at::Tensor& out) {
  const char* op = "index";
  const AdvancedIndex ai = advanced_index(self, indices, op);
  at::native::resize_output(out, ai.result);
  if (out.numel() == 0) return out;
  TensorProgram program(op, program_key("index", ai.position, ai.broadcast));
  program.input(self);
  for (const auto& t : ai.index) {
    if (t.defined()) program.input(t);
  }
  program.output(out);
  program.report_findings(op);
  const auto self_shape = self.sizes().vec();
  program.run([&](Builder& b, const std::vector<Value>& in) {
    std::vector<Value> idx(in.begin() + 1, in.end());
    IndexBounds bounds;
    Value r = gather_at(b, in[0], advanced_coords(b, ai, idx, self_shape, bounds), ai.result);
    return std::vector<Value>{r, bounds.finding(b)};
  });
  return out;
}

at::Tensor index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  at::Tensor out = device_empty({0}, self.options());
  return index_out(self, indices, out);
}

at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values, bool accumulate, bool /*unsafe*/) {
  const char* op = "index_put_";
  const AdvancedIndex ai = advanced_index(self, indices, op);
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Index put requires the source and ",
              "destination dtypes match, got ", self.scalar_type(), " for the destination and ",
              values.scalar_type(), " for the source.");
  if (numel_of(ai.result) == 0 || self.numel() == 0) return self;
  // The values are scattered straight into the storage, at the selected
  // elements' positions through self's strides, rather than by rewriting all
  // of self: an expanded self (stride 0, which CPU writes through) keeps its
  // other elements, and the write costs what it writes.
  const int64_t element_size = static_cast<int64_t>(self.element_size());
  const int64_t storage_bytes = static_cast<int64_t>(self.storage().nbytes());
  TORCH_CHECK(storage_bytes % element_size == 0, op,
              ": the storage does not hold a whole number of ", self.scalar_type(), " elements");
  const int64_t storage_numel = storage_bytes / element_size;
  at::Tensor storage = self.as_strided({storage_numel}, {1}, 0);
  const auto self_shape = self.sizes().vec();
  const auto self_strides = self.strides().vec();
  const int64_t offset = self.storage_offset();
  TensorProgram program(op, program_key("index_put", ai.position, ai.broadcast, accumulate,
                                        self_shape, self_strides, offset));
  program.input(storage);
  program.input(values);
  for (const auto& t : ai.index) {
    if (t.defined()) program.input(t);
  }
  program.output(storage);
  program.report_findings(op);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    std::vector<Value> idx(in.begin() + 2, in.end());
    const auto& dims = ai.result;
    const int64_t n = numel_of(dims);
    Value updates = b.reshape(broadcast_to(b, in[1], dims), {n});
    IndexBounds bounds;
    const auto coords = advanced_coords(b, ai, idx, self_shape, bounds);
    Value pos = s64_splat(b, offset, dims);
    for (size_t d = 0; d < coords.size(); ++d) {
      pos = b.binary("add", pos,
                     b.binary("multiply", coords[d], s64_splat(b, self_strides[d], dims)));
    }
    // An out-of-range coordinate points past the end: scatter skips it.
    if (!coords.empty()) {
      pos =
          b.select(coords_in_range(b, coords, self_shape), pos, s64_splat(b, storage_numel, dims));
    }
    Value r = b.scatter_1d(in[0], b.reshape(pos, {n}), updates, accumulate ? "add" : nullptr);
    return std::vector<Value>{r, bounds.finding(b)};
  });
  return self;
}

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  const char* op = "take";
  TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected a long tensor for index, but ",
              "got ", index.scalar_type());
  at::native::resize_output(out, index.sizes());
  debug_check_range(op, index, self.numel(), true, -1);
  if (out.numel() == 0) return out;
  TORCH_CHECK_INDEX(self.numel() > 0, op, "(): tried to take from an empty tensor");
  const int64_t n = self.numel();
  TensorProgram program(op, "take");
  program.input(self);
  program.input(index);
  program.output(out);
  program.report_findings(op);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], -1, n, true);
    Value flat = b.reshape(in[0], {n});
    const auto coords = clamp_coords(b, {wrap_negative(b, in[1], n)}, {n});
    return std::vector<Value>{b.gather_1d(flat, coords[0]), bounds.finding(b)};
  });
  return out;
}

at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  at::Tensor out = device_empty({0}, self.options());
  return take_out(self, index, out);
}

at::Tensor& put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                 bool accumulate) {
  const char* op = "put_";
  TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected a long tensor for index");
  TORCH_CHECK(index.numel() == source.numel(), op, "(): Expected source and index to have the ",
              "same number of elements, but got source.numel() = ", source.numel(),
              ", index.numel() = ", index.numel());
  debug_check_range(op, index, self.numel(), true, -1);
  if (index.numel() == 0 || self.numel() == 0) return self;
  const int64_t n = self.numel(), k = index.numel();
  TensorProgram program(op, program_key("put", accumulate));
  program.input(self);
  program.input(index);
  program.input(source);
  program.output(self);
  program.report_findings(op);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    IndexBounds bounds;
    bounds.check(b, in[1], -1, n, true);
    Value pos = wrap_negative(b, b.reshape(in[1], {k}), n);
    // Out of range after wrapping: point past the end, which scatter skips.
    pos = b.select(coords_in_range(b, {pos}, {n}), pos, s64_splat(b, n, {k}));
    Value r = b.scatter_1d(b.reshape(in[0], {n}), pos,
                           b.reshape(b.convert(in[2], in[0].type.element), {k}),
                           accumulate ? "add" : nullptr);
    return std::vector<Value>{b.reshape(r, self.sizes().vec()), bounds.finding(b)};
  });
  return self;
}

}  // namespace torch_tpu::ops
