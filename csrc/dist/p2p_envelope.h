// Point-to-point messages with an envelope: send/recv whose sizes differ
// raise instead of aborting the process.
//
// Gloo aborts the receiving process from its transport thread when a
// message is larger than the buffer posted for it (and silently leaves the
// tail of the buffer as it was when it is smaller). So every tpu_dist send
// first sends a small envelope (dtype, byte count, and a sequence number per
// peer and tag) on a tag of its own, then the payload; every recv receives
// the envelope and only then posts a buffer of the size the envelope names:
// the caller's buffer when the sizes agree, a scratch buffer otherwise, whose
// contents are dropped and whose recv then raises, naming both sides. The
// sender completes as usual.
//
// A recv must not wait for its envelope when it is posted (an irecv posted
// before the matching isend of a peer that waits on its own send would
// deadlock): a thread per pending recv waits for the envelope and posts the
// payload's buffer. Payload buffers from one peer on one tag are posted in
// the order that peer sent them (the envelope's sequence number), so recvs
// from any source stay matched to their own payloads.
#pragma once

#include <ATen/ATen.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <utility>

namespace torch_tpu::dist {

// Sequence numbers of the messages exchanged with each (peer, tag).
class P2PSequences {
 public:
  int64_t next_send(int peer, int tag);
  // Blocks until the payload of message `seq` from (peer, tag) is next to
  // be posted.
  void await_turn(int peer, int tag, int64_t seq);
  // Message `seq`'s payload buffer was posted: the next one may go.
  void posted(int peer, int tag);

 private:
  std::mutex mu_;
  std::condition_variable turn_;
  std::map<std::pair<int, int>, int64_t> sent_;
  std::map<std::pair<int, int>, int64_t> posted_;
};

// Sends `host` (one contiguous CPU tensor) to `dst` in an envelope.
c10::intrusive_ptr<c10d::Work> send_enveloped(const c10::intrusive_ptr<c10d::Backend>& engine,
                                              P2PSequences& sequences, const at::Tensor& host,
                                              int rank, int dst, int tag);

// Receives into `host` (one contiguous CPU tensor) from `src`, or from any
// source when `src` is negative; the work raises at wait() when the sender
// sent another number of bytes.
c10::intrusive_ptr<c10d::Work> recv_enveloped(const c10::intrusive_ptr<c10d::Backend>& engine,
                                              std::shared_ptr<P2PSequences> sequences,
                                              const at::Tensor& host, int rank, int src, int tag);

}  // namespace torch_tpu::dist
