#include "dist/tpu_dist_backend.h"

#include "dist/collective_check.h"
#include "dist/host_staging.h"
#include "dist/staged_work.h"

namespace torch_tpu::dist {
namespace {

// Finishes a staged collective: the engine's work, the write-back, and the
// caller's tensors as its result.
c10::intrusive_ptr<c10d::Work> staged(c10::intrusive_ptr<c10d::Work> engine_work,
                                      HostStaging& staging, std::vector<at::Tensor> results,
                                      int rank, c10d::OpType op_type) {
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
}

void TpuDistBackend::setTimeout(std::chrono::milliseconds timeout) { engine_->setTimeout(timeout); }

void TpuDistBackend::setSequenceNumberForGroup() { engine_->setSequenceNumberForGroup(); }

uint64_t TpuDistBackend::getSequenceNumberForGroup() {
  return engine_->getSequenceNumberForGroup();
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                         const c10d::BroadcastOptions& opts) {
  check_->check(call_of("broadcast", tensors, opts.rootRank));
  HostStaging staging("broadcast");
  auto host = staging.in_outs(tensors);
  auto work = engine_->broadcast(host, opts);
  return staged(work, staging, tensors, rank_, c10d::OpType::BROADCAST);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::AllreduceOptions& opts) {
  check_->check(call_of("all_reduce", tensors, -1, reduce_code(opts.reduceOp)));
  HostStaging staging("all_reduce");
  auto host = staging.in_outs(tensors);
  auto work = engine_->allreduce(host, opts);
  return staged(work, staging, tensors, rank_, c10d::OpType::ALLREDUCE);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  check_->check(call_of("all_reduce_coalesced", tensors, -1, reduce_code(opts.reduceOp)));
  HostStaging staging("all_reduce_coalesced");
  auto host = staging.in_outs(tensors);
  auto work = engine_->allreduce_coalesced(host, opts);
  return staged(work, staging, tensors, rank_, c10d::OpType::ALLREDUCE_COALESCED);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::reduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::ReduceOptions& opts) {
  // Every rank writes back what the engine left, as Gloo on CPU tensors does.
  check_->check(call_of("reduce", tensors, opts.rootRank, reduce_code(opts.reduceOp)));
  HostStaging staging("reduce");
  auto host = staging.in_outs(tensors);
  auto work = engine_->reduce(host, opts);
  return staged(work, staging, tensors, rank_, c10d::OpType::REDUCE);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather", inputs));
  HostStaging staging("all_gather");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->allgather(host_out, host_in, opts);
  return staged(work, staging, flat(outputs), rank_, c10d::OpType::ALLGATHER);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::_allgather_base(at::Tensor& output,
                                                               at::Tensor& input,
                                                               const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather_into_tensor", {input}));
  HostStaging staging("all_gather_into_tensor");
  auto host_in = staging.input(input);
  auto host_out = staging.output(output);
  auto work = engine_->_allgather_base(host_out, host_in, opts);
  return staged(work, staging, {output}, rank_, c10d::OpType::_ALLGATHER_BASE);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather_coalesced", inputs));
  HostStaging staging("all_gather_coalesced");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->allgather_coalesced(host_out, host_in, opts);
  return staged(work, staging, flat(outputs), rank_, c10d::OpType::ALLGATHER_COALESCED);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  check_->check(call_of("all_gather_into_tensor_coalesced", inputs));
  HostStaging staging("all_gather_into_tensor_coalesced");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->allgather_into_tensor_coalesced(host_out, host_in, opts);
  return staged(work, staging, outputs, rank_, c10d::OpType::COALESCED);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::GatherOptions& opts) {
  check_->check(call_of("gather", inputs, opts.rootRank));
  HostStaging staging("gather");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->gather(host_out, host_in, opts);
  return staged(work, staging, flat(outputs), rank_, c10d::OpType::GATHER);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::scatter(std::vector<at::Tensor>& outputs,
                                                       std::vector<std::vector<at::Tensor>>& inputs,
                                                       const c10d::ScatterOptions& opts) {
  check_->check(call_of("scatter", outputs, opts.rootRank));
  HostStaging staging("scatter");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->scatter(host_out, host_in, opts);
  return staged(work, staging, outputs, rank_, c10d::OpType::SCATTER);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_->check(call_of("reduce_scatter", outputs, -1, reduce_code(opts.reduceOp)));
  HostStaging staging("reduce_scatter");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->reduce_scatter(host_out, host_in, opts);
  return staged(work, staging, outputs, rank_, c10d::OpType::REDUCE_SCATTER);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_->check(call_of("reduce_scatter_tensor", {output}, -1, reduce_code(opts.reduceOp)));
  HostStaging staging("reduce_scatter_tensor");
  auto host_in = staging.input(input);
  auto host_out = staging.output(output);
  auto work = engine_->_reduce_scatter_base(host_out, host_in, opts);
  return staged(work, staging, {output}, rank_, c10d::OpType::_REDUCE_SCATTER_BASE);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_->check(
      call_of("reduce_scatter_tensor_coalesced", outputs, -1, reduce_code(opts.reduceOp)));
  HostStaging staging("reduce_scatter_tensor_coalesced");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->reduce_scatter_tensor_coalesced(host_out, host_in, opts);
  return staged(work, staging, outputs, rank_, c10d::OpType::COALESCED);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& opts) {
  int64_t row = input.dim() > 0 && input.size(0) > 0 ? input.numel() / input.size(0) : 1;
  CollectiveCall call{"all_to_all_single", input.scalar_type(), 1, row};
  check_->check_splits(
      call, splits_or_even(input_split_sizes, input.dim() ? input.size(0) : 0, size_),
      splits_or_even(output_split_sizes, output.dim() ? output.size(0) : 0, size_));
  HostStaging staging("all_to_all_single");
  auto host_in = staging.input(input);
  auto host_out = staging.output(output);
  auto work =
      engine_->alltoall_base(host_out, host_in, output_split_sizes, input_split_sizes, opts);
  return staged(work, staging, {output}, rank_, c10d::OpType::ALLTOALL_BASE);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::AllToAllOptions& opts) {
  check_->check(call_of("all_to_all", inputs));
  HostStaging staging("all_to_all");
  auto host_in = staging.inputs(inputs);
  auto host_out = staging.outputs(outputs);
  auto work = engine_->alltoall(host_out, host_in, opts);
  return staged(work, staging, outputs, rank_, c10d::OpType::ALLTOALL);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::send(std::vector<at::Tensor>& tensors, int dst_rank,
                                                    int tag) {
  HostStaging staging("send");
  auto host = staging.inputs(tensors);
  auto work = engine_->send(host, dst_rank, tag);
  // The host copies must outlive the engine's send: the work keeps them.
  return staged(work, staging, host, rank_, c10d::OpType::SEND);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::recv(std::vector<at::Tensor>& tensors, int src_rank,
                                                    int tag) {
  HostStaging staging("recv");
  auto host = staging.outputs(tensors);
  auto work = engine_->recv(host, src_rank, tag);
  return staged(work, staging, tensors, rank_, c10d::OpType::RECV);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::recvAnysource(std::vector<at::Tensor>& tensors,
                                                             int tag) {
  HostStaging staging("recv");
  auto host = staging.outputs(tensors);
  auto work = engine_->recvAnysource(host, tag);
  return staged(work, staging, tensors, rank_, c10d::OpType::RECVANYSOURCE);
}

c10::intrusive_ptr<c10d::Work> TpuDistBackend::barrier(const c10d::BarrierOptions& opts) {
  // Device work queued before the barrier is not waited for by Gloo; the
  // collectives themselves read their inputs synchronously, so there is no
  // tpu work of ours in flight to order here.
  return engine_->barrier(opts);
}

void TpuDistBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  engine_->monitoredBarrier(opts, wait_all_ranks);
}

}  // namespace torch_tpu::dist
