// In-memory executable cache: program key -> compiled executable.
//
// Keys are built by the lowering from the op's structure, static attributes
// and input shapes/dtypes/view parameters, so a hit never needs the program
// text; the text is only built (by `build_text`) on a miss.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "pjrt/executable.h"

namespace torch_tpu {

class ExecutableCache {
 public:
  static ExecutableCache& get();

  pjrt::ExecutablePtr get_or_compile(const std::string& key,
                                     const std::function<std::string()>& build_text);
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, pjrt::ExecutablePtr> entries_;
};

}  // namespace torch_tpu
