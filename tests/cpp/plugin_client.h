// The PJRT client the C++ tests share: one per test binary, for the plugin
// that TORCH_TPU_PJRT_PLUGIN names (tests/test_cpp_runtime.py sets it and
// runs the binary against each installed plugin).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "pjrt/client.h"

namespace torch_tpu {

inline std::shared_ptr<pjrt::Client> plugin_client() {
  static std::shared_ptr<pjrt::Client> c = [] {
    const char* path = std::getenv("TORCH_TPU_PJRT_PLUGIN");
    EXPECT_NE(path, nullptr) << "set TORCH_TPU_PJRT_PLUGIN";
    return pjrt::Client::create(pjrt::Api::load(path), {});
  }();
  return c;
}

}  // namespace torch_tpu
