// isin: whether each element occurs among the test elements. A small test
// set is compared against every element at once (one broadcast compare and
// an any); a large one is sorted and each element looked up with
// searchsorted, so memory stays linear in the sizes.
#include <ATen/ScalarOps.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/sort.h>

#include "ops/device_empty.h"
#include "ops/membership_kernels.h"

namespace torch_tpu::ops {
namespace {

// Beyond this many (element, test element) pairs the sorted lookup is used.
constexpr int64_t kBroadcastPairs = int64_t(1) << 22;

void check_dtype(const at::Tensor& t) {
  TORCH_CHECK(!at::isComplexType(t.scalar_type()) && t.scalar_type() != at::kBool,
              "Unsupported input type encountered for isin(): ", t.scalar_type());
}

at::Tensor empty_bool(const at::Tensor& like) {
  return device_empty({0}, like.options().dtype(at::kBool));
}

}  // namespace

at::Tensor& isin_out(const at::Tensor& elements, const at::Tensor& test_elements,
                     bool /*assume_unique*/, bool invert, at::Tensor& out) {
  check_dtype(elements);
  check_dtype(test_elements);
  TORCH_CHECK(out.scalar_type() == at::kBool, "Expected out tensor to have dtype bool, but got ",
              out.scalar_type(), " instead");
  at::native::resize_output(out, elements.sizes());
  if (elements.numel() == 0) return out;
  if (test_elements.numel() == 0) return out.fill_(invert);
  // Compared in the common dtype, as CPU's kernel does.
  const at::ScalarType common = at::result_type(elements, test_elements);
  const at::Tensor e = elements.to(common);
  const at::Tensor t = test_elements.reshape({-1}).to(common);
  at::Tensor found;
  if (e.numel() * t.numel() <= kBroadcastPairs) {
    found = e.unsqueeze(-1).eq(t).any(-1);
  } else {
    const at::Tensor sorted = std::get<0>(t.sort());
    const at::Tensor at_or_after = at::searchsorted(sorted, e).clamp_max(t.numel() - 1);
    found = sorted.take(at_or_after).eq(e);
  }
  return out.copy_(invert ? found.logical_not() : found);
}

at::Tensor isin(const at::Tensor& elements, const at::Tensor& test_elements, bool assume_unique,
                bool invert) {
  at::Tensor out = empty_bool(elements);
  return isin_out(elements, test_elements, assume_unique, invert, out);
}

// A single test element is an equality test (with the scalar's promotion).
at::Tensor& isin_tensor_scalar_out(const at::Tensor& elements, const at::Scalar& test_element,
                                   bool /*assume_unique*/, bool invert, at::Tensor& out) {
  check_dtype(elements);
  TORCH_CHECK(out.scalar_type() == at::kBool, "Expected out tensor to have dtype bool, but got ",
              out.scalar_type(), " instead");
  at::native::resize_output(out, elements.sizes());
  return out.copy_(invert ? elements.ne(test_element) : elements.eq(test_element));
}

at::Tensor isin_tensor_scalar(const at::Tensor& elements, const at::Scalar& test_element,
                              bool assume_unique, bool invert) {
  at::Tensor out = empty_bool(elements);
  return isin_tensor_scalar_out(elements, test_element, assume_unique, invert, out);
}

at::Tensor& isin_scalar_tensor_out(const at::Scalar& element, const at::Tensor& test_elements,
                                   bool assume_unique, bool invert, at::Tensor& out) {
  const at::Tensor e = at::scalar_to_tensor(element, test_elements.device());
  e.unsafeGetTensorImpl()->set_wrapped_number(true);
  return isin_out(e, test_elements, assume_unique, invert, out);
}

at::Tensor isin_scalar_tensor(const at::Scalar& element, const at::Tensor& test_elements,
                              bool assume_unique, bool invert) {
  at::Tensor out = empty_bool(test_elements);
  return isin_scalar_tensor_out(element, test_elements, assume_unique, invert, out);
}

}  // namespace torch_tpu::ops
