// The registration table: which ATen operator runs which tpu kernel.
// Kernels live in the other files of ops/; this file only wires them up.
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/binary_cross_entropy_with_logits_native.h>
#include <ATen/ops/constant_pad_nd_native.h>
#include <ATen/ops/select_backward_native.h>
#include <ATen/ops/slice_backward_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "ops/amp_kernels.h"
#include "ops/ctc_loss_kernels.h"
#include "ops/data_dependent_kernels.h"
#include "ops/distance_kernels.h"
#include "ops/elementwise.h"
#include "ops/embedding_bag_kernels.h"
#include "ops/fft_kernels.h"
#include "ops/foreach_ops.h"
#include "ops/histogram_kernels.h"
#include "ops/im2col_kernels.h"
#include "ops/index_composite_kernels.h"
#include "ops/index_kernels.h"
#include "ops/index_write_kernels.h"
#include "ops/jagged_kernels.h"
#include "ops/kernels.h"
#include "ops/ldexp_kernels.h"
#include "ops/linalg_kernels.h"
#include "ops/margin_loss_kernels.h"
#include "ops/membership_kernels.h"
#include "ops/missing_op.h"
#include "ops/optimizer_kernels.h"
#include "ops/order_stat_kernels.h"
#include "ops/parameterized_draw_kernels.h"
#include "ops/reduction.h"
#include "ops/reduction_variant_kernels.h"
#include "ops/resample_kernels.h"
#include "ops/rnn_cell_kernels.h"
#include "ops/scaled_mm_kernels.h"
#include "ops/search_kernels.h"
#include "ops/sequence_kernels.h"
#include "ops/segment_reduce_kernels.h"
#include "ops/shape_kernels.h"
#include "ops/shift_operator_kernels.h"
#include "ops/sparse_compressed_kernels.h"
#include "ops/sparse_coo_kernels.h"
#include "ops/strict_ops_in_one_region.h"
#include "ops/vector_product_kernels.h"
#include "ops/weight_norm_kernels.h"

namespace torch_tpu::ops {

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&missing_op>());
}

