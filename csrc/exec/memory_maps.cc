#include "exec/memory_maps.h"

#include <c10/util/Exception.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace torch_tpu {

int64_t memory_map_count() {
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buffer[1 << 16];
  int64_t lines = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    lines += std::count(buffer, buffer + n, '\n');
  }
  ::close(fd);
  return lines;
}

int64_t memory_map_budget() {
  static const int64_t budget = [] {
    if (const char* env = std::getenv("TORCH_TPU_MAX_MEMORY_MAPS"); env != nullptr && *env) {
      char* end = nullptr;
      const long long v = std::strtoll(env, &end, 10);
      TORCH_CHECK(*end == '\0' && v > 0,
                  "TORCH_TPU_MAX_MEMORY_MAPS must be a positive integer, got '", env, "'");
      return static_cast<int64_t>(v);
    }
    int64_t limit = 65530;
    std::ifstream f("/proc/sys/vm/max_map_count");
    int64_t read = 0;
    if (f >> read && read > 0) limit = read;
    return limit / 2;
  }();
  return budget;
}

}  // namespace torch_tpu
