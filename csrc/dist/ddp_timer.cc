// DDP's reducer asks a per-device-type Timer for its iteration statistics
// (forward, backward compute and communication times, which DDP's logger
// reports through `_get_ddp_logging_data()`); with no timer registered for
// tpu it warns on every DDP model and reports none. This one keeps host
// timestamps, as PyTorch's CPU timer does: device work is asynchronous, so
// they say when the host issued each phase, not when the device ran it.
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

namespace torch_tpu::dist {
namespace {

class TpuHostTimer : public c10d::Timer {
 public:
  explicit TpuHostTimer(c10::Device /*device*/) {}

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    auto start_time = getTimestamp(start);
    auto end_time = getTimestamp(end);
    if (!start_time || !end_time || *end_time < *start_time) return std::nullopt;
    return *end_time - *start_time;
  }
};

}  // namespace
}  // namespace torch_tpu::dist

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::kPrivateUse1, torch_tpu::dist::TpuHostTimer)
}  // namespace c10d