// Answered above autograd, where the composite kernel would otherwise give
// c10's answer (false between CPU and tpu).
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // Creation and fills.
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("_efficientzerotensor", TORCH_FN(efficient_zero_tensor));
  m.impl("fill_.Scalar", TORCH_FN(fill_scalar));
  m.impl("fill_.Tensor", TORCH_FN(fill_tensor_value));
  m.impl("zero_", TORCH_FN(zero_));
  m.impl("arange.start_out", TORCH_FN(arange_out));
  m.impl("linspace.out", TORCH_FN(linspace_out));
  m.impl("logspace.out", TORCH_FN(logspace_out));
  // Copies and host reads.
  m.impl("copy_", TORCH_FN(copy_));
  m.impl("clone", TORCH_FN(clone));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  // Storage management.
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage));
  m.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_tensor));
  m.impl("set_", TORCH_FN(set_empty));
  // Views: metadata-only, shared with CPU. Reads and writes through them are
  // lowered from the (sizes, strides, offset) they produce.
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  // Reductions, selection, joins.
  m.impl("masked_select", TORCH_FN(masked_select));
  m.impl("masked_select.out", TORCH_FN(masked_select_out));
  m.impl("cat", TORCH_FN(cat));
  m.impl("cat.out", TORCH_FN(cat_out));
  // Matrix products.
  m.impl("mm", TORCH_FN(mm));
  m.impl("_scaled_dot_product_fused_attention_overrideable",
         TORCH_FN(scaled_dot_product_attention_overrideable));
  m.impl("mm.out", TORCH_FN(mm_out));
  m.impl("bmm", TORCH_FN(bmm));
  m.impl("bmm.out", TORCH_FN(bmm_out));
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("addmm.out", TORCH_FN(addmm_out));
  m.impl("addmm_", TORCH_FN(addmm_));
  m.impl("baddbmm", TORCH_FN(baddbmm));
  m.impl("baddbmm.out", TORCH_FN(baddbmm_out));
  m.impl("baddbmm_", TORCH_FN(baddbmm_));
  m.impl("mv", TORCH_FN(mv));
  m.impl("mv.out", TORCH_FN(mv_out));
  m.impl("dot", TORCH_FN(dot));
  // Neural-network ops.
  m.impl("_softmax", TORCH_FN(softmax));
  m.impl("_softmax.out", TORCH_FN(softmax_out));
  m.impl("_log_softmax", TORCH_FN(log_softmax));
  m.impl("_log_softmax.out", TORCH_FN(log_softmax_out));
  m.impl("_softmax_backward_data", TORCH_FN(softmax_backward));
  m.impl("_log_softmax_backward_data", TORCH_FN(log_softmax_backward));
  m.impl("_softmax_backward_data.out", TORCH_FN(softmax_backward_out));
  m.impl("_log_softmax_backward_data.out", TORCH_FN(log_softmax_backward_out));
  m.impl("nll_loss_forward", TORCH_FN(nll_loss_forward));
  m.impl("nll_loss_backward", TORCH_FN(nll_loss_backward));
  m.impl("mse_loss", TORCH_FN(InOneRegion<&mse_loss>::call));
  m.impl("mse_loss_backward", TORCH_FN(InOneRegion<&mse_loss_backward>::call));
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
  m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
  m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
  m.impl("_native_batch_norm_legit", TORCH_FN(native_batch_norm_legit));
  m.impl("_native_batch_norm_legit.no_stats", TORCH_FN(native_batch_norm_legit_no_stats));
  m.impl("_batch_norm_with_update", TORCH_FN(batch_norm_with_update));
  m.impl("_batch_norm_no_update", TORCH_FN(batch_norm_no_update));
  m.impl("batch_norm_backward", TORCH_FN(batch_norm_backward));
  m.impl("native_layer_norm", TORCH_FN(native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(native_layer_norm_backward));
  m.impl("native_group_norm", TORCH_FN(native_group_norm));
  m.impl("native_group_norm_backward", TORCH_FN(native_group_norm_backward));
  m.impl("max_pool2d_with_indices.out", TORCH_FN(max_pool2d_with_indices_out));
  m.impl("max_pool2d_with_indices_backward.grad_input",
         TORCH_FN(max_pool2d_with_indices_backward_out));
  m.impl("avg_pool2d.out", TORCH_FN(avg_pool2d_out));
  m.impl("avg_pool2d_backward.grad_input", TORCH_FN(avg_pool2d_backward_out));
  m.impl("max_pool3d_with_indices", TORCH_FN(max_pool3d_with_indices));
  m.impl("max_pool3d_with_indices.out", TORCH_FN(max_pool3d_with_indices_out));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(max_pool3d_with_indices_backward));
  m.impl("max_pool3d_with_indices_backward.grad_input",
         TORCH_FN(max_pool3d_with_indices_backward_out));
  m.impl("avg_pool3d.out", TORCH_FN(avg_pool3d_out));
  m.impl("avg_pool3d_backward.grad_input", TORCH_FN(avg_pool3d_backward_out));
  m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(adaptive_avg_pool2d_backward));
  m.impl("adaptive_max_pool2d.out", TORCH_FN(adaptive_max_pool2d_out));
  m.impl("adaptive_max_pool2d_backward.grad_input", TORCH_FN(adaptive_max_pool2d_backward_out));
  m.impl("adaptive_max_pool3d.out", TORCH_FN(adaptive_max_pool3d_out));
  m.impl("adaptive_max_pool3d_backward.grad_input", TORCH_FN(adaptive_max_pool3d_backward_out));
  m.impl("fractional_max_pool2d.output", TORCH_FN(fractional_max_pool2d_out));
  m.impl("fractional_max_pool3d.output", TORCH_FN(fractional_max_pool3d_out));
  m.impl("fractional_max_pool2d_backward.grad_input", TORCH_FN(fractional_max_pool2d_backward_out));
  m.impl("fractional_max_pool3d_backward.grad_input", TORCH_FN(fractional_max_pool3d_backward_out));
  m.impl("fractional_max_pool3d_backward", TORCH_FN(fractional_max_pool3d_backward));
  m.impl("max_unpool2d", TORCH_FN(max_unpool2d));
  m.impl("max_unpool2d.out", TORCH_FN(max_unpool2d_out));
  m.impl("max_unpool3d", TORCH_FN(max_unpool3d));
  m.impl("max_unpool3d.out", TORCH_FN(max_unpool3d_out));
  m.impl("triu_indices", TORCH_FN(triu_indices));
  m.impl("tril_indices", TORCH_FN(tril_indices));
  m.impl("nonzero_static", TORCH_FN(nonzero_static));
  m.impl("nonzero_static.out", TORCH_FN(nonzero_static_out));
  m.impl("index_reduce", TORCH_FN(index_reduce));
  m.impl("embedding_renorm_", TORCH_FN(ops::embedding_renorm_));
  m.impl("index_reduce_", TORCH_FN(index_reduce_));
  m.impl("index_reduce.out", TORCH_FN(index_reduce_out));
  m.impl("multi_margin_loss", TORCH_FN(multi_margin_loss));
  m.impl("multi_margin_loss_backward", TORCH_FN(multi_margin_loss_backward));
  m.impl("multilabel_margin_loss_forward", TORCH_FN(multilabel_margin_loss_forward));
  m.impl("multilabel_margin_loss_backward", TORCH_FN(multilabel_margin_loss_backward));
  m.impl("histogram.bin_ct", TORCH_FN(histogram_bin_ct));
  m.impl("histogram.bins_tensor", TORCH_FN(histogram_bins_tensor));
  m.impl("_histogramdd_bin_edges", TORCH_FN(histogramdd_bin_edges));
  m.impl("_histogramdd_from_bin_cts", TORCH_FN(histogramdd_from_bin_cts));
  m.impl("_histogramdd_from_bin_tensors", TORCH_FN(histogramdd_from_bin_tensors));
  m.impl("segment_reduce", TORCH_FN(ops::segment_reduce));
  m.impl("_segment_reduce_backward", TORCH_FN(segment_reduce_backward));
  m.impl("_convert_indices_from_coo_to_csr", TORCH_FN(convert_indices_from_coo_to_csr));
  m.impl("_convert_indices_from_coo_to_csr.out", TORCH_FN(convert_indices_from_coo_to_csr_out));
  m.impl("_convert_indices_from_csr_to_coo", TORCH_FN(convert_indices_from_csr_to_coo));
  m.impl("_convert_indices_from_csr_to_coo.out", TORCH_FN(convert_indices_from_csr_to_coo_out));
  m.impl("_jagged_to_padded_dense_forward", TORCH_FN(jagged_to_padded_dense));
  m.impl("_padded_dense_to_jagged_forward", TORCH_FN(padded_dense_to_jagged));
  m.impl("vdot", TORCH_FN(vdot));
  m.impl("vdot.out", TORCH_FN(vdot_out));
  m.impl("complex.out", TORCH_FN(complex_out));
  m.impl("polar.out", TORCH_FN(polar_out));
  m.impl("linalg_cholesky_ex.L", TORCH_FN(linalg_cholesky_ex_out));
  m.impl("cholesky", TORCH_FN(ops::cholesky));
  m.impl("cholesky.out", TORCH_FN(cholesky_out));
  m.impl("_cholesky_solve_helper", TORCH_FN(cholesky_solve_helper));
  m.impl("cholesky_inverse", TORCH_FN(ops::cholesky_inverse));
  m.impl("cholesky_inverse.out", TORCH_FN(cholesky_inverse_out));
  m.impl("linalg_solve_triangular", TORCH_FN(ops::linalg_solve_triangular));
  m.impl("linalg_solve_triangular.out", TORCH_FN(linalg_solve_triangular_out));
  m.impl("triangular_solve.X", TORCH_FN(triangular_solve_out));
  m.impl("linalg_lu_factor_ex.out", TORCH_FN(linalg_lu_factor_ex_out));
  m.impl("linalg_lu_solve.out", TORCH_FN(linalg_lu_solve_out));
  m.impl("lu_unpack.out", TORCH_FN(lu_unpack_out));
  m.impl("linalg_lu.out", TORCH_FN(linalg_lu_out));
  m.impl("linalg_qr.out", TORCH_FN(linalg_qr_out));
  m.impl("geqrf", TORCH_FN(ops::geqrf));
  m.impl("linalg_matrix_exp", TORCH_FN(ops::linalg_matrix_exp));
  m.impl("geqrf.a", TORCH_FN(geqrf_out));
  m.impl("linalg_householder_product", TORCH_FN(ops::linalg_householder_product));
  m.impl("linalg_householder_product.out", TORCH_FN(linalg_householder_product_out));
  m.impl("ormqr", TORCH_FN(ops::ormqr));
  m.impl("ormqr.out", TORCH_FN(ormqr_out));
  m.impl("_linalg_eigh.eigenvalues", TORCH_FN(linalg_eigh_out));
  m.impl("linalg_eig", TORCH_FN(ops::linalg_eig));
  m.impl("linalg_eig.out", TORCH_FN(linalg_eig_out));
  m.impl("_linalg_eigvals", TORCH_FN(ops::linalg_eigvals));
  m.impl("linalg_eigvals.out", TORCH_FN(linalg_eigvals_out));
  m.impl("_linalg_svd.U", TORCH_FN(linalg_svd_out));
  m.impl("linalg_lstsq.out", TORCH_FN(linalg_lstsq_out));
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(thnn_fused_lstm_cell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(thnn_fused_lstm_cell_backward_impl));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(thnn_fused_gru_cell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(thnn_fused_gru_cell_backward));
  m.impl("_linalg_solve_ex.result", TORCH_FN(linalg_solve_ex_out));
  m.impl("linalg_inv_ex.inverse", TORCH_FN(linalg_inv_ex_out));
  m.impl("_linalg_det.result", TORCH_FN(linalg_det_out));
  m.impl("_linalg_slogdet.sign", TORCH_FN(linalg_slogdet_out));
  m.impl("linalg_cross", TORCH_FN(linalg_cross));
  m.impl("linalg_cross.out", TORCH_FN(linalg_cross_out));
  m.impl("addbmm", TORCH_FN(addbmm));
  m.impl("addbmm.out", TORCH_FN(addbmm_out));
  m.impl("addbmm_", TORCH_FN(addbmm_));
  m.impl("_prelu_kernel_backward", TORCH_FN(InOneRegion<&prelu_kernel_backward>::call));
  m.impl("channel_shuffle", TORCH_FN(channel_shuffle));
  m.impl("rsub.Tensor", TORCH_FN(rsub_tensor));
  m.impl("rsub.Tensor_out", TORCH_FN(rsub_tensor_out));
  m.impl("angle", TORCH_FN(InOneRegion<&angle>::call));
  m.impl("angle.out", TORCH_FN(InOneRegion<&angle_out>::call));
  m.impl("renorm", TORCH_FN(InOneRegion<&renorm>::call));
  m.impl("renorm_", TORCH_FN(InOneRegion<&renorm_>::call));
  m.impl("renorm.out", TORCH_FN(InOneRegion<&renorm_out>::call));
  m.impl("record_stream", TORCH_FN(record_stream));
  m.impl("_assert_async", TORCH_FN(assert_async));
  m.impl("_assert_async.msg", TORCH_FN(assert_async_msg));
  m.impl("grid_sampler_2d", TORCH_FN(grid_sampler_2d));
  m.impl("grid_sampler_2d_backward", TORCH_FN(grid_sampler_2d_backward));
  m.impl("grid_sampler_3d", TORCH_FN(grid_sampler_3d));
  m.impl("grid_sampler_3d_backward", TORCH_FN(grid_sampler_3d_backward));
  m.impl("_adaptive_avg_pool3d", TORCH_FN(adaptive_avg_pool3d));
  m.impl("_adaptive_avg_pool3d_backward", TORCH_FN(adaptive_avg_pool3d_backward));
  m.impl("upsample_nearest1d.out", TORCH_FN(upsample_nearest1d_out));
  m.impl("upsample_nearest1d_backward.grad_input", TORCH_FN(upsample_nearest1d_backward_out));
  m.impl("upsample_nearest2d.out", TORCH_FN(upsample_nearest2d_out));
  m.impl("upsample_nearest2d_backward.grad_input", TORCH_FN(upsample_nearest2d_backward_out));
  m.impl("upsample_nearest3d.out", TORCH_FN(upsample_nearest3d_out));
  m.impl("upsample_nearest3d_backward.grad_input", TORCH_FN(upsample_nearest3d_backward_out));
  m.impl("_upsample_nearest_exact1d.out", TORCH_FN(upsample_nearest_exact1d_out));
  m.impl("_upsample_nearest_exact1d_backward.grad_input",
         TORCH_FN(upsample_nearest_exact1d_backward_out));
  m.impl("_upsample_nearest_exact2d.out", TORCH_FN(upsample_nearest_exact2d_out));
  m.impl("_upsample_nearest_exact2d_backward.grad_input",
         TORCH_FN(upsample_nearest_exact2d_backward_out));
  m.impl("_upsample_nearest_exact3d.out", TORCH_FN(upsample_nearest_exact3d_out));
  m.impl("_upsample_nearest_exact3d_backward.grad_input",
         TORCH_FN(upsample_nearest_exact3d_backward_out));
  m.impl("upsample_linear1d.out", TORCH_FN(upsample_linear1d_out));
  m.impl("upsample_linear1d_backward.grad_input", TORCH_FN(upsample_linear1d_backward_out));
  m.impl("upsample_bilinear2d.out", TORCH_FN(upsample_bilinear2d_out));
  m.impl("upsample_bilinear2d_backward.grad_input", TORCH_FN(upsample_bilinear2d_backward_out));
  m.impl("upsample_bicubic2d.out", TORCH_FN(upsample_bicubic2d_out));
  m.impl("upsample_bicubic2d_backward.grad_input", TORCH_FN(upsample_bicubic2d_backward_out));
  m.impl("_upsample_bilinear2d_aa.out", TORCH_FN(upsample_bilinear2d_aa_out));
  m.impl("_upsample_bilinear2d_aa_backward.grad_input",
         TORCH_FN(upsample_bilinear2d_aa_backward_out));
  m.impl("_upsample_bicubic2d_aa.out", TORCH_FN(upsample_bicubic2d_aa_out));
  m.impl("_upsample_bicubic2d_aa_backward.grad_input",
         TORCH_FN(upsample_bicubic2d_aa_backward_out));
  m.impl("upsample_trilinear3d.out", TORCH_FN(upsample_trilinear3d_out));
  m.impl("upsample_trilinear3d_backward.grad_input", TORCH_FN(upsample_trilinear3d_backward_out));
  m.impl("im2col", TORCH_FN(im2col));
  m.impl("im2col.out", TORCH_FN(im2col_out));
  m.impl("col2im", TORCH_FN(col2im));
  m.impl("col2im.out", TORCH_FN(col2im_out));
  m.impl("uniform_", TORCH_FN(uniform_));
  m.impl("normal_", TORCH_FN(normal_));
  m.impl("normal.Tensor_float", TORCH_FN(normal_tensor_float));
  m.impl("normal.Tensor_float_out", TORCH_FN(normal_tensor_float_out));
  m.impl("normal.float_Tensor", TORCH_FN(normal_float_tensor));
  m.impl("normal.float_Tensor_out", TORCH_FN(normal_float_tensor_out));
  m.impl("normal.Tensor_Tensor", TORCH_FN(normal_tensor_tensor));
  m.impl("normal.Tensor_Tensor_out", TORCH_FN(normal_tensor_tensor_out));
  m.impl("_standard_gamma", TORCH_FN(standard_gamma));
  m.impl("_standard_gamma_grad", TORCH_FN(standard_gamma_grad));
  m.impl("_sample_dirichlet", TORCH_FN(sample_dirichlet));
  m.impl("poisson", TORCH_FN(ops::poisson));
  m.impl("binomial", TORCH_FN(ops::binomial));
  m.impl("_dirichlet_grad", TORCH_FN(dirichlet_grad));
  m.impl("exponential_", TORCH_FN(exponential_));
  m.impl("cauchy_", TORCH_FN(cauchy_));
  m.impl("log_normal_", TORCH_FN(log_normal_));
  m.impl("geometric_", TORCH_FN(geometric_));
  m.impl("rrelu_with_noise", TORCH_FN(rrelu_with_noise));
  m.impl("rrelu_with_noise_", TORCH_FN(rrelu_with_noise_));
  m.impl("rrelu_with_noise.out", TORCH_FN(rrelu_with_noise_out));
  m.impl("rrelu_with_noise_backward", TORCH_FN(rrelu_with_noise_backward));
  m.impl("bernoulli_.float", TORCH_FN(bernoulli_float_));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulli_tensor_));
  m.impl("random_.from", TORCH_FN(random_from_));
  m.impl("random_.to", TORCH_FN(random_to_));
  m.impl("random_", TORCH_FN(random_));
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
  m.impl("randperm.generator_out", TORCH_FN(randperm_out));
  m.impl("multinomial", TORCH_FN(multinomial));
  // Indexing.
  m.impl("index_select", TORCH_FN(index_select));
  m.impl("index_select.out", TORCH_FN(index_select_out));
  m.impl("gather.out", TORCH_FN(gather_out));
  m.impl("scatter.src_out", TORCH_FN(scatter_src_out));
  m.impl("scatter.value_out", TORCH_FN(scatter_value_out));
  m.impl("scatter.reduce_out", TORCH_FN(scatter_reduce_out));
  m.impl("scatter.value_reduce_out", TORCH_FN(scatter_value_reduce_out));
  m.impl("scatter_add.out", TORCH_FN(scatter_add_out));
  m.impl("scatter_reduce.two_out", TORCH_FN(scatter_reduce_two_out));
  m.impl("index_add.out", TORCH_FN(index_add_out));
  m.impl("embedding", TORCH_FN(embedding));
  m.impl("embedding_dense_backward", TORCH_FN(embedding_dense_backward));
  m.impl("_embedding_bag", TORCH_FN(embedding_bag_forward));
  m.impl("_embedding_bag_forward_only", TORCH_FN(embedding_bag_forward));
  m.impl("_embedding_bag_backward", TORCH_FN(embedding_bag_backward));
  m.impl("_embedding_bag_dense_backward", TORCH_FN(embedding_bag_dense_backward));
  m.impl("_embedding_bag_per_sample_weights_backward",
         TORCH_FN(embedding_bag_per_sample_weights_backward));
  m.impl("index.Tensor", TORCH_FN(index));
  m.impl("index.Tensor_out", TORCH_FN(index_out));
  m.impl("_index_put_impl_", TORCH_FN(index_put_impl_));
  m.impl("take", TORCH_FN(take));
  m.impl("take.out", TORCH_FN(take_out));
  m.impl("put_", TORCH_FN(put_));
  m.impl("nonzero", TORCH_FN(nonzero));
  m.impl("nonzero.out", TORCH_FN(nonzero_out));
  // Ordering, scans, structure.
  m.impl("sort.values_stable", TORCH_FN(sort_stable_out));
  m.impl("topk.values", TORCH_FN(topk_out));
  m.impl("cumsum.out", TORCH_FN(cumsum_out));
  m.impl("_cummax_helper", TORCH_FN(cummax_helper));
  m.impl("_cummin_helper", TORCH_FN(cummin_helper));
  m.impl("cumprod.out", TORCH_FN(cumprod_out));
  m.impl("flip", TORCH_FN(flip));
  m.impl("roll", TORCH_FN(roll));
  m.impl("eye.m_out", TORCH_FN(eye_out));
  m.impl("eye.out", TORCH_FN(eye_n_out));
  m.impl("tril.out", TORCH_FN(tril_out));
  m.impl("triu.out", TORCH_FN(triu_out));
  // Composites of other tpu ops, each run as one program in Strict mode;
  // the first four are PyTorch's own composite kernels
  // (CompositeExplicitAutograd: zeros and a write into a slice or a select,
  // a fill and a copy, eleven elementwise steps).
  m.impl("slice_backward", TORCH_FN(InOneRegion<&at::native::slice_backward>::call));
  m.impl("select_backward", TORCH_FN(InOneRegion<&at::native::select_backward_symint>::call));
  m.impl("constant_pad_nd", TORCH_FN(InOneRegion<&at::native::constant_pad_nd>::call));
  m.impl("binary_cross_entropy_with_logits",
         TORCH_FN(InOneRegion<&at::native::binary_cross_entropy_with_logits>::call));
  m.impl("count_nonzero.dim_IntList", TORCH_FN(InOneRegion<&count_nonzero>::call));
  m.impl("addmv.out", TORCH_FN(InOneRegion<&addmv_out>::call));
  m.impl("trace", TORCH_FN(trace));
  m.impl("log_sigmoid_forward", TORCH_FN(InOneRegion<&log_sigmoid_forward>::call));
  m.impl("log_sigmoid_backward", TORCH_FN(InOneRegion<&log_sigmoid_backward>::call));
  m.impl("smooth_l1_loss.out", TORCH_FN(InOneRegion<&smooth_l1_loss_out>::call));
  m.impl("smooth_l1_loss_backward.grad_input", TORCH_FN(InOneRegion<&smooth_l1_loss_backward_out>::call));
  m.impl("nll_loss2d_forward", TORCH_FN(InOneRegion<&nll_loss2d_forward>::call));
  m.impl("nll_loss2d_backward", TORCH_FN(InOneRegion<&nll_loss2d_backward>::call));
  m.impl("repeat_interleave.Tensor", TORCH_FN(repeat_interleave_counts));
  m.impl("huber_loss", TORCH_FN(InOneRegion<&huber_loss>::call));
  m.impl("huber_loss_backward", TORCH_FN(InOneRegion<&huber_loss_backward>::call));
  m.impl("binary_cross_entropy", TORCH_FN(InOneRegion<&binary_cross_entropy>::call));
  m.impl("binary_cross_entropy_backward", TORCH_FN(InOneRegion<&binary_cross_entropy_backward>::call));
  m.impl("reflection_pad1d.out", TORCH_FN(InOneRegion<&reflection_pad_out>::call));
  m.impl("reflection_pad1d_backward.grad_input", TORCH_FN(InOneRegion<&reflection_pad_backward_out>::call));
  m.impl("reflection_pad2d.out", TORCH_FN(InOneRegion<&reflection_pad_out>::call));
  m.impl("reflection_pad2d_backward.grad_input", TORCH_FN(InOneRegion<&reflection_pad_backward_out>::call));
  m.impl("reflection_pad3d.out", TORCH_FN(InOneRegion<&reflection_pad_out>::call));
  m.impl("reflection_pad3d_backward.grad_input", TORCH_FN(InOneRegion<&reflection_pad_backward_out>::call));
  m.impl("replication_pad1d.out", TORCH_FN(InOneRegion<&replication_pad_out>::call));
  m.impl("replication_pad1d_backward.grad_input", TORCH_FN(InOneRegion<&replication_pad_backward_out>::call));
  m.impl("replication_pad2d.out", TORCH_FN(InOneRegion<&replication_pad_out>::call));
  m.impl("replication_pad2d_backward.grad_input", TORCH_FN(InOneRegion<&replication_pad_backward_out>::call));
  m.impl("replication_pad3d.out", TORCH_FN(InOneRegion<&replication_pad_out>::call));
  m.impl("replication_pad3d_backward.grad_input", TORCH_FN(InOneRegion<&replication_pad_backward_out>::call));
  m.impl("reflection_pad1d", TORCH_FN(InOneRegion<&reflection_pad>::call));
  m.impl("reflection_pad1d_backward", TORCH_FN(InOneRegion<&reflection_pad_backward>::call));
  m.impl("reflection_pad2d", TORCH_FN(InOneRegion<&reflection_pad>::call));
  m.impl("reflection_pad2d_backward", TORCH_FN(InOneRegion<&reflection_pad_backward>::call));
  m.impl("reflection_pad3d", TORCH_FN(InOneRegion<&reflection_pad>::call));
  m.impl("reflection_pad3d_backward", TORCH_FN(InOneRegion<&reflection_pad_backward>::call));
  m.impl("replication_pad1d", TORCH_FN(InOneRegion<&replication_pad>::call));
  m.impl("replication_pad1d_backward", TORCH_FN(InOneRegion<&replication_pad_backward>::call));
  m.impl("replication_pad2d", TORCH_FN(InOneRegion<&replication_pad>::call));
  m.impl("replication_pad2d_backward", TORCH_FN(InOneRegion<&replication_pad_backward>::call));
  m.impl("replication_pad3d", TORCH_FN(InOneRegion<&replication_pad>::call));
  m.impl("replication_pad3d_backward", TORCH_FN(InOneRegion<&replication_pad_backward>::call));
  // Data-dependent result sizes (nonzero, masked_select and
  // repeat_interleave.Tensor are registered above).
  m.impl("_unique2", TORCH_FN(unique2));
  m.impl("_unique", TORCH_FN(unique));
  m.impl("unique_consecutive", TORCH_FN(unique_consecutive));
  m.impl("unique_dim", TORCH_FN(unique_dim));
  m.impl("unique_dim_consecutive", TORCH_FN(unique_dim_consecutive));
  m.impl("bincount", TORCH_FN(bincount));
  // Writes at an index or a mask (the functional and in-place forms of
  // index_copy, and the functional forms of the others, are composites).
  m.impl("index_copy.out", TORCH_FN(index_copy_out));
  m.impl("index_fill_.int_Scalar", TORCH_FN(index_fill_scalar_));
  m.impl("index_fill_.int_Tensor", TORCH_FN(index_fill_tensor_));
  m.impl("masked_scatter_", TORCH_FN(masked_scatter_));
  // Reductions outside the boxed reduction kernel.
  m.impl("aminmax.out", TORCH_FN(aminmax_out));
  m.impl("nansum", TORCH_FN(nansum));
  m.impl("nansum.out", TORCH_FN(nansum_out));
  m.impl("var_mean.correction", TORCH_FN(var_mean));
  m.impl("std_mean.correction", TORCH_FN(std_mean));
  m.impl("equal", TORCH_FN(equal));
  m.impl("_logcumsumexp", TORCH_FN(logcumsumexp));
  m.impl("_logcumsumexp.out", TORCH_FN(logcumsumexp_out));
  // Order statistics.
  m.impl("median", TORCH_FN(median));
  m.impl("nanmedian", TORCH_FN(nanmedian));
  m.impl("median.dim_values", TORCH_FN(median_dim_out));
  m.impl("nanmedian.dim_values", TORCH_FN(nanmedian_dim_out));
  m.impl("kthvalue.values", TORCH_FN(kthvalue_out));
  m.impl("mode", TORCH_FN(mode));
  // (CPU's mode.values accepts only CPU, CUDA and XPU tensors.)
  m.impl("mode.values", TORCH_FN(mode_out));
  // Searching sorted boundaries.
  m.impl("isin.Tensor_Tensor", TORCH_FN(InOneRegion<&isin>::call));
  m.impl("isin.Tensor_Tensor_out", TORCH_FN(InOneRegion<&isin_out>::call));
  m.impl("isin.Tensor_Scalar", TORCH_FN(InOneRegion<&isin_tensor_scalar>::call));
  m.impl("isin.Tensor_Scalar_out", TORCH_FN(InOneRegion<&isin_tensor_scalar_out>::call));
  m.impl("isin.Scalar_Tensor", TORCH_FN(InOneRegion<&isin_scalar_tensor>::call));
  m.impl("isin.Scalar_Tensor_out", TORCH_FN(InOneRegion<&isin_scalar_tensor_out>::call));
  m.impl("glu.out", TORCH_FN(InOneRegion<&glu_out>::call));
  m.impl("glu_backward", TORCH_FN(InOneRegion<&glu_backward>::call));
  m.impl("unfold_backward", TORCH_FN(InOneRegion<&unfold_backward>::call));
  m.impl("glu_backward.grad_input", TORCH_FN(InOneRegion<&glu_backward_out>::call));
  m.impl("norm.out", TORCH_FN(norm_out));
  m.impl("norm.dtype_out", TORCH_FN(norm_dtype_out));
  m.impl("norm.Scalar_out", TORCH_FN(norm_scalar_out));
  m.impl("norm.ScalarOpt_dtype_out", TORCH_FN(norm_scalar_opt_dtype_out));
  m.impl("histc", TORCH_FN(histc));
  m.impl("histc.out", TORCH_FN(histc_out));
  m.impl("_pdist_forward", TORCH_FN(pdist_forward));
  m.impl("_pdist_backward", TORCH_FN(pdist_backward));
  m.impl("_cdist_forward", TORCH_FN(cdist_forward));
  m.impl("_cdist_backward", TORCH_FN(cdist_backward));
  m.impl("_fft_c2c", TORCH_FN(fft_c2c));
  m.impl("_fft_c2c.out", TORCH_FN(fft_c2c_out));
  m.impl("_fft_r2c", TORCH_FN(fft_r2c));
  m.impl("_fft_r2c.out", TORCH_FN(fft_r2c_out));
  m.impl("_fft_c2r", TORCH_FN(fft_c2r));
  m.impl("_fft_c2r.out", TORCH_FN(fft_c2r_out));
  m.impl("_ctc_loss", TORCH_FN(ctc_loss));
  m.impl("_ctc_loss.Tensor", TORCH_FN(ctc_loss_tensor));
  m.impl("_ctc_loss_backward", TORCH_FN(ctc_loss_backward));
  m.impl("_ctc_loss_backward.Tensor", TORCH_FN(ctc_loss_backward_tensor));
  m.impl("_weight_norm_interface", TORCH_FN(weight_norm_interface));
  m.impl("_weight_norm_interface_backward", TORCH_FN(weight_norm_interface_backward));
  m.impl("searchsorted.Tensor", TORCH_FN(searchsorted));
  m.impl("searchsorted.Tensor_out", TORCH_FN(searchsorted_out));
  m.impl("searchsorted.Scalar", TORCH_FN(searchsorted_scalar));
  m.impl("searchsorted.Scalar_out", TORCH_FN(searchsorted_scalar_out));
  m.impl("bucketize.Tensor", TORCH_FN(bucketize));
  m.impl("bucketize.Tensor_out", TORCH_FN(bucketize_out));
  m.impl("bucketize.Scalar", TORCH_FN(bucketize_scalar));
  // Python's << and >>.
  m.impl("__lshift__.Tensor", TORCH_FN(lshift_tensor));
  m.impl("__lshift__.Scalar", TORCH_FN(lshift_scalar));
  m.impl("__ilshift__.Tensor", TORCH_FN(ilshift_tensor));
  m.impl("__ilshift__.Scalar", TORCH_FN(ilshift_scalar));
  m.impl("__rshift__.Tensor", TORCH_FN(rshift_tensor));
  m.impl("__rshift__.Scalar", TORCH_FN(rshift_scalar));
  m.impl("__irshift__.Tensor", TORCH_FN(irshift_tensor));
  m.impl("__irshift__.Scalar", TORCH_FN(irshift_scalar));
  m.impl("_fused_adam_", TORCH_FN(fused_adam_));
  m.impl("_fused_adam_.tensor_lr", TORCH_FN(fused_adam_tensor_lr_));
  m.impl("_fused_adamw_", TORCH_FN(fused_adamw_));
  m.impl("_fused_adamw_.tensor_lr", TORCH_FN(fused_adamw_tensor_lr_));
  m.impl("_fused_sgd_", TORCH_FN(fused_sgd_));
  m.impl("_fused_sgd_.tensor_lr", TORCH_FN(fused_sgd_tensor_lr_));
  m.impl("_fused_adagrad_", TORCH_FN(fused_adagrad_));
  m.impl("_fused_adagrad_.tensor_lr", TORCH_FN(fused_adagrad_tensor_lr_));
  register_foreach_ops(m);
  m.impl("_amp_foreach_non_finite_check_and_unscale_",
         TORCH_FN(amp_foreach_non_finite_check_and_unscale_));
  m.impl("_amp_update_scale_", TORCH_FN(amp_update_scale_));
  m.impl("_scaled_mm", TORCH_FN(scaled_mm));
  m.impl("_scaled_mm.out", TORCH_FN(scaled_mm_out));
  m.impl("_scaled_mm_v2", TORCH_FN(scaled_mm_v2));
  m.impl("_scaled_mm_v2.out", TORCH_FN(scaled_mm_v2_out));
  m.impl("frexp.Tensor", TORCH_FN(ops::frexp));
  m.impl("frexp.Tensor_out", TORCH_FN(frexp_out));
  m.impl("ldexp.Tensor", TORCH_FN(ldexp));
  m.impl("ldexp_", TORCH_FN(ldexp_));
  m.impl("ldexp.out", TORCH_FN(ldexp_out));
  // Elementwise ops: one boxed kernel for all overloads.
  register_elementwise(m);
  register_reductions(m);
}

