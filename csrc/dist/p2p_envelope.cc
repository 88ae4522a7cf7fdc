#include "dist/p2p_envelope.h"

#include <c10/util/Exception.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace torch_tpu::dist {
namespace {

// Marks an envelope (a payload landing in an envelope's buffer is a bug of
// ours, not the user's: it is reported as such).
constexpr int64_t kEnvelopeMagic = 0x7470755f70327021;  // "tpu_p2p!"
constexpr int64_t kEnvelopeSize = 4;                    // magic, dtype, bytes, sequence
// Envelopes travel on the user's tag plus this, so that a recv from any
// source never takes a payload for an envelope.
constexpr int kEnvelopeTagOffset = 1 << 30;

int envelope_tag(const char* op, int tag) {
  // (Gloo itself refuses negative tags.)
  TORCH_CHECK_VALUE(tag < kEnvelopeTagOffset, "tpu_dist ", op, ": tags must be below 2**30 ",
                    "(tpu_dist uses the tags above for its message envelopes), got ", tag);
  return tag + kEnvelopeTagOffset;
}

std::string describe(int64_t dtype, int64_t nbytes) {
  const auto type = static_cast<at::ScalarType>(dtype);
  const int64_t item = static_cast<int64_t>(c10::elementSize(type));
  return std::to_string(nbytes / item) + " elements of " + c10::toString(type) + " (" +
         std::to_string(nbytes) + " bytes)";
}

// The two messages of a send: done when both are.
class SendWork : public c10d::Work {
 public:
  SendWork(c10::intrusive_ptr<c10d::Work> envelope, c10::intrusive_ptr<c10d::Work> payload,
           int rank)
      : c10d::Work(rank, c10d::OpType::SEND),
        envelope_(std::move(envelope)),
        payload_(std::move(payload)) {}

  bool isCompleted() override { return envelope_->isCompleted() && payload_->isCompleted(); }
  bool isSuccess() const override { return envelope_->isSuccess() && payload_->isSuccess(); }
  std::exception_ptr exception() const override {
    auto e = envelope_->exception();
    return e ? e : payload_->exception();
  }
  bool wait(std::chrono::milliseconds timeout) override {
    envelope_->wait(timeout);
    return payload_->wait(timeout);
  }
  void synchronize() override {}
  void abort() override {
    envelope_->abort();
    payload_->abort();
  }

 private:
  c10::intrusive_ptr<c10d::Work> envelope_;
  c10::intrusive_ptr<c10d::Work> payload_;
};

// What a recv's thread reports to its work.
struct RecvOutcome {
  std::mutex mu;
  std::condition_variable finished;
  bool done = false;
  std::exception_ptr error;
  int source = -1;
};

class RecvWork : public c10d::Work {
 public:
  RecvWork(std::shared_ptr<RecvOutcome> outcome, int rank, c10d::OpType op_type)
      : c10d::Work(rank, op_type), outcome_(std::move(outcome)) {}

  bool isCompleted() override {
    std::lock_guard<std::mutex> lock(outcome_->mu);
    return outcome_->done;
  }
  bool isSuccess() const override {
    std::lock_guard<std::mutex> lock(outcome_->mu);
    return outcome_->done && !outcome_->error;
  }
  std::exception_ptr exception() const override {
    std::lock_guard<std::mutex> lock(outcome_->mu);
    return outcome_->error;
  }
  int sourceRank() const override {
    std::lock_guard<std::mutex> lock(outcome_->mu);
    return outcome_->source;
  }
  bool wait(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(outcome_->mu);
    auto done = [&] { return outcome_->done; };
    if (timeout == kNoTimeout) {
      outcome_->finished.wait(lock, done);
    } else {
      TORCH_CHECK(outcome_->finished.wait_for(lock, timeout, done),
                  "tpu_dist recv: timed out after ", timeout.count(), " ms");
    }
    if (outcome_->error) std::rethrow_exception(outcome_->error);
    return true;
  }
  void synchronize() override {}

