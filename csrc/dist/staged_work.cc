#include "dist/staged_work.h"

#include <ATen/core/ivalue.h>

namespace torch_tpu::dist {

StagedWork::StagedWork(c10::intrusive_ptr<c10d::Work> inner, std::function<void()> finish,
                       std::vector<at::Tensor> outputs, int rank, c10d::OpType op_type)
    : c10d::Work(rank, op_type),
      inner_(std::move(inner)),
      write_back_(std::make_shared<WriteBack>()) {
  write_back_->finish = std::move(finish);
  write_back_->outputs = std::move(outputs);
}

void StagedWork::WriteBack::run_once() {
  std::call_once(done, [this] {
    if (finish) finish();
  });
}

bool StagedWork::isCompleted() {
  // A caller that polls instead of waiting finds the results in place.
  if (!inner_->isCompleted()) return false;
  if (inner_->isSuccess()) write_back_->run_once();
  return true;
}

bool StagedWork::isSuccess() const { return inner_->isSuccess(); }

std::exception_ptr StagedWork::exception() const { return inner_->exception(); }

int StagedWork::sourceRank() const { return inner_->sourceRank(); }

std::vector<at::Tensor> StagedWork::result() { return write_back_->outputs; }

void StagedWork::synchronize() {
  inner_->synchronize();
  write_back_->run_once();
}

bool StagedWork::wait(std::chrono::milliseconds timeout) {
  // The engine's wait throws on failure or timeout; then nothing is written
  // back and the caller sees the engine's error.
  bool done = inner_->wait(timeout);
  write_back_->run_once();
  return done;
}

void StagedWork::abort() { inner_->abort(); }

c10::intrusive_ptr<c10::ivalue::Future> StagedWork::getFuture() {
  std::lock_guard<std::mutex> lock(future_mutex_);
  if (future_) return future_;
  auto type = c10::ListType::create(c10::TensorType::get());
  c10::intrusive_ptr<c10::ivalue::Future> engine_future;
  try {
    engine_future = inner_->getFuture();
  } catch (const c10::Error&) {
    // Some engine works (point-to-point) have no future: complete one here.
  }
  if (!engine_future) {
    wait(kNoTimeout);
    future_ = c10::make_intrusive<c10::ivalue::Future>(type);
    future_->markCompleted(c10::IValue(write_back_->outputs));
    return future_;
  }
  // The write-back runs on the engine's thread when it completes (DDP's
  // reducer chains its own callbacks on this future); an engine error
  // passes through without a write-back.
  future_ = engine_future->then(
      [write_back = write_back_](c10::ivalue::Future& engine) {
        if (engine.hasError()) std::rethrow_exception(engine.exception_ptr());
        write_back->run_once();
        return c10::IValue(write_back->outputs);
      },
      type);
  return future_;
}

}  // namespace torch_tpu::dist
