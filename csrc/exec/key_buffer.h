// A string to build a cache key in on the launch path, borrowed from the
// calling thread and given back at the end of the scope.
//
// Keys are built on every launch; a fresh std::string per launch is one or
// more heap allocations per op (keys are longer than the small-string
// buffer), which on the CPU plugin contend with the plugin's own threads
// for the allocator. A borrowed string keeps its capacity between
// launches. Borrows nest (a lowering may launch another program while its
// own key is alive): each live KeyBuffer on a thread has a string of its
// own.
#pragma once

#include <string>

namespace torch_tpu {

class KeyBuffer {
 public:
  KeyBuffer();
  ~KeyBuffer();
  KeyBuffer(const KeyBuffer&) = delete;
  KeyBuffer& operator=(const KeyBuffer&) = delete;

  // Empty when borrowed.
  std::string& str() { return *string_; }

 private:
  std::string* string_;
};

}  // namespace torch_tpu
