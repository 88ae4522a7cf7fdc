// The executable cache's disk tier: compiled programs kept across
// processes, restarts and (on a shared file system) hosts.
//
// An entry is named by sha256(cache format ‖ plugin identity (platform,
// its version, the PJRT API version, the plugin file's path, size and
// modification time, and the compiler flags it reads from the environment:
// XLA_FLAGS, LIBTPU_INIT_ARGS) ‖ compile options ‖ program text) and holds the
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
//
// Warm start: a warm process needs, in about the same order, the programs
// its previous run used, which are the most recently used entries (a load
// or a write stamps an entry's modification time). Deserializing one costs
// about half a millisecond on the CPU plugin (a thousand or more for an LLM's
// generate), so a background thread loads the TORCH_TPU_CACHE_PREFETCH most
// recently used entries (default 4096, 0: off), the last run's first and
// in the order it used them (exec/recent_runs.h), while the process is
// still loading its model or running earlier ops; an op then takes its
// executable ready. Loading ahead does not stamp an entry, so
// entries no run needs age out; what a misjudged guess costs is background
// CPU time and memory, given back when the executables' memory maps run
// short (drop_prefetched).
#pragma once

#include <c10/util/FunctionRef.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/prefetch_queue.h"
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
    // Executables loaded ahead of use (warm start) that no op has used yet.
    int64_t loaded_ahead = 0;
  };
  Stats stats();
  // Deletes every entry (the directory stays).
  void clear();
  // Frees the executables loaded ahead of use and not yet used, and loads
  // no more.
  void drop_prefetched();

 private:
  PersistentCache();
  std::string entry_name(const std::string& program, const std::string& options) const;
  std::string entry_path(const std::string& name) const;
  // The entry's executable when its file is sound and the plugin takes it;
  // nullptr otherwise. Touches nothing.
  // `present` (optional) says whether the file was there to read.
  pjrt::ExecutablePtr load_entry(const std::string& path, const std::string& name,
                                 bool* present = nullptr) const;
  // load_entry (or the executable prefetched for it) for use: stamps the
  // entry as just used and counts the hit; deletes an entry that is not
  // sound.
  pjrt::ExecutablePtr read_entry(const std::string& path, const std::string& name);
  void start_prefetch(size_t count, size_t threads);
  std::vector<std::string> most_recently_used(size_t count) const;
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
  std::unique_ptr<PrefetchQueue<pjrt::ExecutablePtr>> prefetch_;  // set once, in the constructor
};

}  // namespace torch_tpu
