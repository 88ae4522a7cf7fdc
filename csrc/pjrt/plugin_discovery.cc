#include "pjrt/plugin_discovery.h"

#include <glob.h>
#include <sys/stat.h>

#include <cstdlib>

#include "pjrt/error.h"

namespace torch_tpu::pjrt {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool any_match(const std::string& pattern) {
  glob_t g;
  bool found = ::glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

std::string find_in_roots(const std::vector<std::string>& roots, const char* relative) {
  for (const auto& root : roots) {
    std::string candidate = root + "/" + relative;
    if (exists(candidate)) return candidate;
  }
  return "";
}

}  // namespace

bool tpu_present() {
  // TPU VMs expose the chips as /dev/accel* (v4+) or through VFIO (v5e+).
  return any_match("/dev/accel*") || any_match("/dev/vfio/[0-9]*");
}

bool nvidia_gpu_present() {
  return exists("/dev/nvidia0") || exists("/proc/driver/nvidia/version");
}

PluginChoice discover_plugin(const std::vector<std::string>& package_roots) {
  if (const char* env = std::getenv("TORCH_TPU_PJRT_PLUGIN"); env != nullptr && *env != '\0') {
    if (!exists(env)) {
      throw Error(static_cast<int>(ErrorCode::kNotFound),
                  std::string("TORCH_TPU_PJRT_PLUGIN points to ") + env + ", which does not exist");
    }
    return {env, "TORCH_TPU_PJRT_PLUGIN"};
  }
  if (tpu_present()) {
    std::string path = find_in_roots(package_roots, "libtpu/libtpu.so");
    if (!path.empty()) return {path, "TPU device present, libtpu installed"};
  }
  if (nvidia_gpu_present()) {
    for (const char* rel : {"jax_plugins/xla_cuda13/xla_cuda_plugin.so",
                            "jax_plugins/xla_cuda12/xla_cuda_plugin.so"}) {
      std::string path = find_in_roots(package_roots, rel);
      if (!path.empty()) return {path, "NVIDIA GPU present, XLA CUDA plugin installed"};
    }
  }
  std::string cpu = find_in_roots(package_roots, "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so");
  if (!cpu.empty()) return {cpu, "default XLA CPU plugin"};
  throw Error(static_cast<int>(ErrorCode::kNotFound),
              "no PJRT plugin found: install xla-cpu-pjrt (pip install "
              "xla-cpu-pjrt==0.0.1) or set TORCH_TPU_PJRT_PLUGIN to a plugin "
              ".so");
}

}  // namespace torch_tpu::pjrt
