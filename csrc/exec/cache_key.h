// Appending values to an executable cache key as raw bytes.
//
// Keys are built on every launch, so they are not formatted as text: a
// fixed-width binary spelling is both cheaper and unambiguous (no two
// sequences of appended values produce the same bytes unless every value
// is equal, since every field has a fixed width or a length prefix).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace torch_tpu {

template <typename T>
inline void append_bytes(std::string& key, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "only plain values go into a key as bytes");
  key.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename Range>
inline void append_sequence(std::string& key, const Range& values) {
  append_bytes(key, static_cast<uint32_t>(values.size()));
  for (const auto& v : values) append_bytes(key, v);
}

// Writes the same bytes as append_bytes into room made in the key
// beforehand: a key of many fields costs one resize instead of an append
// (a capacity check and a copy call) per field.
class KeyWriter {
 public:
  explicit KeyWriter(char* at) : at_(at) {}
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "only plain values go into a key as bytes");
    std::memcpy(at_, &value, sizeof(T));
    at_ += sizeof(T);
  }
  void put_bytes(const void* bytes, size_t n) {
    std::memcpy(at_, bytes, n);
    at_ += n;
  }
  const char* position() const { return at_; }

 private:
  char* at_;
};

}  // namespace torch_tpu
