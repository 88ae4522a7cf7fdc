// Joins (cat).
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>

#include "core/dtype_map.h"
#include "exec/region.h"
#include "ops/device_empty.h"
#include "ops/kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : tensors) inputs.push_back(t);
  TORCH_CHECK(!inputs.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < inputs.size(); ++i) {
    TORCH_CHECK(inputs[i].dim() > 0, "zero-dimensional tensor (at position ", i,
                ") cannot be concatenated");
  }
  // Legacy rule kept by PyTorch: 1-D empty tensors are skipped.
  std::vector<at::Tensor> parts;
  for (const auto& t : inputs) {
    if (!(t.dim() == 1 && t.numel() == 0)) parts.push_back(t);
  }
  const at::ScalarType dtype = at::native::result_type(tensors);
  if (parts.empty()) {
    at::native::resize_output(out, {0});
    return out;
  }
  const at::Tensor& ref = parts[0];
  dim = c10::maybe_wrap_dim(dim, ref.dim());
  std::vector<int64_t> shape = ref.sizes().vec();
  shape[dim] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& t = parts[i];
    TORCH_CHECK(t.dim() == ref.dim(), "Tensors must have same number of dimensions: got ",
                ref.dim(), " and ", t.dim());
    for (int64_t d = 0; d < ref.dim(); ++d) {
      if (d == dim) continue;
      TORCH_CHECK(t.size(d) == ref.size(d), "Sizes of tensors must match except in dimension ", dim,
                  ". Expected size ", ref.size(d), " but got size ", t.size(d),
                  " for tensor number ", i, " in the list.");
    }
    shape[dim] += t.size(dim);
  }
  TORCH_CHECK_TYPE(at::canCast(dtype, out.scalar_type()),
                   "torch.cat(): input types can't be cast to the desired output type ",
                   out.scalar_type());
  at::assert_no_internal_overlap(out);
  for (const auto& t : inputs) at::assert_no_overlap(out, t);
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  const hlo::ElementType type = element_type_for(dtype, "cat");
  std::vector<at::Tensor> nonempty;
  for (const auto& t : parts) {
    if (t.numel() > 0) nonempty.push_back(t);
  }
  TensorProgram program("cat", "cat:" + std::to_string(dim) + ":" + hlo::mlir_name(type) + ":" +
                                   std::to_string(nonempty.size()));
  for (const auto& t : nonempty) program.input(t);
  program.output(out);
  // Appending to a larger tensor (a KV cache, generate's input_ids): its
  // length grows every step.
  int64_t rest = 0;
  for (size_t i = 1; i < nonempty.size(); ++i) rest += nonempty[i].size(dim);
  ShapeVaryingOps growing(nonempty.size() > 1 && nonempty[0].size(dim) > rest ? ShapeVarying::kGrows
                                                                              : ShapeVarying::kNo);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    std::vector<hlo::Value> converted;
    for (const auto& v : in) converted.push_back(b.convert(v, type));
    return std::vector<hlo::Value>{b.concatenate(converted, dim)};
  });
  return out;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  const at::ScalarType dtype = at::native::result_type(tensors);
  at::Tensor first;
  for (const at::Tensor& t : tensors) {
    first = t;
    break;
  }
  TORCH_CHECK(first.defined(), "torch.cat(): expected a non-empty list of Tensors");
  at::Tensor out = device_empty({0}, first.options().dtype(dtype));
  return cat_out(tensors, dim, out);
}

}  // namespace torch_tpu::ops
