// Forward-compatible PJRT argument structs.
//
// A PJRT plugin rejects an args struct whose struct_size is smaller than the
// one it was compiled with, and reads any field it knows about. A plugin newer
// than our header may therefore read fields past the end of our struct. We
// keep every args struct in zero-filled storage larger than the struct and
// report that larger size, so fields added after our header read as zero
// (which PJRT defines as "absent / default" for every added field).
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

namespace torch_tpu::pjrt {

// Room for fields a newer plugin may append; PJRT structs grow a few fields
// per year, so 256 bytes is many years of headroom.
inline constexpr size_t kArgsPadding = 256;

template <typename T>
class PaddedArgs {
  static_assert(std::is_trivially_copyable_v<T>, "PJRT args are C structs");

 public:
  PaddedArgs() {
    std::memset(storage_, 0, sizeof(storage_));
    new (storage_) T();
    get()->struct_size = sizeof(storage_);
  }
  PaddedArgs(const PaddedArgs&) = delete;
  PaddedArgs& operator=(const PaddedArgs&) = delete;

  T* get() { return std::launder(reinterpret_cast<T*>(storage_)); }
  T* operator->() { return get(); }

 private:
  alignas(alignof(std::max_align_t)) unsigned char storage_[sizeof(T) + kArgsPadding];
};

}  // namespace torch_tpu::pjrt
