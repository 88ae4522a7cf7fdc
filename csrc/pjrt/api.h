// Loading a PJRT plugin and calling into its function table safely.
//
// The plugin is dlopen'ed once and never closed (plugins keep threads and
// static state that do not survive unloading). Every call checks that the
// function slot lies inside the plugin's PJRT_Api (an older plugin has a
// shorter table) and is non-null, and turns a returned PJRT_Error into
// torch_tpu::pjrt::Error.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "pjrt/error.h"
#include "pjrt/fork_guard.h"
#include "pjrt_c_api.h"

namespace torch_tpu::pjrt {

class Api {
 public:
  // Loads the plugin at `path` (once per path per process) and validates its
  // API version. Throws Error on failure.
  static std::shared_ptr<Api> load(const std::string& path);
  // Wraps a function table obtained otherwise (a test's fake plugin), with
  // the same validation and one-time initialization as load(); `name`
  // stands for the path in messages.
  static std::shared_ptr<Api> from_table(const PJRT_Api* table, const std::string& name);

  const PJRT_Api* raw() const { return api_; }
  const std::string& path() const { return path_; }
  int major_version() const { return major_; }
  int minor_version() const { return minor_; }
  std::string version_string() const;

  // Returns the function in `slot` (a pointer-to-member of PJRT_Api), or
  // throws if the plugin's table is too short or the slot is empty, or if
  // this process is a child forked after the plugin was loaded.
  template <typename Fn>
  Fn* fn(Fn* PJRT_Api::* slot, const char* name) const {
    if (in_forked_child()) {
      throw Error(static_cast<int>(ErrorCode::kFailedPrecondition), forked_child_message());
    }
    const auto offset = reinterpret_cast<size_t>(&(static_cast<const PJRT_Api*>(nullptr)->*slot));
    if (offset + sizeof(Fn*) > api_->struct_size || api_->*slot == nullptr) {
      throw Error(static_cast<int>(ErrorCode::kUnimplemented),
                  std::string("PJRT plugin ") + path_ + " does not provide " + name);
    }
    return api_->*slot;
  }

  bool has(size_t offset) const;

  // Converts a PJRT_Error into an exception (and destroys it). No-op on null.
  void check(PJRT_Error* error, const char* what) const;
  // Reads message and code of an error, destroying it.
  Error to_exception(PJRT_Error* error, const char* what) const;

 private:
  Api(std::string path, const PJRT_Api* api);
  std::string path_;
  const PJRT_Api* api_;
  int major_ = 0;
  int minor_ = 0;
};

// Calls api.fn(&PJRT_Api::NAME) with args, raising on error.
#define TPU_PJRT_CALL(api, NAME, args) (api).check((api).fn(&PJRT_Api::NAME, #NAME)(args), #NAME)

}  // namespace torch_tpu::pjrt
