#include "exec/memory_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "exec/env_settings.h"

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
    // (0: unset; a set value is positive)
    if (int64_t v = positive_int_from_env("TORCH_TPU_MAX_MEMORY_MAPS", 0); v > 0) return v;
    int64_t limit = 65530;
    std::ifstream f("/proc/sys/vm/max_map_count");
    int64_t read = 0;
    if (f >> read && read > 0) limit = read;
    return limit / 2;
  }();
  return budget;
}

}  // namespace torch_tpu
