#include "pjrt/executable.h"

#include <array>

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

LoadedExecutable::LoadedExecutable(Owned<PJRT_LoadedExecutable> executable)
    : executable_(std::move(executable)) {
  PaddedArgs<PJRT_LoadedExecutable_GetExecutable_Args> get;
  get->loaded_executable = executable_.get();
  TPU_PJRT_CALL(api(), PJRT_LoadedExecutable_GetExecutable, get.get());
  unloaded_ = Owned<PJRT_Executable>(executable_.api_ptr(), get->executable);
  PaddedArgs<PJRT_Executable_NumOutputs_Args> outputs;
  outputs->executable = unloaded_.get();
  TPU_PJRT_CALL(api(), PJRT_Executable_NumOutputs, outputs.get());
  num_outputs_ = outputs->num_outputs;
}

ExecuteResult LoadedExecutable::execute(PJRT_Buffer* const* args, size_t num_args,
                                        PJRT_Device* device, const int64_t* non_donatable,
                                        size_t num_non_donatable) const {
  PaddedArgs<PJRT_ExecuteOptions> options;
  options->non_donatable_input_indices = non_donatable;
  options->num_non_donatable_input_indices = num_non_donatable;
  // The raw output list and its owners live on the stack for the usual few
  // outputs (a launch is on every eager op's path; these were heap
  // allocations per launch). Both are ready before the launch, so that
  // taking ownership of what it returns cannot fail half-way.
  constexpr size_t kInlineOutputs = 8;
  std::array<PJRT_Buffer*, kInlineOutputs> inline_outputs{};
  std::array<Owned<PJRT_Buffer>, kInlineOutputs> inline_owned;
  std::vector<PJRT_Buffer*> heap_outputs;
  std::vector<Owned<PJRT_Buffer>> heap_owned;
  PJRT_Buffer** output_list = inline_outputs.data();
  Owned<PJRT_Buffer>* owned = inline_owned.data();
  if (num_outputs_ > kInlineOutputs) {
    heap_outputs.assign(num_outputs_, nullptr);
    heap_owned.resize(num_outputs_);
    output_list = heap_outputs.data();
    owned = heap_owned.data();
  }
  ExecuteResult result;
  result.outputs.reserve(num_outputs_);
  PJRT_Buffer* const* arg_list = args;
  PJRT_Event* done = nullptr;

  PaddedArgs<PJRT_LoadedExecutable_Execute_Args> exec;
  exec->executable = executable_.get();
  exec->options = options.get();
  exec->argument_lists = &arg_list;
  exec->num_devices = 1;
  exec->num_args = num_args;
  exec->output_lists = &output_list;
  exec->device_complete_events = &done;
  exec->execute_device = device;
  TPU_PJRT_CALL(api(), PJRT_LoadedExecutable_Execute, exec.get());

  Owned<PJRT_Event> owned_done(executable_.api_ptr(), done);
  for (size_t i = 0; i < num_outputs_; ++i)
    owned[i] = Owned<PJRT_Buffer>(executable_.api_ptr(), output_list[i]);
  for (size_t i = 0; i < num_outputs_; ++i) {
    result.outputs.push_back(std::make_shared<Buffer>(std::move(owned[i])));
  }
  if (owned_done) result.done = std::make_shared<Event>(std::move(owned_done));
  return result;
}

std::string LoadedExecutable::serialize() const {
  PaddedArgs<PJRT_Executable_Serialize_Args> args;
  args->executable = unloaded_.get();
  TPU_PJRT_CALL(api(), PJRT_Executable_Serialize, args.get());
  // The plugin's bytes are freed even when copying them throws.
  struct FreeSerialized {
    PJRT_Executable_Serialize_Args* args;
    ~FreeSerialized() {
      if (args->serialized_executable_deleter != nullptr) {
        args->serialized_executable_deleter(args->serialized_executable);
      }
    }
  } free_serialized{args.get()};
  return std::string(args->serialized_bytes, args->serialized_bytes_size);
}

}  // namespace torch_tpu::pjrt
