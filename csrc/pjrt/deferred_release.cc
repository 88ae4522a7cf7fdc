#include "pjrt/deferred_release.h"

#include <deque>
#include <mutex>
#include <utility>

#include "pjrt/error.h"
#include "pjrt/fork_guard.h"

namespace torch_tpu::pjrt {
namespace {

struct Release {
  EventPtr done;
  std::vector<BufferPtr> buffers;
};

// Past this many pending releases the oldest is awaited by the caller: the
// device is that many in-place launches behind (the plugin's own bound on
// executions in flight is far lower).
constexpr size_t kMaxPending = 4096;

void await_quietly(const Event& done) {
  try {
    done.await();
  } catch (const Error&) {
    // The execution failed: its error is raised to the user by whoever
    // tracks its completion (exec/async_errors.h); the buffers go anyway.
  }
}

class PendingReleases {
 public:
  // Never destroyed: handles still pending at exit are left to the process
  // (destroying them during static destruction would call into a plugin
  // that may already be shutting down).
  static PendingReleases& get() {
    static auto* instance = new PendingReleases();
    return *instance;
  }

  void add(Release release) {
    std::deque<Release> finished;  // dropped after the lock is released
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(release));
      while (!queue_.empty() && (queue_.size() > kMaxPending || queue_.front().done->is_ready())) {
        finished.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    for (const Release& r : finished) await_quietly(*r.done);
  }

  void drain() {
    std::deque<Release> pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending.swap(queue_);
    }
    for (const Release& r : pending) await_quietly(*r.done);
  }

 private:
  std::mutex mu_;
  std::deque<Release> queue_;  // in launch order, so the oldest finish first
};

}  // namespace

void release_when_done(EventPtr done, std::vector<BufferPtr> buffers) {
  if (!done || buffers.empty() || in_forked_child()) return;
  PendingReleases::get().add(Release{std::move(done), std::move(buffers)});
}

void drain_deferred_releases() {
  if (in_forked_child()) return;
  PendingReleases::get().drain();
}

}  // namespace torch_tpu::pjrt
