// torch.linalg.eig / eigvals of real and complex square matrices, on the
// device (ops/eig_lowering.h), with CPU's checks, output dtypes (always
// complex) and layout (eigenvectors column-major). Eigenvalues are those of
// CPU's LAPACK to rounding, but their order along the last dim can differ
// from LAPACK's (PyTorch does not specify one), and each eigenvector is
// unique only up to a unit phase. Here every vector gets geev's rule for
// complex ones (unit norm, largest component real and positive); LAPACK
// leaves a real eigenvector of a real A with whichever sign its algorithm
// produced, so such a column can differ from CPU's by its sign.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <tuple>

#include "ops/eig_lowering.h"
#include "ops/linalg_checks.h"
#include "ops/linalg_kernels.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

// CPU's checks, in its order: the shape, a complex type for the result
// (integers have none), then its LAPACK kernel's dtypes.
at::ScalarType eig_result_type(const at::Tensor& A, const char* f) {
  check_square(A, f);
  const auto dtype = A.scalar_type();
  TORCH_CHECK(!at::isIntegralType(dtype, /*includeBool=*/true), "Unknown Complex ScalarType for ",
              dtype);
  check_lapack_dtype(A, "linalg_eig_out_cpu");
  return c10::toComplexType(dtype);
}

// An out= the result (of type `result`) can be cast into, in CPU's words.
void check_castable(const char* api, const at::Tensor& out, at::ScalarType result,
                    const char* name) {
  TORCH_CHECK(c10::canCast(result, out.scalar_type()), api, ": Expected ", name,
              " to be safely castable from ", result, " dtype, but got ", name, " with dtype ",
              out.scalar_type());
}

// Eigenvalues into `values` and, when `vectors` is given, eigenvectors into
// it (both resized; converted where their dtype is wider than the result's).
void eig_into(const at::Tensor& A, at::ScalarType type, const char* api, at::Tensor& values,
              at::Tensor* vectors) {
  const auto sizes = A.sizes();
  std::vector<int64_t> value_sizes(sizes.begin(), sizes.end() - 1);
  at::Tensor w = at::empty(value_sizes, A.options().dtype(type));
  at::Tensor v = at::empty({0}, A.options().dtype(type));
  if (vectors != nullptr) resize_column_major(v, sizes);
  if (A.numel() > 0) {
    at::Tensor info = at::empty(std::vector<int64_t>(sizes.begin(), sizes.end() - 2),
                                A.options().dtype(at::kInt));
    TensorProgram program(api, vectors != nullptr ? "eig:v" : "eig");
    program.input(A);
    program.output(w);
    program.output(info);
    if (vectors != nullptr) program.output(v);
    program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
      const hlo::ElementType t = hlo::is_complex(in[0].type.element)
                                     ? in[0].type.element
                                     : hlo::complex_type_of(in[0].type.element);
      EigResult r = schur_eig(b, b.convert(in[0], t), vectors != nullptr);
      std::vector<hlo::Value> out{r.eigenvalues, r.info};
      if (vectors != nullptr) out.push_back(r.eigenvectors);
      return out;
    });
    // As CPU: a matrix whose iterations did not converge raises LinAlgError
    // (the check reads info on the host, as CPU's and CUDA's do).
    at::_linalg_check_errors(info, api, A.dim() == 2);
  }
  at::native::resize_output(values, w.sizes());
  values.copy_(w);
  if (vectors != nullptr) {
    resize_column_major(*vectors, v.sizes());
    vectors->copy_(v);
  }
}

constexpr const char* kEigApi = "torch.linalg.eig";

// linalg.eig's checks: finite entries first (CPU and CUDA read this on the
// host too, before anything else; eigvals does not check it), then
// eig_result_type's.
at::ScalarType eig_checks(const at::Tensor& A) {
  TORCH_CHECK(at::isfinite(A).all().item<bool>(), kEigApi,
              ": input tensor should not contain infs or NaNs.");
  return eig_result_type(A, "linalg.eig");
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> linalg_eig_out(const at::Tensor& A, at::Tensor& eigenvalues,
                                                    at::Tensor& eigenvectors) {
  const at::ScalarType type = eig_checks(A);
  check_castable(kEigApi, eigenvalues, type, "eigenvalues");
  check_castable(kEigApi, eigenvectors, type, "eigenvectors");
  eig_into(A, type, kEigApi, eigenvalues, &eigenvectors);
  return {eigenvalues, eigenvectors};
}

std::tuple<at::Tensor, at::Tensor> linalg_eig(const at::Tensor& A) {
  const at::ScalarType type = eig_checks(A);
  at::Tensor values = at::empty({0}, A.options().dtype(type));
  at::Tensor vectors = at::empty({0}, values.options());
  eig_into(A, type, kEigApi, values, &vectors);
  return {values, vectors};
}

at::Tensor& linalg_eigvals_out(const at::Tensor& A, at::Tensor& out) {
  const char* api = "torch.linalg.eigvals";
  const at::ScalarType type = eig_result_type(A, "linalg.eigvals");
  check_castable(api, out, type, "eigenvalues");
  eig_into(A, type, api, out, nullptr);
  return out;
}

at::Tensor linalg_eigvals(const at::Tensor& A) {
  const at::ScalarType type = eig_result_type(A, "linalg.eigvals");
  at::Tensor out = at::empty({0}, A.options().dtype(type));
  eig_into(A, type, "torch.linalg.eigvals", out, nullptr);
  return out;
}

}  // namespace torch_tpu::ops
