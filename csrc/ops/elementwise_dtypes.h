// The dtypes each elementwise op's CPU kernel takes, and what the CPU raises
// for the others, so a tpu call is refused the same way before any StableHLO
// is built (a lowering handed a dtype it cannot take fails in the compiler,
// or worse, crashes it).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

namespace torch_tpu::ops {

// Dtype classes, as bits of a mask.
enum DtypeClass : uint8_t {
  kBoolClass = 1,
  kIntegerClass = 2,  // uint8, int8 ... int64
  kFloatClass = 4,    // float32, float64 (and the 8-bit floats)
  kComplexClass = 8,
  kHalfClass = 16,  // float16, bfloat16: some CPU kernels have no version for them
  kAnyClass = 31,
};

DtypeClass dtype_class(c10::ScalarType dtype);

struct DtypeRule {
  uint8_t classes = kAnyClass;  // the classes the op computes in
  // For a refused class whose CPU error is a RuntimeError with its own
  // message (rather than the dispatch macros' NotImplementedError).
  uint8_t runtime_error_classes = 0;
  const char* runtime_error_message = nullptr;
};

// The rule for the table op `name` (the op without its in-place underscore).
const DtypeRule& dtype_rule(const std::string& name);

// Raises what the CPU raises when `op_name` computes in `dtype`, which
// `rule` does not take.
[[noreturn]] void refuse_dtype(const DtypeRule& rule, const std::string& op_name,
                               c10::ScalarType dtype);
// The dispatch macros' NotImplementedError for `dtype`.
[[noreturn]] void refuse_dtype(const std::string& op_name, c10::ScalarType dtype);

// True for the out= overloads whose CPU kernel wants `out` in exactly the
// result dtype (TensorIterator's check_all_same_dtype, or the op's own
// check) rather than any dtype the result can be cast to.
bool out_dtype_must_match(const std::string& overload_name);

}  // namespace torch_tpu::ops
