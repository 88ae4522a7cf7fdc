#include "core/runtime.h"

#include <c10/util/Exception.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "pjrt/cuda_environment.h"
#include "pjrt/error_report.h"
#include "pjrt/fork_guard.h"
#include "pjrt/plugin_discovery.h"

namespace torch_tpu {
namespace {
std::vector<std::string>& package_roots() {
  static std::vector<std::string> roots;
  return roots;
}

// TORCH_TPU_MEMORY_LIMIT_BYTES caps every device's memory (read once, at
// start-up), so that running out of device memory can be tested with small
// tensors. 0 when unset.
int64_t memory_limit_override() {
  const char* env = std::getenv("TORCH_TPU_MEMORY_LIMIT_BYTES");
  if (env == nullptr || *env == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(env, &end, 10);
  TORCH_CHECK_VALUE(errno == 0 && *end == '\0' && value > 0,
                    "TORCH_TPU_MEMORY_LIMIT_BYTES must be a positive integer, got '", env, "'");
  return static_cast<int64_t>(value);
}

std::vector<void (*)()>& init_hooks() {
  static std::vector<void (*)()> hooks;
  return hooks;
}

std::once_flag init_flag;
std::once_flag hooks_flag;
Runtime* instance = nullptr;
// `instance` once initialized: get() runs several times per op, and
// std::call_once costs a thread-local set-up and a pthread_once call even
// after the first.
std::atomic<Runtime*> ready_instance{nullptr};
std::atomic<int> device_count_at_init{0};
}  // namespace

void Runtime::set_package_roots(std::vector<std::string> roots) {
  package_roots() = std::move(roots);
}

bool Runtime::initialized() { return instance != nullptr; }

void Runtime::after_init(void (*hook)()) { init_hooks().push_back(hook); }

bool Runtime::in_bad_fork() { return pjrt::in_forked_child(); }

int Runtime::visible_device_count() {
  if (in_bad_fork()) return device_count_at_init.load();
  return get().device_count();
}

Runtime& Runtime::get() {
  TORCH_CHECK(!in_bad_fork(), pjrt::forked_child_message());
  if (Runtime* ready = ready_instance.load(std::memory_order_acquire)) return *ready;
  // A failed initialization is retried on the next call (call_once only
  // completes when the callable returns normally).
  std::call_once(init_flag, [] {
    instance = new Runtime();
    device_count_at_init = instance->device_count();
    ready_instance.store(instance, std::memory_order_release);
  });
  // Outside the first call_once: a hook may call get() (the fast path above).
  std::call_once(hooks_flag, [] {
    for (auto hook : init_hooks()) hook();
  });
  return *instance;
}

Runtime::Runtime() {
  // Failures PJRT cannot throw (destroying an object, a callback on a plugin
  // thread) become PyTorch warnings instead of lines on stderr.
  pjrt::set_error_reporter([](const std::string& message) { TORCH_WARN("tpu: ", message); });
  try {
    pjrt::PluginChoice choice = pjrt::discover_plugin(package_roots());
    plugin_path_ = choice.path;
    plugin_reason_ = choice.reason;
    // The CUDA plugin finds CUDA's libraries, ptxas and libdevice only
    // once they are in the process and XLA_FLAGS (pjrt/cuda_environment.h).
    if (pjrt::is_cuda_plugin(choice.path)) {
      plugin_reason_ += "; " + pjrt::prepare_cuda_plugin(package_roots());
    }
    // XLA logs INFO lines to stderr before its logging is initialized; keep
    // a user's terminal quiet unless they chose a level themselves.
    ::setenv("TF_CPP_MIN_LOG_LEVEL", "1", /*overwrite=*/0);
    const int64_t cap = memory_limit_override();
    auto api = pjrt::Api::load(choice.path);
    std::map<std::string, int64_t> options;
    if (choice.path.find("cpu") != std::string::npos) {
      int64_t count = 1;
      if (const char* env = std::getenv("TORCH_TPU_CPU_DEVICE_COUNT")) {
        count = std::atoll(env);
        TORCH_CHECK_VALUE(count >= 1,
                          "TORCH_TPU_CPU_DEVICE_COUNT must be a positive integer, got '", env, "'");
      }
      options["cpu_device_count"] = count;
    }
    // The Runtime (and so the client) is never destroyed: tearing a client
    // down during interpreter shutdown races with the plugin's threads.
    client_ = pjrt::Client::create(api, options);
    device_memory_is_host_ = client_->platform_name() == "cpu";
    for (const auto& device : client_->devices()) {
      pjrt::MemoryStats stats;
      const bool known = client_->memory_stats(device, &stats) && stats.bytes_limit > 0;
      // The CPU plugin keeps device buffers in host memory.
      const int64_t limit =
          known ? stats.bytes_limit
                : static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
      memory_capacities_.push_back(cap > 0 ? std::min(cap, limit) : limit);
    }
    memory_fractions_ = std::make_unique<std::atomic<double>[]>(memory_capacities_.size());
    for (size_t i = 0; i < memory_capacities_.size(); ++i) memory_fractions_[i].store(1.0);
  } catch (const pjrt::Error& e) {
    TORCH_CHECK(false, "tpu: cannot initialize the PJRT runtime: ", e.what());
  }
}

const pjrt::DeviceInfo& Runtime::device(int index) const {
  // RuntimeError, as CUDA's "invalid device ordinal" is.
  TORCH_CHECK(index >= 0 && index < device_count(), "tpu: invalid device index ", index,
              " (there are ", device_count(), " tpu devices)");
  return client_->devices()[index];
}

int64_t Runtime::memory_capacity(int index) const {
  (void)device(index);  // validates the index
  return memory_capacities_[index];
}

int64_t Runtime::memory_limit(int index) const {
  const int64_t capacity = memory_capacity(index);
  const double fraction = memory_fractions_[index].load(std::memory_order_relaxed);
  return fraction >= 1.0 ? capacity
                         : static_cast<int64_t>(fraction * static_cast<double>(capacity));
}

double Runtime::memory_fraction(int index) const {
  (void)device(index);
  return memory_fractions_[index].load(std::memory_order_relaxed);
}

void Runtime::set_memory_fraction(int index, double fraction) {
  (void)device(index);
  memory_fractions_[index].store(fraction, std::memory_order_relaxed);
}

}  // namespace torch_tpu
