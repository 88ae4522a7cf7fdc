#include "pjrt/deferred_release.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "pjrt/error.h"
#include "pjrt/fork_guard.h"

namespace torch_tpu::pjrt {
namespace {

struct Release {
  EventPtr done;
  std::vector<BufferPtr> buffers;
};

class ReleaseThread {
 public:
  // Never destroyed (nor joined): the thread may still be waiting on a
  // plugin event when static destructors run at exit.
  static ReleaseThread& get() {
    static auto* instance = new ReleaseThread();
    return *instance;
  }

  void add(Release release) {
    std::unique_lock<std::mutex> lock(mu_);
    queue_.push_back(std::move(release));
    // While the thread awaits an earlier event it needs no wake-up: it looks
    // at the queue again before sleeping.
    if (idle_) {
      lock.unlock();
      wake_.notify_one();
    }
  }

  void drain() {
    std::unique_lock<std::mutex> lock(mu_);
    drained_.wait(lock, [&] { return queue_.empty() && idle_; });
  }

 private:
  ReleaseThread() {
    std::thread([this] { run(); }).detach();
  }

  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (queue_.empty()) {
        idle_ = true;
        drained_.notify_all();
        wake_.wait(lock, [&] { return !queue_.empty(); });
        idle_ = false;
      }
      Release release = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        release.done->await();
      } catch (const Error&) {
        // The execution failed: its error is raised to the user by whoever
        // tracks its completion (exec/async_errors.h); the buffers go anyway.
      }
      release = Release{};
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Release> queue_;
  bool idle_ = false;
};

}  // namespace

void release_when_done(EventPtr done, std::vector<BufferPtr> buffers) {
  if (!done || buffers.empty() || in_forked_child()) return;
  ReleaseThread::get().add(Release{std::move(done), std::move(buffers)});
}

void drain_deferred_releases() {
  if (in_forked_child()) return;
  ReleaseThread::get().drain();
}

}  // namespace torch_tpu::pjrt
