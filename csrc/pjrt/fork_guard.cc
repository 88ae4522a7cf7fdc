#include "pjrt/fork_guard.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace torch_tpu::pjrt {
namespace {

std::atomic<bool> forked{false};

void mark_forked_child() { forked.store(true, std::memory_order_relaxed); }

}  // namespace

void watch_for_fork() {
  static std::once_flag once;
  std::call_once(once, [] { ::pthread_atfork(nullptr, nullptr, &mark_forked_child); });
}

bool in_forked_child() { return forked.load(std::memory_order_relaxed); }

const char* forked_child_message() {
  return "Cannot re-initialize tpu in forked subprocess. To use tpu with multiprocessing, you "
         "must use the 'spawn' start method";
}

}  // namespace torch_tpu::pjrt
