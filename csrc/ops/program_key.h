// Cache keys for lowered programs: the op name plus every static attribute
// the lowering depends on (input types and views are added by
// TensorProgram). One spelling for every kernel, so two attributes can never
// collide by formatting.
#pragma once

#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace torch_tpu::ops {

inline void append_key(std::string& k, int64_t v) { k += std::to_string(v) + ","; }
inline void append_key(std::string& k, int v) { append_key(k, static_cast<int64_t>(v)); }
inline void append_key(std::string& k, bool v) { k += v ? "T," : "F,"; }
inline void append_key(std::string& k, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  k += "d" + std::to_string(bits) + ",";
}
inline void append_key(std::string& k, const char* v) { k += std::string(v) + ","; }
inline void append_key(std::string& k, const std::string& v) { k += v + ","; }
inline void append_key(std::string& k, c10::ArrayRef<int64_t> v) {
  k += "[";
  for (int64_t x : v) k += std::to_string(x) + ",";
  k += "],";
}
inline void append_key(std::string& k, const std::vector<int64_t>& v) {
  append_key(k, c10::ArrayRef<int64_t>(v));
}

template <typename... Attrs>
std::string program_key(const char* op, const Attrs&... attrs) {
  std::string k = std::string(op) + ":";
  (append_key(k, attrs), ...);
  return k;
}

}  // namespace torch_tpu::ops
