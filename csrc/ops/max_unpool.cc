// max_unpool2d and max_unpool3d (max_unpool1d goes through 2d): each input
// value written to the element of its output plane that `indices` names
// (flat over the plane, h * W + w in 2d, as max_pool returns them), zeros
// elsewhere. The backward is PyTorch's own (a gather by the same indices).
//
// Two values naming one element: the CPU kernel's serial loop keeps the last
// of them in row-major order (with several threads it races), so the
// program finds, for each output element, the largest input position that
// names it (a scatter with `maximum`, which is deterministic) and gathers
// that value. An index outside the plane is a device finding, raised as the
// CPU's RuntimeError at the next host read; its value is dropped meanwhile.
#include <ATen/native/Resize.h>

#include <cstdint>
#include <vector>

#include "core/dtype_map.h"
#include "ops/device_empty.h"
#include "ops/device_findings.h"
#include "ops/kernels.h"
#include "ops/program_key.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::Compare;
using hlo::ElementType;
using hlo::Value;

// The CPU kernels' checks (aten/src/ATen/native/MaxUnpooling.cpp);
// `name` is the spelling their messages use (max_unpooling2d).
void check_unpool(const char* op, const char* name, int k, const at::Tensor& self,
                  const at::Tensor& indices, at::IntArrayRef output_size) {
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(static_cast<int>(output_size.size()) == k, "There should be exactly ",
              k == 2 ? "two elements (height, width)" : "three elements (depth, height, width)",
              " in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == k + 1 || self.dim() == k + 2, "Input to ", name, " should be a ", k + 1,
              "d or ", k + 2, "d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i) {
    TORCH_CHECK(self.size(i) > 0, name, "_forward_out_cpu(): ",
                "Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  }
  for (int64_t s : output_size) {
    TORCH_CHECK(s >= 0, name, "(): output_size must contain non-negative spatial dimensions, ",
                "but got output_size=", output_size);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(
      at::isFloatingType(self.scalar_type()) && !c10::isFloat8Type(self.scalar_type()), "\"", op,
      "\" not implemented for '", c10::toString(self.scalar_type()), "'");
  (void)element_type_for(self.scalar_type(), op);
}

std::vector<int64_t> unpooled_sizes(const at::Tensor& self, at::IntArrayRef output_size) {
  std::vector<int64_t> sizes = self.sizes().vec();
  const size_t k = output_size.size();
  for (size_t j = 0; j < k; ++j) sizes[sizes.size() - k + j] = output_size[j];
  return sizes;
}

at::Tensor& unpool_into(const char* op, const at::Tensor& self, const at::Tensor& indices,
                        at::IntArrayRef output_size, at::Tensor& out) {
  if (out.numel() == 0) return out;
  const int k = static_cast<int>(output_size.size());
  int64_t plane_in = 1, plane_out = 1;
  for (int j = 1; j <= k; ++j) plane_in *= self.size(-j);
  for (int64_t s : output_size) plane_out *= s;
  for (int64_t s : output_size) {
    // The finding packs height and width into one s64 for its message.
    TORCH_CHECK(s < (int64_t{1} << 31), op, ": output_size ", output_size, " is too large");
  }
  const int64_t planes = self.numel() / plane_in;
  const int64_t n = planes * plane_in, m = planes * plane_out;
  const std::vector<int64_t> sizes = out.sizes().vec();
  TensorProgram program(op, program_key("max_unpool", output_size.vec()));
  program.input(self);
  program.input(indices);
  program.output(out);
  program.report_findings(op, IndexErrorClass::kRuntimeError);
  program.run([&](Builder& b, const std::vector<Value>& in) {
    const ElementType s64 = ElementType::kS64;
    auto splat = [&](int64_t v, int64_t count) { return b.splat(b.constant_int(s64, v), {count}); };
    Value idx = b.reshape(in[1], {n});
    Value valid = b.binary("and", b.compare(Compare::kGE, idx, splat(0, n)),
                           b.compare(Compare::kLT, idx, splat(plane_out, n)));
    // Where each input element goes in the flat output (its plane's start
    // plus its index); an invalid one goes to a spare last slot.
    Value plane = b.reshape(b.iota({s64, {planes, plane_in}}, 0), {n});
    Value target = b.binary("add", b.binary("multiply", plane, splat(plane_out, n)), idx);
    target = b.select(valid, target, splat(m, n));
    Value position = b.iota({s64, {n}}, 0);
    Value winner = b.scatter_1d(splat(-1, m + 1), target, position, "maximum");
    winner = b.slice(winner, {0}, {m}, {1});
    Value taken = b.gather_1d(b.reshape(in[0], {n}), b.binary("maximum", winner, splat(0, m)));
    Value result =
        b.select(b.compare(Compare::kGE, winner, splat(0, m)), taken, b.zeros(taken.type));
    return std::vector<Value>{b.reshape(result, sizes),
                              invalid_max_index_finding(b, idx, output_size.vec())};
  });
  return out;
}

at::Tensor unpool(const char* op, const at::Tensor& self, const at::Tensor& indices,
                  at::IntArrayRef output_size) {
  at::Tensor out = device_empty(unpooled_sizes(self, output_size),
                                self.options().memory_format(self.suggest_memory_format()));
  return unpool_into(op, self, indices, output_size, out);
}

at::Tensor& unpool_out(const char* op, const at::Tensor& self, const at::Tensor& indices,
                       at::IntArrayRef output_size, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), op, ": expected out to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type());
  at::native::resize_output(out, unpooled_sizes(self, output_size));
  return unpool_into(op, self, indices, output_size, out);
}

void check_unpool3d(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                    at::IntArrayRef stride, at::IntArrayRef padding) {
  const char* name = "max_unpooling3d";
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64");
  TORCH_CHECK(output_size.size() == 3,
              "There should be exactly three elements (depth, height, width) in output_size, "
              "but got ",
              output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) in padding, but "
              "got: ",
              padding.size(), " elements.");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  check_unpool("max_unpool3d", name, 3, self, indices, output_size);
}

}  // namespace

at::Tensor max_unpool2d(const at::Tensor& self, const at::Tensor& indices,
                        at::IntArrayRef output_size) {
  check_unpool("max_unpool2d", "max_unpooling2d", 2, self, indices, output_size);
  return unpool("max_unpool2d", self, indices, output_size);
}

at::Tensor& max_unpool2d_out(const at::Tensor& self, const at::Tensor& indices,
                             at::IntArrayRef output_size, at::Tensor& out) {
  check_unpool("max_unpool2d", "max_unpooling2d", 2, self, indices, output_size);
  return unpool_out("max_unpool2d", self, indices, output_size, out);
}

at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices,
                        at::IntArrayRef output_size, at::IntArrayRef stride,
                        at::IntArrayRef padding) {
  check_unpool3d(self, indices, output_size, stride, padding);
  return unpool("max_unpool3d", self, indices, output_size);
}

at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices,
                             at::IntArrayRef output_size, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::Tensor& out) {
  check_unpool3d(self, indices, output_size, stride, padding);
  return unpool_out("max_unpool3d", self, indices, output_size, out);
}

}  // namespace torch_tpu::ops
