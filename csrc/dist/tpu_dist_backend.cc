#include "dist/tpu_dist_backend.h"

#include "dist/collective_check.h"
#include "dist/host_staging.h"
#include "dist/p2p_envelope.h"
#include "dist/python_state_set_aside.h"
#include "dist/staged_work.h"

namespace torch_tpu::dist {
namespace {

// Runs a collective on host copies: `launch` stages the caller's tensors
// and hands the host tensors to the engine (whose work keeps them alive);
// the returned work writes the results back and reports `results`, the
// caller's tensors. The engine's work holds no Python object of the caller
// (python_state_set_aside.h).
template <typename Launch>
c10::intrusive_ptr<c10d::Work> staged(const char* op, c10d::OpType op_type, int rank,
                                      std::vector<at::Tensor> results, Launch&& launch) {
  HostStaging staging(op);
  c10::intrusive_ptr<c10d::Work> engine_work;
  {
    PythonStateSetAside no_python_state;
    engine_work = launch(staging);
  }
  return c10::make_intrusive<StagedWork>(std::move(engine_work), staging.take_write_back(),
                                         std::move(results), rank, op_type);
}

int64_t total_numel(const std::vector<at::Tensor>& tensors) {
  int64_t n = 0;
  for (const auto& t : tensors) n += t.numel();
  return n;
}

// The call every rank must make alike: `tensors` are what this rank
// contributes (all of one dtype in practice; the first one's is compared).
CollectiveCall call_of(const char* op, const std::vector<at::Tensor>& tensors, int64_t root = -1,
                       int64_t reduce_op = -1) {
  CollectiveCall call{op, tensors.empty() ? at::kFloat : tensors.front().scalar_type()};
  call.tensors = static_cast<int64_t>(tensors.size());
  call.numel = total_numel(tensors);
  call.root = root;
  call.reduce_op = reduce_op;
  return call;
}

int64_t reduce_code(const c10d::ReduceOp& op) { return static_cast<int64_t>(op.op_); }

// all_to_all_single's splits in rows; empty means equal parts.
std::vector<int64_t> splits_or_even(const std::vector<int64_t>& splits, int64_t rows, int size) {
  if (!splits.empty()) return splits;
  return std::vector<int64_t>(size, size > 0 ? rows / size : 0);
}

// A collective that leaves its tensors as they are (one rank reducing or
// broadcasting to itself): no staging, an already completed work.
c10::intrusive_ptr<c10d::Work> unchanged(const std::vector<at::Tensor>& tensors) {
  auto future =
      c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  future->markCompleted(c10::IValue(tensors));
  return c10d::Work::create_from_future(future);
}

bool identity_on_one_rank(int size, const c10d::ReduceOp& op) {
  return size == 1 && op.op_ != c10d::ReduceOp::PREMUL_SUM;
}

// Point-to-point ops move one tensor (as Gloo's do).
void check_single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "tpu_dist ", op, " takes a single tensor, got ", tensors.size());
}

std::vector<at::Tensor> flat(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<at::Tensor> all;
  for (const auto& list : lists) all.insert(all.end(), list.begin(), list.end());
  return all;
}

}  // namespace

TpuDistBackend::TpuDistBackend(c10::intrusive_ptr<c10d::Backend> engine, int rank, int size)
    : c10d::Backend(rank, size), engine_(std::move(engine)) {
  TORCH_CHECK(engine_, "tpu_dist: no engine backend");
  check_ = std::make_unique<CollectiveCheck>(*engine_, rank, size);
  sequences_ = std::make_shared<P2PSequences>();
}

void TpuDistBackend::setTimeout(std::chrono::milliseconds timeout) { engine_->setTimeout(timeout); }

void TpuDistBackend::setSequenceNumberForGroup() { engine_->setSequenceNumberForGroup(); }

