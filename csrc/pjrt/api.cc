#include "pjrt/api.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {
namespace {

// Oldest PJRT C API minor version whose struct layouts we rely on. Fields we
// use were all present by 0.54 (serialization, memory stats, OnReady).
constexpr int kMinMinorVersion = 54;

using GetPjrtApiFn = const PJRT_Api* (*)();

}  // namespace

Api::Api(std::string path, const PJRT_Api* api) : path_(std::move(path)), api_(api) {
  major_ = api_->pjrt_api_version.major_version;
  minor_ = api_->pjrt_api_version.minor_version;
}

std::string Api::version_string() const {
  return std::to_string(major_) + "." + std::to_string(minor_);
}

std::shared_ptr<Api> Api::load(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<Api>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(path);
  if (it != loaded.end()) return it->second;

  // RTLD_LOCAL: plugins bundle their own copies of LLVM, protobuf and absl,
  // which must not interpose on PyTorch's symbols or on each other's.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw Error(static_cast<int>(ErrorCode::kNotFound),
                "cannot load PJRT plugin " + path + ": " + (why ? why : "unknown dlopen error"));
  }
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) {
    throw Error(static_cast<int>(ErrorCode::kNotFound),
                "PJRT plugin " + path + " does not export GetPjrtApi");
  }
  auto api = from_table(get_api(), path);
  watch_for_fork();
  loaded.emplace(path, api);
  return api;
}

std::shared_ptr<Api> Api::from_table(const PJRT_Api* raw, const std::string& path) {
  if (raw == nullptr || raw->struct_size < offsetof(PJRT_Api, PJRT_Error_GetCode) + sizeof(void*)) {
    throw Error(static_cast<int>(ErrorCode::kFailedPrecondition),
                "PJRT plugin " + path + " returned an invalid PJRT_Api table");
  }
  std::shared_ptr<Api> api(new Api(path, raw));
  if (api->major_ != PJRT_API_MAJOR || api->minor_ < kMinMinorVersion) {
    throw Error(static_cast<int>(ErrorCode::kFailedPrecondition),
                "PJRT plugin " + path + " implements PJRT C API " + api->version_string() +
                    "; torch_tpu needs " + std::to_string(PJRT_API_MAJOR) + "." +
                    std::to_string(kMinMinorVersion) + " or newer (built with " +
                    std::to_string(PJRT_API_MAJOR) + "." + std::to_string(PJRT_API_MINOR) + ")");
  }
  // Plugins that need one-time initialization expose it here; older plugins
  // leave the slot empty.
  if (api->has(offsetof(PJRT_Api, PJRT_Plugin_Initialize)) &&
      raw->PJRT_Plugin_Initialize != nullptr) {
    PaddedArgs<PJRT_Plugin_Initialize_Args> args;
    api->check(raw->PJRT_Plugin_Initialize(args.get()), "PJRT_Plugin_Initialize");
  }
  return api;
}

bool Api::has(size_t offset) const { return offset + sizeof(void*) <= api_->struct_size; }

Error Api::to_exception(PJRT_Error* error, const char* what) const {
  PaddedArgs<PJRT_Error_Message_Args> msg;
  msg->error = error;
  api_->PJRT_Error_Message(msg.get());
  std::string text(msg->message, msg->message_size);
  PaddedArgs<PJRT_Error_GetCode_Args> code;
  code->error = error;
  int code_value = static_cast<int>(ErrorCode::kUnknown);
  if (api_->PJRT_Error_GetCode(code.get()) == nullptr) {
    code_value = static_cast<int>(code->code);
  }
  PaddedArgs<PJRT_Error_Destroy_Args> destroy;
  destroy->error = error;
  api_->PJRT_Error_Destroy(destroy.get());
  return Error(code_value, std::string(what) + ": " + text);
}

void Api::check(PJRT_Error* error, const char* what) const {
  if (error != nullptr) throw to_exception(error, what);
}

}  // namespace torch_tpu::pjrt
