#include "exec/persistent_cache.h"

#include <c10/util/Exception.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "core/metrics.h"
#include "core/runtime.h"
#include "exec/env_settings.h"
#include "exec/executable_cache.h"
#include "exec/recent_runs.h"
#include "exec/sha256.h"
#include "pjrt/fork_guard.h"

namespace torch_tpu {
namespace {

// Bumped whenever the entry layout or what the name covers changes.
constexpr char kFormat[] = "torch_tpu executable cache 1";
constexpr char kMagic[8] = {'T', 'T', 'P', 'U', 'X', 'C', '0', '1'};
constexpr size_t kNameSize = 64;  // hex sha256
// magic, name, payload size (little-endian u64), payload sha256
constexpr size_t kHeaderSize = sizeof(kMagic) + kNameSize + 8 + 32;
constexpr char kEntrySuffix[] = ".xc";
constexpr int64_t kDefaultMaxBytes = int64_t{4} << 30;
// As many as the in-memory cache holds by default.
constexpr int64_t kDefaultPrefetch = ExecutableCache::kDefaultCapacity;

// Threads loading ahead of use (TORCH_TPU_CACHE_PREFETCH_THREADS): a
// program's load is a single-threaded parse in the plugin (~80 ms for a
// DeferAndFuse region of a decoding step), and a warm process's first call
// waits for the sum of them. On a 2-core machine two threads took a warm
// DeferAndFuse decode's first call from 7.5-15 s to 7.3-10 s (README); a
// few are enough, as the loads end within the first calls.
int64_t default_prefetch_threads() {
  return std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 4);
}
// Entries stamped with no pause this long between them are one run's (a
// new process takes longer than this to import torch and reach its first
// program).
constexpr int64_t kRunGapNs = 1000000000;

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Creates `dir` and missing parents, each 0700.
bool make_directories(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_directories(dir.substr(0, slash))) {
    return false;
  }
  return ::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

struct Entry {
  std::string name;  // the file's, without kEntrySuffix
  std::string path;
  int64_t bytes;
  int64_t mtime_ns;
};

std::vector<Entry> list_entries(const std::string& dir) {
  std::vector<Entry> entries;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return entries;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!ends_with(name, kEntrySuffix)) continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    entries.push_back({name.substr(0, name.size() - std::strlen(kEntrySuffix)), path,
                       static_cast<int64_t>(st.st_size),
                       static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
  }
  ::closedir(d);
  return entries;
}

bool read_file(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) {
    out->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (ok && done < out->size()) {
      const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
      if (n <= 0) ok = n == 0 && done == out->size();
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    out->resize(done);
  }
  ::close(fd);
  return ok;
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// A lock on one entry name across processes: a byte of the directory's one
// lock file, chosen by the name (fcntl record locks: released when the
// process dies holding one). Two names may share a byte, which only makes
// one process wait for the other's compile. Threads of one process do not
// exclude each other here; the in-memory cache already compiles a program
// once per process.
class EntryLock {
 public:
  EntryLock(int fd, const std::string& name) : fd_(fd) {
    if (fd_ < 0) return;
    region_.l_type = F_WRLCK;
    region_.l_whence = SEEK_SET;
    region_.l_start = static_cast<off_t>(std::stoul(name.substr(0, 7), nullptr, 16));
    region_.l_len = 1;
    while (::fcntl(fd_, F_SETLKW, &region_) != 0 && errno == EINTR) {
    }
  }
  ~EntryLock() {
    if (fd_ < 0) return;
    region_.l_type = F_UNLCK;
    ::fcntl(fd_, F_SETLK, &region_);
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_;
  struct flock region_ = {};
};

}  // namespace

namespace {
// Set on the thread constructing the cache, which creates the runtime when
// nothing else has yet: the runtime's hook below must not wait for that
// construction from inside it.
thread_local bool making_the_cache = false;
}  // namespace

PersistentCache& PersistentCache::get() {
  static auto* cache = [] {
    struct Making {
      Making() { making_the_cache = true; }
      ~Making() { making_the_cache = false; }  // also when the constructor throws
    } making;
    return new PersistentCache();  // never destroyed (see Runtime)
  }();
  return *cache;
}

namespace {
// Made with the device, not at the first compile: the warm-start thread
// then loads entries while the process is still moving its model to the
// device and preparing inputs.
const bool made_with_the_runtime = [] {
  Runtime::after_init([] {
    if (!making_the_cache) (void)PersistentCache::get();
  });
  return true;
}();
}  // namespace

PersistentCache::PersistentCache() {
  const char* env = std::getenv("TORCH_TPU_CACHE_DIR");
  if (env != nullptr) {
    dir_ = env;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir_ = std::string(home) + "/.cache/torch_tpu";
  }
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  max_bytes_ = positive_int_from_env("TORCH_TPU_CACHE_MAX_BYTES", kDefaultMaxBytes);
  if (dir_.empty()) return;  // turned off
  if (!make_directories(dir_) || ::access(dir_.c_str(), R_OK | W_OK | X_OK) != 0) {
    disable("cannot create or write the directory '" + dir_ + "' (" + std::strerror(errno) + ")");
    return;
  }
  enabled_ = true;
  // Kept open for the process's life: closing any descriptor of the file
  // would drop this process's record locks on it.
  lock_fd_ = ::open((dir_ + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  Runtime& runtime = Runtime::get();
  const pjrt::Client& client = runtime.client();
  identity_ = std::string(kFormat) + '\0' + client.platform_name() + '\0' +
              client.platform_version() + '\0' + client.api().version_string() + '\0' +
              runtime.plugin_path();
  struct stat st;
  if (::stat(runtime.plugin_path().c_str(), &st) == 0) {
    identity_ += '\0' + std::to_string(st.st_size) + '\0' + std::to_string(st.st_mtim.tv_sec) +
                 '.' + std::to_string(st.st_mtim.tv_nsec);
  }
  // The plugin compiles with the flags it read from these at its start: an
  // executable compiled under other flags (fast math, another emitter) is
  // another program, so the flags are part of every entry's name.
  for (const char* name : {"XLA_FLAGS", "LIBTPU_INIT_ARGS"}) {
    const char* flags = std::getenv(name);
    identity_ += std::string(1, '\0') + name + '=' + (flags != nullptr ? flags : "");
  }
  const int64_t prefetch = nonnegative_int_from_env("TORCH_TPU_CACHE_PREFETCH", kDefaultPrefetch);
  const int64_t threads =
      positive_int_from_env("TORCH_TPU_CACHE_PREFETCH_THREADS", default_prefetch_threads());
  if (prefetch > 0) start_prefetch(static_cast<size_t>(prefetch), static_cast<size_t>(threads));
}

void PersistentCache::disable(const std::string& why) {
  enabled_ = false;
  TORCH_WARN("torch_tpu: the persistent executable cache is off for this process: ", why,
             ". Programs are cached in memory only (set TORCH_TPU_CACHE_DIR to a writable "
             "directory, or to an empty value to silence this).");
}

std::string PersistentCache::entry_name(const std::string& program,
                                        const std::string& options) const {
  Sha256 h;
  const uint64_t sizes[3] = {identity_.size(), options.size(), program.size()};
  h.update(std::string_view(reinterpret_cast<const char*>(sizes), sizeof(sizes)));
  h.update(identity_).update(options).update(program);
  auto d = h.digest();
  return to_hex(d.data(), d.size());
}

std::string PersistentCache::entry_path(const std::string& name) const {
  return dir_ + "/" + name + kEntrySuffix;
}

pjrt::ExecutablePtr PersistentCache::load_entry(const std::string& path, const std::string& name,
                                                bool* present) const {
  std::string file;
  if (present != nullptr) *present = false;
  if (!read_file(path, &file)) return nullptr;  // absent (or unreadable)
  if (present != nullptr) *present = true;
  bool sound = file.size() >= kHeaderSize &&
               std::memcmp(file.data(), kMagic, sizeof(kMagic)) == 0 &&
               file.compare(sizeof(kMagic), kNameSize, name) == 0;
  uint64_t payload_size = 0;
  if (sound) {
    for (int i = 0; i < 8; ++i) {
      payload_size |= uint64_t{static_cast<uint8_t>(file[sizeof(kMagic) + kNameSize + i])}
                      << (8 * i);
    }
    sound = payload_size == file.size() - kHeaderSize;
  }
  if (!sound) return nullptr;
  const std::string_view payload = std::string_view(file).substr(kHeaderSize);
  auto sum = Sha256().update(payload).digest();
  if (std::memcmp(sum.data(), file.data() + kHeaderSize - 32, 32) != 0) return nullptr;
  try {
    return Runtime::get().client().deserialize(std::string(payload));
  } catch (const std::exception&) {
    return nullptr;  // the plugin refuses it
  }
}

pjrt::ExecutablePtr PersistentCache::read_entry(const std::string& path, const std::string& name) {
  pjrt::ExecutablePtr exe = prefetch_ ? prefetch_->take(name) : nullptr;
  const bool prefetched = exe != nullptr;
  bool present = true;
  if (!exe) exe = load_entry(path, name, &present);
  if (!exe) {
    if (present) ::unlink(path.c_str());  // compiled again by the caller
    return nullptr;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used
  Metrics::get().persistent_cache_hits++;
  if (prefetched) Metrics::get().persistent_cache_prefetched++;
  return exe;
}

std::vector<std::string> PersistentCache::most_recently_used(size_t count) const {
  const std::vector<Entry> entries = list_entries(dir_);
  std::vector<int64_t> stamps;
  stamps.reserve(entries.size());
  for (const Entry& e : entries) stamps.push_back(e.mtime_ns);
  std::vector<std::string> names;
  for (size_t i : order_by_recent_runs(stamps, count, kRunGapNs)) names.push_back(entries[i].name);
  return names;
}

void PersistentCache::start_prefetch(size_t count, size_t threads) {
  prefetch_ = std::make_unique<PrefetchQueue<pjrt::ExecutablePtr>>(
      [this, count] { return most_recently_used(count); },
      [this](const std::string& name) { return load_entry(entry_path(name), name); }, threads);
  // Stopped before the plugin's own statics are destroyed at exit (they
  // were made before this handler was registered, so they go after it). A
  // forked child has no such thread, and may not touch the parent's lock.
  std::atexit([] {
    if (!pjrt::in_forked_child()) PersistentCache::get().prefetch_->stop();
  });
}

void PersistentCache::drop_prefetched() {
  if (prefetch_) prefetch_->drop_untaken();
}

void PersistentCache::write_entry(const std::string& path, const std::string& name,
                                  const std::string& payload) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::string header(kMagic, sizeof(kMagic));
  header += name;
  for (int i = 0; i < 8; ++i) {
    header += static_cast<char>((static_cast<uint64_t>(payload.size()) >> (8 * i)) & 0xff);
  }
  auto sum = Sha256().update(payload).digest();
  header.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write_all(fd, header.data(), header.size()) &&
            write_all(fd, payload.data(), payload.size());
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    std::lock_guard<std::mutex> lock(mu_);
    if (enabled_) disable("cannot write to '" + dir_ + "' (" + why + ")");
    return;
  }
  Metrics::get().persistent_cache_writes++;
  evict_if_over_budget(static_cast<int64_t>(header.size() + payload.size()));
}

void PersistentCache::evict_if_over_budget(int64_t added) {
  std::lock_guard<std::mutex> lock(mu_);
  if (known_bytes_ < 0) {
    known_bytes_ = 0;
    for (const Entry& e : list_entries(dir_)) known_bytes_ += e.bytes;
  } else {
    known_bytes_ += added;
  }
  if (known_bytes_ <= max_bytes_) return;
  // Over budget: least recently used first, down to 90% of it, so that the
  // directory is not scanned again at every write.
  std::vector<Entry> entries = list_entries(dir_);
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.mtime_ns < b.mtime_ns; });
  known_bytes_ = 0;
  for (const Entry& e : entries) known_bytes_ += e.bytes;
  for (const Entry& e : entries) {
    if (known_bytes_ <= max_bytes_ / 10 * 9) break;
    if (::unlink(e.path.c_str()) == 0) known_bytes_ -= e.bytes;
  }
}

pjrt::ExecutablePtr PersistentCache::load_or_compile(
    const std::string& program, const std::string& options,
    c10::function_ref<pjrt::ExecutablePtr()> compile) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!enabled_) return compile();
  }
  const std::string name = entry_name(program, options);
  const std::string path = entry_path(name);
  if (auto exe = read_entry(path, name)) return exe;
  // Another process may be compiling it: wait for it, then read its entry.
  EntryLock held(lock_fd_, name);
  if (auto exe = read_entry(path, name)) return exe;
  pjrt::ExecutablePtr exe = compile();
  std::string payload;
  try {
    payload = exe->serialize();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (enabled_) disable(std::string("the PJRT plugin cannot serialize executables: ") + e.what());
    return exe;
  }
  write_entry(path, name, payload);
  return exe;
}

PersistentCache::Stats PersistentCache::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s;
  s.enabled = enabled_;
  s.directory = dir_;
  s.max_bytes = max_bytes_;
  if (!enabled_) return s;
  if (prefetch_) s.loaded_ahead = static_cast<int64_t>(prefetch_->loaded());
  for (const Entry& e : list_entries(dir_)) {
    s.entries++;
    s.bytes += e.bytes;
  }
  return s;
}

void PersistentCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled_) return;
  for (const Entry& e : list_entries(dir_)) ::unlink(e.path.c_str());
  known_bytes_ = 0;
  drop_prefetched();  // what was loaded from the deleted entries
}

}  // namespace torch_tpu
