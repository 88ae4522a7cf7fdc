// A collective on tpu tensors, run by a host engine (Gloo) on host copies.
// StagedWork wraps the engine's Work and finishes the collective: once the
// engine is done it writes the host results back into the tpu tensors
// (through their views), exactly once, before wait() returns or the future
// completes.
#pragma once

#include <functional>
#include <mutex>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

namespace torch_tpu::dist {

class StagedWork : public c10d::Work {
 public:
  // `finish` writes the host results back; `outputs` are what result() and
  // the future's value report (the caller's tensors).
  StagedWork(c10::intrusive_ptr<c10d::Work> inner, std::function<void()> finish,
             std::vector<at::Tensor> outputs, int rank, c10d::OpType op_type);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout) override;
  void abort() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  // What the write-back needs, shared with the future's callback (which
  // must not hold the work itself: the work holds the future).
  struct WriteBack {
    std::function<void()> finish;
    std::vector<at::Tensor> outputs;
    std::once_flag done;
    // Runs `finish` once, whichever of wait() and the future gets there first.
    void run_once();
  };

  c10::intrusive_ptr<c10d::Work> inner_;
  std::shared_ptr<WriteBack> write_back_;
  std::mutex future_mutex_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace torch_tpu::dist
