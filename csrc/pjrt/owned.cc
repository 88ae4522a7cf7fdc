#include "pjrt/owned.h"

#include "pjrt/error_report.h"
#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {
namespace {

// Calls the destroy function in `slot` on args filled by `fill`; a missing
// slot or a returned error is reported, never thrown.
template <typename Args, typename Fill>
void destroy_with(const Api& api, PJRT_Error* (*PJRT_Api::*slot)(Args*), const char* name,
                  Fill fill) noexcept {
  try {
    PaddedArgs<Args> args;
    fill(*args.get());
    PJRT_Error* error = api.fn(slot, name)(args.get());
    if (error != nullptr) report_error(api.to_exception(error, name).what());
  } catch (const std::exception& e) {
    report_error(e.what());
  }
}

}  // namespace

void destroy_raw(const Api& api, PJRT_Buffer* buffer) noexcept {
  destroy_with(api, &PJRT_Api::PJRT_Buffer_Destroy, "PJRT_Buffer_Destroy",
               [&](PJRT_Buffer_Destroy_Args& a) { a.buffer = buffer; });
}

void destroy_raw(const Api& api, PJRT_Event* event) noexcept {
  destroy_with(api, &PJRT_Api::PJRT_Event_Destroy, "PJRT_Event_Destroy",
               [&](PJRT_Event_Destroy_Args& a) { a.event = event; });
}

void destroy_raw(const Api& api, PJRT_Executable* executable) noexcept {
  destroy_with(api, &PJRT_Api::PJRT_Executable_Destroy, "PJRT_Executable_Destroy",
               [&](PJRT_Executable_Destroy_Args& a) { a.executable = executable; });
}

void destroy_raw(const Api& api, PJRT_LoadedExecutable* executable) noexcept {
  destroy_with(api, &PJRT_Api::PJRT_LoadedExecutable_Destroy, "PJRT_LoadedExecutable_Destroy",
               [&](PJRT_LoadedExecutable_Destroy_Args& a) { a.executable = executable; });
}

void destroy_raw(const Api& api, PJRT_Client* client) noexcept {
  destroy_with(api, &PJRT_Api::PJRT_Client_Destroy, "PJRT_Client_Destroy",
               [&](PJRT_Client_Destroy_Args& a) { a.client = client; });
}

}  // namespace torch_tpu::pjrt
