// What the XLA CUDA PJRT plugin needs in the process before it is loaded.
// The plugin (jax-cuda13-pjrt's xla_cuda_plugin.so) links none of CUDA's
// user-space libraries: it dlopens them, and NVIDIA ships them as Python
// wheels (nvidia-cublas, nvidia-cudnn-cu13, ...) under site-packages/nvidia.
// Its RPATH reaches some of them only while the plugin sits in its own
// package, and not at all nvshmem or cuDNN's own dependency on nvrtc, so,
// as JAX does, they are loaded first, globally, from the wheels. XLA also
// needs ptxas and libdevice (nvidia-cuda-nvcc, nvidia-nvvm) and finds them
// through --xla_gpu_cuda_data_dir. Knows nothing of Python: the caller
// passes the package directories.
#pragma once

#include <string>
#include <vector>

namespace torch_tpu::pjrt {

// Whether `plugin_path` is one of the XLA CUDA plugins.
bool is_cuda_plugin(const std::string& plugin_path);

// The CUDA libraries found under the package roots, in the order they must
// be loaded (each after what it depends on); one path per library, from the
// first root that has it.
std::vector<std::string> cuda_library_paths(const std::vector<std::string>& package_roots);

// The CUDA data directory XLA should use (the one holding bin/ptxas or
// nvvm/libdevice), or "" when the wheels are not installed.
std::string cuda_data_dir(const std::vector<std::string>& package_roots);

// `xla_flags` with --xla_gpu_cuda_data_dir=`dir` added, unless it names one
// already (a user's choice wins) or `dir` is empty.
std::string with_cuda_data_dir(const std::string& xla_flags, const std::string& dir);

// Loads the libraries (RTLD_GLOBAL) and sets XLA_FLAGS. Returns a line for
// diagnostics: what was loaded from where, and what failed to load (the
// plugin then reports the missing library itself when it needs it).
std::string prepare_cuda_plugin(const std::vector<std::string>& package_roots);

}  // namespace torch_tpu::pjrt
