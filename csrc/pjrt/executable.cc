#include "pjrt/executable.h"

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

LoadedExecutable::LoadedExecutable(std::shared_ptr<const Api> api,
                                   PJRT_LoadedExecutable* executable)
    : api_(std::move(api)), executable_(executable) {
  PaddedArgs<PJRT_LoadedExecutable_GetExecutable_Args> get;
  get->loaded_executable = executable_;
  TPU_PJRT_CALL(*api_, PJRT_LoadedExecutable_GetExecutable, get.get());
  unloaded_ = get->executable;
  PaddedArgs<PJRT_Executable_NumOutputs_Args> outputs;
  outputs->executable = unloaded_;
  TPU_PJRT_CALL(*api_, PJRT_Executable_NumOutputs, outputs.get());
  num_outputs_ = outputs->num_outputs;
}

LoadedExecutable::~LoadedExecutable() {
  if (in_forked_child()) return;  // see fork_guard.h
  if (unloaded_ != nullptr) {
    PaddedArgs<PJRT_Executable_Destroy_Args> args;
    args->executable = unloaded_;
    PJRT_Error* error = api_->raw()->PJRT_Executable_Destroy(args.get());
    if (error != nullptr) (void)api_->to_exception(error, "destroy");
  }
  PaddedArgs<PJRT_LoadedExecutable_Destroy_Args> args;
  args->executable = executable_;
  PJRT_Error* error = api_->raw()->PJRT_LoadedExecutable_Destroy(args.get());
  if (error != nullptr) (void)api_->to_exception(error, "destroy");
}

ExecuteResult LoadedExecutable::execute(PJRT_Buffer* const* args, size_t num_args,
                                        PJRT_Device* device) const {
  PaddedArgs<PJRT_ExecuteOptions> options;
  std::vector<PJRT_Buffer*> outputs(num_outputs_, nullptr);
  PJRT_Buffer* const* arg_list = args;
  PJRT_Buffer** output_list = outputs.data();
  PJRT_Event* done = nullptr;

  PaddedArgs<PJRT_LoadedExecutable_Execute_Args> exec;
  exec->executable = executable_;
  exec->options = options.get();
  exec->argument_lists = &arg_list;
  exec->num_devices = 1;
  exec->num_args = num_args;
  exec->output_lists = &output_list;
  exec->device_complete_events = &done;
  exec->execute_device = device;
  TPU_PJRT_CALL(*api_, PJRT_LoadedExecutable_Execute, exec.get());

  ExecuteResult result;
  result.outputs.reserve(outputs.size());
  for (PJRT_Buffer* out : outputs) {
    result.outputs.push_back(std::make_shared<Buffer>(api_, out));
  }
  if (done != nullptr) result.done = std::make_shared<Event>(api_, done);
  return result;
}

std::string LoadedExecutable::serialize() const {
  PaddedArgs<PJRT_Executable_Serialize_Args> args;
  args->executable = unloaded_;
  TPU_PJRT_CALL(*api_, PJRT_Executable_Serialize, args.get());
  std::string bytes(args->serialized_bytes, args->serialized_bytes_size);
  if (args->serialized_executable_deleter != nullptr) {
    args->serialized_executable_deleter(args->serialized_executable);
  }
  return bytes;
}

}  // namespace torch_tpu::pjrt