// Sparse COO tensors whose indices and values are tpu tensors (the kernels
// PyTorch writes as host loops; the rest are in ops/sparse_coo_generic.cc).
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_coalesce", TORCH_FN(sparse_coalesce));
  m.impl("_to_dense", TORCH_FN(sparse_to_dense));
  m.impl("add.out", TORCH_FN(sparse_add_out));
  m.impl("add.Tensor", TORCH_FN(sparse_add));
  m.impl("add_.Tensor", TORCH_FN(sparse_add_));
  m.impl("mul.out", TORCH_FN(sparse_mul_out));
  m.impl("mul.Tensor", TORCH_FN(sparse_mul));
  m.impl("mul_.Tensor", TORCH_FN(sparse_mul_));
  m.impl("addmm.out", TORCH_FN(sparse_addmm_out));
  m.impl("addmm", TORCH_FN(sparse_addmm));
  m.impl("addmm_", TORCH_FN(sparse_addmm_));
  m.impl("mm", TORCH_FN(sparse_mm));
  m.impl("mm.out", TORCH_FN(sparse_mm_out));
  m.impl("sparse_mask", TORCH_FN(sparse_mask));
  m.impl("_sparse_mask_projection", TORCH_FN(sparse_mask_projection));
  m.impl("index_select", TORCH_FN(sparse_index_select));
  m.impl("_sparse_sparse_matmul", TORCH_FN(sparse_sparse_matmul));
  m.impl("bmm", TORCH_FN(sparse_bmm));
  m.impl("bmm.out", TORCH_FN(sparse_bmm_out));
  m.impl("_sparse_sum_backward", TORCH_FN(sparse_sum_backward));
  m.impl("_sparse_softmax", TORCH_FN(sparse_softmax));
  m.impl("_sparse_log_softmax", TORCH_FN(sparse_log_softmax));
  m.impl("_sparse_softmax_backward_data", TORCH_FN(sparse_softmax_backward));
  m.impl("_sparse_log_softmax_backward_data", TORCH_FN(sparse_log_softmax_backward));
}

}  // namespace torch_tpu::ops
