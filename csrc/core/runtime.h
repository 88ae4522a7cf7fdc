// The process's one PJRT client, created lazily on first use.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "pjrt/client.h"

namespace torch_tpu {

class Runtime {
 public:
  // Where Python packages live, for plugin discovery. Must be called before
  // the first get() (torch_tpu's __init__ does it).
  static void set_package_roots(std::vector<std::string> roots);
  // Creates the client on first call; throws c10::Error on failure, and
  // RuntimeError in a child forked after the parent created the client.
  static Runtime& get();
  static bool initialized();
  // Runs `hook` right after the runtime is created, on the thread that
  // created it (work that should start with the device rather than with the
  // first op, like loading the persistent cache's entries ahead of use).
  // Registered at static initialization, so before any get().
  static void after_init(void (*hook)());
  // True in a process forked from one whose client existed: the plugin's
  // threads did not survive the fork, so no PJRT call may be made (any of
  // them could wait forever on a lock a vanished thread held), and tpu
  // storages inherited from the parent are leaked rather than destroyed.
  static bool in_bad_fork();
  // Device count, also in a bad fork (from before the fork), like CUDA's.
  static int visible_device_count();

  pjrt::Client& client() { return *client_; }
  int device_count() const { return static_cast<int>(client_->devices().size()); }
  // Throws (IndexError-mapped) for an index outside [0, device_count).
  const pjrt::DeviceInfo& device(int index) const;
  const std::string& plugin_path() const { return plugin_path_; }
  const std::string& plugin_reason() const { return plugin_reason_; }
  // Bytes of device memory (queried once per device at start-up; capped by
  // TORCH_TPU_MEMORY_LIMIT_BYTES).
  int64_t memory_capacity(int index) const;
  // Bytes the allocator may hand out (every allocation checks it): the
  // capacity times this process's fraction of it (1 unless
  // torch.tpu.set_per_process_memory_fraction changed it).
  int64_t memory_limit(int index) const;
  double memory_fraction(int index) const;
  void set_memory_fraction(int index, double fraction);  // validated by the caller
  // True where device buffers live in this process's host memory (the CPU
  // plugin): transfers then are one host copy (a zero-copy upload of a
  // fresh host copy; a download read straight from the buffer's memory).
  bool device_memory_is_host() const { return device_memory_is_host_; }

 private:
  Runtime();
  std::shared_ptr<pjrt::Client> client_;
  std::vector<int64_t> memory_capacities_;
  std::unique_ptr<std::atomic<double>[]> memory_fractions_;
  std::string plugin_path_;
  std::string plugin_reason_;
  bool device_memory_is_host_ = false;
};

}  // namespace torch_tpu
