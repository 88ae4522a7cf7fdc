#include "exec/scalar_buffers.h"

#include <mutex>
#include <string>
#include <unordered_map>

#include "exec/cache_key.h"
#include "exec/launcher.h"

namespace torch_tpu {
namespace {

// Bounded: a loop over ever-new values (a learning-rate schedule) must not
// grow it without limit. When full it starts over; the values in use are
// uploaded again on their next launch.
constexpr size_t kMaxEntries = 4096;

struct ScalarBuffers {
  std::mutex mu;
  std::unordered_map<std::string, pjrt::BufferPtr> entries;
};

ScalarBuffers& cache() {
  static auto* c = new ScalarBuffers();  // never destroyed (see Runtime)
  return *c;
}

}  // namespace

pjrt::BufferPtr scalar_buffer(const unsigned char* bytes, size_t size, hlo::ElementType type,
                              int device_index) {
  std::string key;
  append_bytes(key, device_index);
  append_bytes(key, type);
  key.append(reinterpret_cast<const char*>(bytes), size);
  auto& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) return it->second;
  }
  pjrt::BufferPtr buffer = upload(bytes, type, {}, device_index);
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.entries.size() >= kMaxEntries) c.entries.clear();
  c.entries.emplace(std::move(key), buffer);
  return buffer;
}

}  // namespace torch_tpu
