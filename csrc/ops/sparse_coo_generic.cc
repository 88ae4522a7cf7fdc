// Sparse COO tensors on tpu: the operators whose CPU kernels only rearrange
// a sparse tensor's indices and values with ATen ops (constructors,
// accessors, resizes, copies, shapes, arithmetic on the values, reductions)
// run those kernels on tpu tensors: the kernel is picked by the SparseCPU
// key, the work inside dispatches on the tensors' device. (Checked against
// PyTorch's source: none reads memory through data_ptr or calls a CPU-only
// kernel.) The kernels that walk the indices on the host are tpu kernels
// (ops/sparse_coo.cc); the rest (index_select, bmm, softmax, sparse @
// sparse, sum's backward, ...) raise NotImplementedError naming the op and
// the Sparsetpu backend.
#include <torch/library.h>

#include "ops/cpu_kernel_reuse.h"

namespace torch_tpu::ops {
namespace {

constexpr const char* kGenericSparseKernels[] = {
    // Constructors, accessors, resizes and copies.
    "_coalesced_",
    "_dimI",
    "_dimV",
    "_indices",
    "_values",
    "_nnz",
    "indices",
    "values",
    "is_coalesced",
    "sparse_dim",
    "dense_dim",
    "_sparse_coo_tensor_with_dims",
    "_sparse_coo_tensor_with_dims_and_tensors",
    "sparse_resize_",
    "sparse_resize_and_clear_",
    "resize_as_sparse_",
    "copy_sparse_to_sparse_",
    "copy_",
    "clone",
    "zero_",
    "zeros.out",
    "empty.memory_format",
    "empty_like",
    "_to_sparse",
    "_to_sparse.sparse_dim",
    // Shapes: new indices from the old ones.
    "permute",
    "unsqueeze",
    "cat",
    "narrow_copy",
    "_sparse_broadcast_to",
    "view_as_real",
    "view_as_complex",
    // Arithmetic on the values (subtraction is an addition, in ops/sparse_coo.cc).
    "sub.Tensor",
    "sub.out",
    "sub_.Tensor",
    "div.Tensor",
    "div.Tensor_mode",
    "div.out",
    "div.out_mode",
    "div_.Tensor",
    "div_.Tensor_mode",
    "floor_divide",
    "floor_divide.out",
    "floor_divide_.Tensor",
    "pow.Tensor_Scalar",
    "pow.Tensor_Scalar_out",
    "neg",
    "neg.out",
    "neg_",
    "conj_physical.out",
    "threshold_backward",
    "threshold_backward.grad_input",
    "nan_to_num",
    "nan_to_num.out",
    "nan_to_num_",
    "isinf",
    "isnan",
    "isneginf",
    "isneginf.out",
    "isposinf",
    "isposinf.out",
    "signbit",
    "signbit.out",
    // Unary functions with f(0) = 0, applied to the coalesced values.
    "abs",
    "abs.out",
    "abs_",
    "asin",
    "asin.out",
    "asin_",
    "asinh",
    "asinh.out",
    "asinh_",
    "atan",
    "atan.out",
    "atan_",
    "atanh",
    "atanh.out",
    "atanh_",
    "ceil",
    "ceil.out",
    "ceil_",
    "deg2rad",
    "deg2rad.out",
    "deg2rad_",
    "erf",
    "erf.out",
    "erf_",
    "erfinv",
    "erfinv.out",
    "erfinv_",
    "expm1",
    "expm1.out",
    "expm1_",
    "floor",
    "floor.out",
    "floor_",
    "frac",
    "frac.out",
    "frac_",
    "log1p",
    "log1p.out",
    "log1p_",
    "rad2deg",
    "rad2deg.out",
    "rad2deg_",
    "relu",
    "relu_",
    "round",
    "round.out",
    "round_",
    "sgn",
    "sgn.out",
    "sgn_",
    "sign",
    "sign.out",
    "sign_",
    "sin",
    "sin.out",
    "sin_",
    "sinh",
    "sinh.out",
    "sinh_",
    "sqrt",
    "sqrt.out",
    "sqrt_",
    "tan",
    "tan.out",
    "tan_",
    "tanh",
    "tanh.out",
    "tanh_",
    "trunc",
    "trunc.out",
    "trunc_",
    // Reductions over the values, and a product that is a matmul.
    "sum",
    "sum.dim_IntList",
    "any",
    "native_norm",
    "native_norm.ScalarOpt_dim_dtype",
    "norm.ScalarOpt_dim",
    "norm.ScalarOpt_dim_dtype",
    "mv",
};

// Dense to sparse: the dense key's kernel (nonzero, unique_dim, index).
constexpr const char* kGenericDenseToSparseKernels[] = {"_to_sparse", "_to_sparse.sparse_dim"};

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::SparseCPU>(m, kGenericSparseKernels);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::CPU>(m, kGenericDenseToSparseKernels);
}

}  // namespace
}  // namespace torch_tpu::ops
