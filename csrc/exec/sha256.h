// SHA-256 (FIPS 180-4), for the persistent executable cache's keys and
// entry checksums: a digest that names an entry must not collide, and one
// that checks an entry must catch any corruption.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace torch_tpu {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  // The digest of everything updated so far (the object is spent after).
  std::array<uint8_t, 32> digest();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

// Lower-case hex of `bytes`.
std::string to_hex(const uint8_t* bytes, size_t n);

}  // namespace torch_tpu
