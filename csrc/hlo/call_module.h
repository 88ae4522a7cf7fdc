// A module whose `main` calls previously lowered functions in sequence: how
// a DeferAndFuse region becomes one program without lowering its ops again.
//
// Each op of a region was lowered once, as a private function
// (Builder::function_text), when its key was first seen; the region's
// program is those functions plus a `main` that threads values from call to
// call. XLA inlines the calls and fuses across them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hlo/types.h"

namespace torch_tpu::hlo {

// A value of `main`: its parameter `index` (call < 0), or result `index` of
// call number `call`.
struct CallValue {
  int call = -1;
  int index = 0;
};

struct CalledFunction {
  std::string name;
  std::string text;  // Builder::function_text(name)
  std::vector<TensorType> params;
  std::vector<TensorType> results;
  // The functions `text` calls that are defined elsewhere (Builder::call):
  // the module holds each once, whichever functions call it.
  std::map<std::string, std::shared_ptr<const std::string>> externals;
};

struct CallSequence {
  std::vector<TensorType> params;
  struct Call {
    const CalledFunction* function;
    std::vector<CallValue> args;
  };
  std::vector<Call> calls;
  std::vector<CallValue> results;
  // (parameter, result index): the result may be written into the
  // parameter's memory when the caller donates it (see Builder::alias_result).
  std::vector<std::pair<int, int>> aliases;
  // Parameters fixed to a value (raw little-endian element bytes): `main`
  // defines them as constants instead of taking them, and its arguments are
  // the other parameters in order. XLA then folds them (a view's offset
  // becomes a static slice).
  std::map<int, std::vector<unsigned char>> constants;
};

// The module text; each distinct function is emitted once.
std::string call_module_text(const CallSequence& sequence);

}  // namespace torch_tpu::hlo
