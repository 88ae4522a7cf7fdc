// Runs the ATen ops a composite kernel is written in as one program.
//
// A kernel written as several tpu ops (attention: two products, a softmax,
// the masked-row check, a layout copy) costs, in Strict mode, one launch and
// one executable per step, and for every new shape one compile per step. In
// the scope of a OneProgram those ops join a DeferAndFuse region instead,
// which finish() runs: one launch, one executable per shape, and the
// intermediates never reach memory. Results are the same (DeferAndFuse runs
// the same lowerings); only Strict mode is changed: Debug keeps its
// per-op checks, and under DeferAndFuse (which torch.compile's graphs run
// in) the ops already join the open region.
#pragma once

#include <utility>

namespace torch_tpu {

class OneProgram {
 public:
  OneProgram();
  // Runs the region (a launch error raises here, as the ops' own would).
  void finish();
  // Without finish() (the kernel raised): leaves the scope; the ops
  // recorded so far run when their results are next read.
  ~OneProgram();
  OneProgram(const OneProgram&) = delete;
  OneProgram& operator=(const OneProgram&) = delete;

 private:
  bool active_;
};

// A kernel function run in a OneProgram scope, for registering a kernel
// written as several tpu ops: TORCH_FN(AsOneProgram<&kernel>::call). The
// kernel's own locals are gone when it returns, so only its results are
// written to memory.
template <auto Kernel>
struct AsOneProgram;

template <typename Result, typename... Args, Result (*Kernel)(Args...)>
struct AsOneProgram<Kernel> {
  static Result call(Args... args) {
    OneProgram scope;
    Result result = Kernel(std::forward<Args>(args)...);
    scope.finish();
    return result;
  }
};

}  // namespace torch_tpu
