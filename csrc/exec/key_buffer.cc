#include "exec/key_buffer.h"

#include <memory>
#include <vector>

namespace torch_tpu {
namespace {

// Strings above this capacity are not kept (a rare huge key, such as a
// captured graph's, does not pin its memory for the thread's lifetime).
constexpr size_t kMaxKeptCapacity = 4096;

struct ThreadKeys {
  std::vector<std::unique_ptr<std::string>> strings;
  size_t in_use = 0;  // borrows are scoped, so they return in reverse order
};

ThreadKeys& thread_keys() {
  thread_local ThreadKeys keys;
  return keys;
}

}  // namespace

KeyBuffer::KeyBuffer() {
  ThreadKeys& keys = thread_keys();
  if (keys.in_use == keys.strings.size()) keys.strings.push_back(std::make_unique<std::string>());
  string_ = keys.strings[keys.in_use++].get();
  string_->clear();
}

KeyBuffer::~KeyBuffer() {
  ThreadKeys& keys = thread_keys();
  --keys.in_use;
  if (string_->capacity() > kMaxKeptCapacity) std::string().swap(*string_);
}

}  // namespace torch_tpu
