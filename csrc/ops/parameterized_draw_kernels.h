// Random draws whose parameters are tensors (ops/parameterized_draws.cc):
// torch.normal with a tensor mean or std (torch.distributions.Normal's
// sample), one value per element of the broadcast parameters, and the gamma
// and Dirichlet samplers.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_tpu::ops {

at::Tensor normal_tensor_float(const at::Tensor& mean, double std,
                               std::optional<at::Generator> gen);
at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std,
                                    std::optional<at::Generator> gen, at::Tensor& out);
at::Tensor normal_float_tensor(double mean, const at::Tensor& std,
                               std::optional<at::Generator> gen);
at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std,
                                    std::optional<at::Generator> gen, at::Tensor& out);
at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                std::optional<at::Generator> gen);
at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean, const at::Tensor& std,
                                     std::optional<at::Generator> gen, at::Tensor& out);

at::Tensor standard_gamma(const at::Tensor& self, std::optional<at::Generator> gen);
at::Tensor standard_gamma_grad(const at::Tensor& self, const at::Tensor& output);
at::Tensor dirichlet_grad(const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& total);
at::Tensor binomial(const at::Tensor& count, const at::Tensor& prob,
                    std::optional<at::Generator> gen);
at::Tensor poisson(const at::Tensor& self, std::optional<at::Generator> gen);
at::Tensor sample_dirichlet(const at::Tensor& self, std::optional<at::Generator> gen);

}  // namespace torch_tpu::ops
