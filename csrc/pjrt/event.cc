#include "pjrt/event.h"

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

Event::Event(std::shared_ptr<const Api> api, PJRT_Event* event)
    : api_(std::move(api)), event_(event) {}

Event::~Event() {
  if (in_forked_child()) return;  // see fork_guard.h
  if (event_ == nullptr) return;
  PaddedArgs<PJRT_Event_Destroy_Args> args;
  args->event = event_;
  // A destructor must not throw; a failing destroy only leaks.
  PJRT_Error* error = api_->raw()->PJRT_Event_Destroy(args.get());
  if (error != nullptr) (void)api_->to_exception(error, "PJRT_Event_Destroy");
}

bool Event::is_ready() const {
  PaddedArgs<PJRT_Event_IsReady_Args> args;
  args->event = event_;
  TPU_PJRT_CALL(*api_, PJRT_Event_IsReady, args.get());
  return args->is_ready;
}

void Event::await() const {
  PaddedArgs<PJRT_Event_Await_Args> args;
  args->event = event_;
  TPU_PJRT_CALL(*api_, PJRT_Event_Await, args.get());
  PaddedArgs<PJRT_Event_Error_Args> err;
  err->event = event_;
  TPU_PJRT_CALL(*api_, PJRT_Event_Error, err.get());
}

namespace {
struct OnReadyContext {
  std::shared_ptr<const Api> api;
  std::function<void(const std::string&)> callback;
};

void on_ready_trampoline(PJRT_Error* error, void* user_arg) {
  std::unique_ptr<OnReadyContext> ctx(static_cast<OnReadyContext*>(user_arg));
  std::string message;
  if (error != nullptr) {
    message = ctx->api->to_exception(error, "async PJRT operation").what();
  }
  ctx->callback(message);
}
}  // namespace

void Event::on_ready(std::function<void(const std::string& error)> callback) const {
  auto ctx = std::make_unique<OnReadyContext>();
  ctx->api = api_;
  ctx->callback = std::move(callback);
  PaddedArgs<PJRT_Event_OnReady_Args> args;
  args->event = event_;
  args->callback = &on_ready_trampoline;
  args->user_arg = ctx.get();
  TPU_PJRT_CALL(*api_, PJRT_Event_OnReady, args.get());
  ctx.release();  // owned by the trampoline now
}

}  // namespace torch_tpu::pjrt
