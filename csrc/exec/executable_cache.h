// In-memory executable cache: program key -> compiled executable.
//
// Keys are built by the lowering from the op's structure, static attributes
// and input shapes/dtypes/view parameters, so a hit never needs the program
// text; the text is only built (by `build_text`) on a miss. Keys may hold
// raw bytes (they are built on every launch, so they are not formatted as
// text); `label` is what errors and TORCH_TPU_DUMP_HLO print instead.
#pragma once

#include <c10/util/FunctionRef.h>

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pjrt/executable.h"

namespace torch_tpu {

class ExecutableCache {
 public:
  static ExecutableCache& get();

  pjrt::ExecutablePtr get_or_compile(const std::string& key,
                                     c10::function_ref<std::string()> build_text,
                                     std::string_view label = {});
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, pjrt::ExecutablePtr> entries_;
};

}  // namespace torch_tpu
