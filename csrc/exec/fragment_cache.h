// Op key -> the op lowered once as a private function, for DeferAndFuse.
//
// A deferred op cannot keep its lowering: kernels build lowerings that refer
// to their own locals. It does not need to. An op's program depends only on
// its key (the op's structure, static attributes, input types and views), so
// the first time a key is deferred its lowering runs at once into a function
// that every later region with that op calls (hlo/call_module.h). A region's
// text is then assembled from these functions only when the region's own
// key misses the executable cache; the op's lowering never runs twice.
#pragma once

#include <c10/util/FunctionRef.h>

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "hlo/builder.h"
#include "hlo/call_module.h"

namespace torch_tpu {

class FragmentCache {
 public:
  static FragmentCache& get();

  // The function for `key`; on a miss `lower` builds its parameters, body
  // and results, once. The result lives as long as the process.
  const hlo::CalledFunction& find_or_lower(const std::string& key,
                                           c10::function_ref<void(hlo::Builder&)> lower);

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, const hlo::CalledFunction*> by_key_;
  std::deque<hlo::CalledFunction> functions_;  // stable addresses
};

}  // namespace torch_tpu