uint64_t TpuDistBackend::getSequenceNumberForGroup() {
  return engine_->getSequenceNumberForGroup();
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                         const c10d::BroadcastOptions& opts) {
  check_->check(call_of("broadcast", tensors, opts.rootRank));
  if (size_ == 1) return unchanged(tensors);
  return staged("broadcast", c10d::OpType::BROADCAST, rank_, tensors, [&](HostStaging& s) {
    auto host = s.in_outs(tensors);
    return engine_->broadcast(host, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::AllreduceOptions& opts) {
  check_->check(call_of("all_reduce", tensors, -1, reduce_code(opts.reduceOp)));
  if (identity_on_one_rank(size_, opts.reduceOp)) return unchanged(tensors);
  return staged("all_reduce", c10d::OpType::ALLREDUCE, rank_, tensors, [&](HostStaging& s) {
    auto host = s.in_outs(tensors);
    return engine_->allreduce(host, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  check_->check(call_of("all_reduce_coalesced", tensors, -1, reduce_code(opts.reduceOp)));
  if (identity_on_one_rank(size_, opts.reduceOp)) return unchanged(tensors);
  return staged("all_reduce_coalesced", c10d::OpType::ALLREDUCE_COALESCED, rank_, tensors,
                [&](HostStaging& s) {
                  auto host = s.in_outs(tensors);
                  return engine_->allreduce_coalesced(host, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::reduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::ReduceOptions& opts) {
  // Every rank writes back what the engine left, as Gloo on CPU tensors does.
  check_->check(call_of("reduce", tensors, opts.rootRank, reduce_code(opts.reduceOp)));
  if (identity_on_one_rank(size_, opts.reduceOp)) return unchanged(tensors);
  return staged("reduce", c10d::OpType::REDUCE, rank_, tensors, [&](HostStaging& s) {
    auto host = s.in_outs(tensors);
    return engine_->reduce(host, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather", inputs));
  return staged("all_gather", c10d::OpType::ALLGATHER, rank_, flat(outputs), [&](HostStaging& s) {
    auto host_in = s.inputs(inputs);
    auto host_out = s.outputs(outputs);
    return engine_->allgather(host_out, host_in, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::_allgather_base(at::Tensor& output,
                                                               at::Tensor& input,
                                                               const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather_into_tensor", {input}));
  return staged("all_gather_into_tensor", c10d::OpType::_ALLGATHER_BASE, rank_, {output},
                [&](HostStaging& s) {
                  auto host_in = s.input(input);
                  auto host_out = s.output(output);
                  return engine_->_allgather_base(host_out, host_in, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather_coalesced", inputs));
  return staged("all_gather_coalesced", c10d::OpType::ALLGATHER_COALESCED, rank_, flat(outputs),
                [&](HostStaging& s) {
                  auto host_in = s.inputs(inputs);
                  auto host_out = s.outputs(outputs);
                  return engine_->allgather_coalesced(host_out, host_in, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather_into_tensor_coalesced", inputs));
  return staged("all_gather_into_tensor_coalesced", c10d::OpType::COALESCED, rank_, outputs,
                [&](HostStaging& s) {
                  auto host_in = s.inputs(inputs);
                  auto host_out = s.outputs(outputs);
                  return engine_->allgather_into_tensor_coalesced(host_out, host_in, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::GatherOptions& opts) {
  check_->check(call_of("gather", inputs, opts.rootRank));
  return staged("gather", c10d::OpType::GATHER, rank_, flat(outputs), [&](HostStaging& s) {
    auto host_in = s.inputs(inputs);
    auto host_out = s.outputs(outputs);
    return engine_->gather(host_out, host_in, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::scatter(std::vector<at::Tensor>& outputs,
                                                       std::vector<std::vector<at::Tensor>>& inputs,
                                                       const c10d::ScatterOptions& opts) {
  check_->check(call_of("scatter", outputs, opts.rootRank));
  return staged("scatter", c10d::OpType::SCATTER, rank_, outputs, [&](HostStaging& s) {
    auto host_in = s.inputs(inputs);
    auto host_out = s.outputs(outputs);
    return engine_->scatter(host_out, host_in, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_->check(call_of("reduce_scatter", outputs, -1, reduce_code(opts.reduceOp)));
  return staged("reduce_scatter", c10d::OpType::REDUCE_SCATTER, rank_, outputs,
                [&](HostStaging& s) {
                  auto host_in = s.inputs(inputs);
                  auto host_out = s.outputs(outputs);
                  return engine_->reduce_scatter(host_out, host_in, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_->check(call_of("reduce_scatter_tensor", {output}, -1, reduce_code(opts.reduceOp)));
  return staged("reduce_scatter_tensor", c10d::OpType::_REDUCE_SCATTER_BASE, rank_, {output},
                [&](HostStaging& s) {
                  auto host_in = s.input(input);
                  auto host_out = s.output(output);
                  return engine_->_reduce_scatter_base(host_out, host_in, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_->check(
      call_of("reduce_scatter_tensor_coalesced", outputs, -1, reduce_code(opts.reduceOp)));
  return staged("reduce_scatter_tensor_coalesced", c10d::OpType::COALESCED, rank_, outputs,
                [&](HostStaging& s) {
                  auto host_in = s.inputs(inputs);
                  auto host_out = s.outputs(outputs);
                  return engine_->reduce_scatter_tensor_coalesced(host_out, host_in, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& opts) {
  int64_t row = input.dim() > 0 && input.size(0) > 0 ? input.numel() / input.size(0) : 1;
  CollectiveCall call{"all_to_all_single", input.scalar_type(), 1, row};
  check_->check_splits(
      call, splits_or_even(input_split_sizes, input.dim() ? input.size(0) : 0, size_),
      splits_or_even(output_split_sizes, output.dim() ? output.size(0) : 0, size_));
  return staged("all_to_all_single", c10d::OpType::ALLTOALL_BASE, rank_, {output},
                [&](HostStaging& s) {
                  auto host_in = s.input(input);
                  auto host_out = s.output(output);
                  return engine_->alltoall_base(host_out, host_in, output_split_sizes,
                                                input_split_sizes, opts);
                });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::AllToAllOptions& opts) {
  check_->check(call_of("all_to_all", inputs));
  return staged("all_to_all", c10d::OpType::ALLTOALL, rank_, outputs, [&](HostStaging& s) {
    auto host_in = s.inputs(inputs);
    auto host_out = s.outputs(outputs);
    return engine_->alltoall(host_out, host_in, opts);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::send(std::vector<at::Tensor>& tensors, int dst_rank,
                                                    int tag) {
  check_single(tensors, "send");
  return staged("send", c10d::OpType::SEND, rank_, tensors, [&](HostStaging& s) {
    return send_enveloped(engine_, *sequences_, s.input(tensors.front()), rank_, dst_rank, tag);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::recv(std::vector<at::Tensor>& tensors, int src_rank,
                                                    int tag) {
  check_single(tensors, "recv");
  return staged("recv", c10d::OpType::RECV, rank_, tensors, [&](HostStaging& s) {
    return recv_enveloped(engine_, sequences_, s.output(tensors.front()), rank_, src_rank, tag);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::recvAnysource(std::vector<at::Tensor>& tensors,
                                                             int tag) {
  check_single(tensors, "recv");
  return staged("recv", c10d::OpType::RECVANYSOURCE, rank_, tensors, [&](HostStaging& s) {
    return recv_enveloped(engine_, sequences_, s.output(tensors.front()), rank_, -1, tag);
  });
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::barrier(const c10d::BarrierOptions& opts) {
  // Device work queued before the barrier is not waited for by Gloo; the
  // collectives themselves read their inputs synchronously, so there is no
  // tpu work of ours in flight to order here.
  PythonStateSetAside no_python_state;
  return engine_->barrier(opts);
}

void TpuDistBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  PythonStateSetAside no_python_state;
  engine_->monitoredBarrier(opts, wait_all_ranks);
}

}  // namespace torch_tpu::dist