 private:
  std::shared_ptr<RecvOutcome> outcome_;
};

}  // namespace

int64_t P2PSequences::next_send(int peer, int tag) {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_[{peer, tag}]++;
}

void P2PSequences::await_turn(int peer, int tag, int64_t seq) {
  std::unique_lock<std::mutex> lock(mu_);
  turn_.wait(lock, [&] { return posted_[{peer, tag}] == seq; });
}

void P2PSequences::posted(int peer, int tag) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_[{peer, tag}]++;
  }
  turn_.notify_all();
}

c10::intrusive_ptr<c10d::Work> send_enveloped(const c10::intrusive_ptr<c10d::Backend>& engine,
                                              P2PSequences& sequences, const at::Tensor& host,
                                              int rank, int dst, int tag) {
  const int env_tag = envelope_tag("send", tag);
  std::vector<at::Tensor> envelope{
      at::tensor({kEnvelopeMagic, static_cast<int64_t>(host.scalar_type()),
                  static_cast<int64_t>(host.nbytes()), sequences.next_send(dst, tag)},
                 at::kLong)};
  auto envelope_work = engine->send(envelope, dst, env_tag);
  std::vector<at::Tensor> payload{host};
  auto payload_work = engine->send(payload, dst, tag);
  return c10::make_intrusive<SendWork>(std::move(envelope_work), std::move(payload_work), rank);
}

c10::intrusive_ptr<c10d::Work> recv_enveloped(const c10::intrusive_ptr<c10d::Backend>& engine,
                                              std::shared_ptr<P2PSequences> sequences,
                                              const at::Tensor& host, int rank, int src, int tag) {
  std::vector<at::Tensor> envelope{at::empty({kEnvelopeSize}, at::kLong)};
  const int env_tag = envelope_tag("recv", tag);
  auto envelope_work =
      src >= 0 ? engine->recv(envelope, src, env_tag) : engine->recvAnysource(envelope, env_tag);
  auto outcome = std::make_shared<RecvOutcome>();
  std::thread([=, envelope = envelope.front()] {
    int source = src;
    std::exception_ptr error;
    try {
      envelope_work->wait();
      if (source < 0) source = envelope_work->sourceRank();
      const int64_t* e = envelope.const_data_ptr<int64_t>();
      TORCH_CHECK(e[0] == kEnvelopeMagic, "tpu_dist recv: the message from rank ", source,
                  " has no envelope (a peer that is not tpu_dist?)");
      const int64_t dtype = e[1], nbytes = e[2], seq = e[3];
      const bool fits = nbytes == static_cast<int64_t>(host.nbytes());
      // A message of another size still has to be taken off the wire (the
      // sender waits for it, and the next message must find its own buffer).
      std::vector<at::Tensor> buffer{fits ? host : at::empty({nbytes}, at::kByte)};
      c10::intrusive_ptr<c10d::Work> payload_work;
      sequences->await_turn(source, tag, seq);
      try {
        payload_work = engine->recv(buffer, source, tag);
      } catch (...) {
        sequences->posted(source, tag);
        throw;
      }
      sequences->posted(source, tag);
      payload_work->wait();
      TORCH_CHECK(
          fits, "tpu_dist recv: rank ", source, " sent ", describe(dtype, nbytes),
          " but the tensor rank ", rank, " receives into holds ",
          describe(static_cast<int64_t>(host.scalar_type()), static_cast<int64_t>(host.nbytes())),
          "; the tensor was left as it was");
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(outcome->mu);
      outcome->error = error;
      outcome->source = source;
      outcome->done = true;
    }
    outcome->finished.notify_all();
  }).detach();
  return c10::make_intrusive<RecvWork>(std::move(outcome), rank,
                                       src >= 0 ? c10d::OpType::RECV : c10d::OpType::RECVANYSOURCE);
}

}  // namespace torch_tpu::dist
