#include "pjrt/event.h"

#include "pjrt/error_report.h"
#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

bool Event::is_ready() const {
  PaddedArgs<PJRT_Event_IsReady_Args> args;
  args->event = event_.get();
  TPU_PJRT_CALL(api(), PJRT_Event_IsReady, args.get());
  return args->is_ready;
}

void Event::await() const {
  PaddedArgs<PJRT_Event_Await_Args> args;
  args->event = event_.get();
  TPU_PJRT_CALL(api(), PJRT_Event_Await, args.get());
  throw_if_failed();
}

void Event::throw_if_failed() const {
  PaddedArgs<PJRT_Event_Error_Args> err;
  err->event = event_.get();
  TPU_PJRT_CALL(api(), PJRT_Event_Error, err.get());
}

namespace {
struct OnReadyContext {
  std::shared_ptr<const Api> api;
  std::function<void(const std::string&)> callback;
};

// Runs on a plugin thread (or inline): nothing may escape into the plugin.
void on_ready_trampoline(PJRT_Error* error, void* user_arg) {
  std::unique_ptr<OnReadyContext> ctx(static_cast<OnReadyContext*>(user_arg));
  try {
    std::string message;
    if (error != nullptr) {
      message = ctx->api->to_exception(error, "async PJRT operation").what();
    }
    ctx->callback(message);
  } catch (const std::exception& e) {
    report_error(std::string("an event's on-ready callback failed: ") + e.what());
  } catch (...) {
    report_error("an event's on-ready callback failed");
  }
}
}  // namespace

void Event::on_ready(std::function<void(const std::string& error)> callback) const {
  auto ctx = std::make_unique<OnReadyContext>();
  ctx->api = event_.api_ptr();
  ctx->callback = std::move(callback);
  PaddedArgs<PJRT_Event_OnReady_Args> args;
  args->event = event_.get();
  args->callback = &on_ready_trampoline;
  args->user_arg = ctx.get();
  TPU_PJRT_CALL(api(), PJRT_Event_OnReady, args.get());
  ctx.release();  // owned by the trampoline now
}

}  // namespace torch_tpu::pjrt
