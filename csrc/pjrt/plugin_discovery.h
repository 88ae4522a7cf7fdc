// Which PJRT plugin to load. Policy: TORCH_TPU_PJRT_PLUGIN (a path) wins;
// otherwise libtpu when a TPU is attached, then the XLA CUDA plugin when an
// NVIDIA GPU is present, then the XLA CPU plugin. The caller supplies the
// directories where Python packages are installed (the only part of the search
// that needs Python); this file knows nothing of Python.
#pragma once

#include <string>
#include <vector>

namespace torch_tpu::pjrt {

struct PluginChoice {
  std::string path;
  std::string reason;  // why this plugin was chosen, for diagnostics
};

// Throws pjrt::Error (kNotFound) when no plugin can be found.
PluginChoice discover_plugin(const std::vector<std::string>& package_roots);

bool tpu_present();
bool nvidia_gpu_present();

}  // namespace torch_tpu::pjrt
