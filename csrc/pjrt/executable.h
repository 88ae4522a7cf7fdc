// RAII over PJRT_LoadedExecutable: a compiled program bound to a client.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pjrt/api.h"
#include "pjrt/buffer.h"
#include "pjrt/event.h"
#include "pjrt/owned.h"

namespace torch_tpu::pjrt {

struct ExecuteResult {
  std::vector<BufferPtr> outputs;
  EventPtr done;  // fires when the execution finished (or failed)
};

class LoadedExecutable {
 public:
  // Takes ownership first, so a failing query below destroys the executable.
  explicit LoadedExecutable(Owned<PJRT_LoadedExecutable> executable);
  LoadedExecutable(const LoadedExecutable&) = delete;
  LoadedExecutable& operator=(const LoadedExecutable&) = delete;

  size_t num_outputs() const { return num_outputs_; }
  // Launches on `device` (a PJRT_Device of the owning client) and returns at
  // once; outputs may be passed to further executions before they are ready.
  // An argument the program aliases to a result (Builder::alias_result) is
  // donated, its buffer deleted and its memory reused for the result,
  // unless its index is in `non_donatable` (sorted), where XLA copies it.
  ExecuteResult execute(PJRT_Buffer* const* args, size_t num_args, PJRT_Device* device,
                        const int64_t* non_donatable = nullptr, size_t num_non_donatable = 0) const;
  ExecuteResult execute(const std::vector<PJRT_Buffer*>& args, PJRT_Device* device,
                        const std::vector<int64_t>& non_donatable = {}) const {
    return execute(args.data(), args.size(), device, non_donatable.data(), non_donatable.size());
  }
  // Plugin-specific bytes that Client::deserialize() turns back into an
  // executable without recompiling.
  std::string serialize() const;

 private:
  const Api& api() const { return executable_.api(); }
  // Destroyed in reverse order: the unloaded view before the executable.
  Owned<PJRT_LoadedExecutable> executable_;
  Owned<PJRT_Executable> unloaded_;
  size_t num_outputs_ = 0;
};

using ExecutablePtr = std::shared_ptr<LoadedExecutable>;

}  // namespace torch_tpu::pjrt
