// Strided nested tensors (torch.nested's default layout, and the form the
// jagged layout's scaled_dot_product_attention converts to off CUDA) on tpu.
// A NestedTensorImpl over a tpu buffer dispatches to NestedTensorPrivateUse1.
// PyTorch's own nested kernels for the operators below work on any device:
// they read only the nested sizes, strides and offsets, which are CPU
// tensors, and do the arithmetic with ATen operators on the buffer, which
// then dispatch to tpu. So each operator here runs its CPU kernel (the
// kernel is picked by the key; the work inside dispatches on the tensors).
// Left out, because their CPU kernels read the buffer's memory on the host
// or call CPU-only kernels: sum over a dim and its backward, layer norm and
// its backward, and the transformer encoder's fused kernels
// (_transform_bias_rescale_qkv, _native_multi_head_attention,
// _transformer_encoder_layer_fwd). They raise NotImplementedError naming the
// operator and the NestedTensortpu backend, as an operator without a nested
// kernel does on CPU.
#include <torch/library.h>

#include "ops/cpu_kernel_reuse.h"

namespace torch_tpu::ops {
namespace {

constexpr const char* kGenericNestedKernels[] = {
    // Metadata, views and copies.
    "_nested_tensor_size",
    "_nested_tensor_strides",
    "_nested_tensor_storage_offsets",
    "_nested_select_backward",
    "_nested_from_padded_and_nested_example",
    "_to_copy",
    "alias",
    "chunk",
    "clone",
    "copy_",
    "detach",
    "empty_like",
    "fill_.Scalar",
    "fill_.Tensor",
    "is_same_size",
    "narrow",
    "ones_like",
    "select.int",
    "split_with_sizes",
    "squeeze",
    "squeeze.dim",
    "squeeze.dims",
    "to_padded_tensor",
    "transpose.int",
    "unbind.int",
    "unsqueeze",
    "values",
    "view",
    "zero_",
    "cat",
    // Pointwise.
    "abs",
    "abs_",
    "add.Tensor",
    "add_.Tensor",
    "cos",
    "div.Scalar",
    "div.Tensor",
    "eq.Scalar",
    "eq.Tensor",
    "ge.Scalar",
    "gelu",
    "gelu_",
    "gelu_backward",
    "gt.Scalar",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "logical_not",
    "logical_not_",
    "masked_fill.Scalar",
    "mul.Scalar",
    "mul.Tensor",
    "mul_.Scalar",
    "mul_.Tensor",
    "neg",
    "neg_",
    "relu",
    "relu_",
    "sgn",
    "sgn_",
    "silu",
    "silu_",
    "silu_backward",
    "sin",
    "sqrt",
    "sub.Tensor",
    "tanh",
    "tanh_",
    "threshold_backward",
    "where.self",
    "where.self_out",
    "all.dim",
    // Products, softmax, dropout, embedding.
    "bmm",
    "matmul",
    "matmul.out",
    "matmul_backward",
    "linear",
    "linear_backward",
    "_softmax",
    "_safe_softmax",
    "_softmax_backward_data",
    "_nested_tensor_softmax_with_shape",
    "native_dropout",
    "native_dropout_backward",
    "normal_",
    "embedding",
};

// The constructors that take a dense tpu tensor (a padded batch, a buffer)
// dispatch on its dense key; their CPU kernels are as generic.
constexpr const char* kGenericDenseKernels[] = {
    "_nested_from_padded",
    "_nested_view_from_buffer",
    "_nested_tensor_from_mask",
};

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::NestedTensorCPU>(m, kGenericNestedKernels);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  reuse_kernels_of<c10::DispatchKey::CPU>(m, kGenericDenseKernels);
}

}  // namespace
}  // namespace torch_tpu::ops
