#include "pjrt/cuda_environment.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>

namespace torch_tpu::pjrt {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// (directory under site-packages/nvidia, soname), dependencies first: the
// runtime, then nvrtc and nvJitLink (cuDNN and cuSPARSE load them), the
// math libraries, NCCL, nvshmem and cuDNN. CUDA 13's wheels put the toolkit
// libraries in nvidia/cu13/lib; CUDA 12's had a directory per library.
struct Library {
  const char* dir;
  const char* soname;
};
constexpr Library kLibraries[] = {
    {"cu13", "libcudart.so.13"},     {"cuda_runtime", "libcudart.so.12"},
    {"cu13", "libnvrtc.so.13"},      {"cuda_nvrtc", "libnvrtc.so.12"},
    {"cu13", "libnvJitLink.so.13"},  {"nvjitlink", "libnvJitLink.so.12"},
    {"cu13", "libcublasLt.so.13"},   {"cu13", "libcublas.so.13"},
    {"cublas", "libcublasLt.so.12"}, {"cublas", "libcublas.so.12"},
    {"cu13", "libcupti.so.13"},      {"cuda_cupti", "libcupti.so.12"},
    {"cu13", "libcusparse.so.12"},   {"cusparse", "libcusparse.so.12"},
    {"cu13", "libcusolver.so.12"},   {"cusolver", "libcusolver.so.11"},
    {"cu13", "libcufft.so.12"},      {"cufft", "libcufft.so.11"},
    {"nccl", "libnccl.so.2"},        {"nvshmem", "libnvshmem_host.so.3"},
    {"cudnn", "libcudnn.so.9"},
};

// Where ptxas (nvidia-cuda-nvcc) and libdevice (nvidia-nvvm) land.
constexpr const char* kDataDirs[] = {"cu13", "cuda_nvcc"};

constexpr const char* kDataDirFlag = "--xla_gpu_cuda_data_dir";

}  // namespace

bool is_cuda_plugin(const std::string& plugin_path) {
  return plugin_path.find("xla_cuda") != std::string::npos;
}

std::vector<std::string> cuda_library_paths(const std::vector<std::string>& package_roots) {
  std::vector<std::string> paths;
  for (const Library& library : kLibraries) {
    for (const auto& root : package_roots) {
      std::string candidate = root + "/nvidia/" + library.dir + "/lib/" + library.soname;
      if (exists(candidate)) {
        paths.push_back(std::move(candidate));
        break;
      }
    }
  }
  return paths;
}

std::string cuda_data_dir(const std::vector<std::string>& package_roots) {
  for (const char* dir : kDataDirs) {
    for (const auto& root : package_roots) {
      const std::string candidate = root + "/nvidia/" + dir;
      if (exists(candidate + "/bin/ptxas") || exists(candidate + "/nvvm/libdevice")) {
        return candidate;
      }
    }
  }
  return "";
}

std::string with_cuda_data_dir(const std::string& xla_flags, const std::string& dir) {
  if (dir.empty() || xla_flags.find(kDataDirFlag) != std::string::npos) return xla_flags;
  std::string flags = xla_flags;
  if (!flags.empty()) flags += ' ';
  return flags + kDataDirFlag + "=" + dir;
}

std::string prepare_cuda_plugin(const std::vector<std::string>& package_roots) {
  std::string loaded;
  std::string failed;
  for (const auto& path : cuda_library_paths(package_roots)) {
    // Never closed: the plugin resolves CUDA's symbols through these for
    // the life of the process.
    if (::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) {
      loaded += loaded.empty() ? path : ", " + path.substr(path.rfind('/') + 1);
    } else {
      const char* why = ::dlerror();
      failed += (failed.empty() ? "" : "; ") + path + ": " + (why != nullptr ? why : "?");
    }
  }
  const std::string dir = cuda_data_dir(package_roots);
  const char* env = std::getenv("XLA_FLAGS");
  const std::string flags = with_cuda_data_dir(env != nullptr ? env : "", dir);
  if (!flags.empty()) ::setenv("XLA_FLAGS", flags.c_str(), /*overwrite=*/1);

  std::string report = loaded.empty() ? "no CUDA libraries from NVIDIA's wheels"
                                      : "CUDA libraries loaded: " + loaded;
  if (!failed.empty()) report += "; failed to load: " + failed;
  report += dir.empty() ? "; no CUDA data directory (ptxas, libdevice) in the wheels"
                        : "; CUDA data directory " + dir;
  return report;
}

}  // namespace torch_tpu::pjrt
