// The executable cache's disk tier: compiled programs kept across
// processes, restarts and (on a shared file system) hosts.
//
// An entry is named by sha256(cache format ‖ plugin identity (platform,
// its version, the PJRT API version, the plugin file's path, size and
// modification time) ‖ compile options ‖ program text) and holds the
// plugin's serialized executable behind a header with that name and the
// payload's sha256. An entry that is truncated, corrupt, foreign or that the
// plugin refuses is deleted and the program compiled again, never trusted.
// Writes go to a temporary file renamed into place, so no reader sees half
// an entry; a lock per entry name (a byte of the directory's lock file)
// makes concurrent processes compile a program once. The directory (created 0700) is bounded by
// TORCH_TPU_CACHE_MAX_BYTES, least recently used entries evicted first.
//
// TORCH_TPU_CACHE_DIR selects the directory (default ~/.cache/torch_tpu;
// set but empty: no disk tier). A directory that cannot be created or
// written leaves the cache in memory only, with one warning.
#pragma once

#include <c10/util/FunctionRef.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "pjrt/executable.h"

namespace torch_tpu {

class PersistentCache {
 public:
  static PersistentCache& get();

  // The executable for `program`, from disk when an entry is there and
  // sound; else `compile()`'s, stored for the next process.
  pjrt::ExecutablePtr load_or_compile(const std::string& program, const std::string& options,
                                      c10::function_ref<pjrt::ExecutablePtr()> compile);

  struct Stats {
    bool enabled = false;
    std::string directory;
    int64_t entries = 0;
    int64_t bytes = 0;
    int64_t max_bytes = 0;
  };
  Stats stats();
  // Deletes every entry (the directory stays).
  void clear();

 private:
  PersistentCache();
  std::string entry_name(const std::string& program, const std::string& options) const;
  pjrt::ExecutablePtr read_entry(const std::string& path, const std::string& name);
  void write_entry(const std::string& path, const std::string& name, const std::string& payload);
  void evict_if_over_budget(int64_t added);
  void disable(const std::string& why);

  std::mutex mu_;
  bool enabled_ = false;
  std::string dir_;
  std::string identity_;
  int64_t max_bytes_ = 0;
  int64_t known_bytes_ = -1;  // the directory's entry bytes, once scanned
  int lock_fd_ = -1;          // the directory's lock file (see EntryLock)
};

}  // namespace torch_tpu
