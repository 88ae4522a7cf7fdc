#include "pjrt/client.h"

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

std::string single_device_compile_options() {
  static const char kBytes[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01, 0x20, 0x01};
  return std::string(kBytes, sizeof(kBytes));
}

std::shared_ptr<Client> Client::create(std::shared_ptr<const Api> api,
                                       const std::map<std::string, int64_t>& int_options) {
  // PJRT_NamedValue is passed as an array, so each element must have exactly
  // the size the plugin strides by; it has not grown since it was introduced.
  std::vector<PJRT_NamedValue> options;
  for (const auto& [name, value] : int_options) {
    PJRT_NamedValue nv{};
    nv.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    nv.name = name.c_str();
    nv.name_size = name.size();
    nv.type = PJRT_NamedValue_kInt64;
    nv.int64_value = value;
    nv.value_size = 1;
    options.push_back(nv);
  }
  PaddedArgs<PJRT_Client_Create_Args> args;
  args->create_options = options.empty() ? nullptr : options.data();
  args->num_options = options.size();
  TPU_PJRT_CALL(*api, PJRT_Client_Create, args.get());
  Owned<PJRT_Client> client(std::move(api), args->client);
  return std::shared_ptr<Client>(new Client(std::move(client)));
}

Client::Client(Owned<PJRT_Client> client) : client_(std::move(client)) {
  PaddedArgs<PJRT_Client_PlatformName_Args> name;
  name->client = client_.get();
  TPU_PJRT_CALL(api(), PJRT_Client_PlatformName, name.get());
  platform_name_.assign(name->platform_name, name->platform_name_size);

  PaddedArgs<PJRT_Client_PlatformVersion_Args> version;
  version->client = client_.get();
  TPU_PJRT_CALL(api(), PJRT_Client_PlatformVersion, version.get());
  platform_version_.assign(version->platform_version, version->platform_version_size);

  PaddedArgs<PJRT_Client_AddressableDevices_Args> devs;
  devs->client = client_.get();
  TPU_PJRT_CALL(api(), PJRT_Client_AddressableDevices, devs.get());
  for (size_t i = 0; i < devs->num_addressable_devices; ++i) {
    DeviceInfo info;
    info.raw = devs->addressable_devices[i];

    PaddedArgs<PJRT_Device_GetDescription_Args> desc;
    desc->device = info.raw;
    TPU_PJRT_CALL(api(), PJRT_Device_GetDescription, desc.get());

    PaddedArgs<PJRT_DeviceDescription_Id_Args> id;
    id->device_description = desc->device_description;
    TPU_PJRT_CALL(api(), PJRT_DeviceDescription_Id, id.get());
    info.id = id->id;

    PaddedArgs<PJRT_DeviceDescription_Kind_Args> kind;
    kind->device_description = desc->device_description;
    TPU_PJRT_CALL(api(), PJRT_DeviceDescription_Kind, kind.get());
    info.kind.assign(kind->device_kind, kind->device_kind_size);

    PaddedArgs<PJRT_Device_LocalHardwareId_Args> hw;
    hw->device = info.raw;
    TPU_PJRT_CALL(api(), PJRT_Device_LocalHardwareId, hw.get());
    info.local_hardware_id = hw->local_hardware_id;
    devices_.push_back(info);
  }
}

ExecutablePtr Client::compile(const std::string& mlir, const std::string& compile_options) const {
  static const char kFormat[] = "mlir";
  PaddedArgs<PJRT_Program> program;
  program->code = const_cast<char*>(mlir.data());
  program->code_size = mlir.size();
  program->format = kFormat;
  program->format_size = sizeof(kFormat) - 1;

  PaddedArgs<PJRT_Client_Compile_Args> args;
  args->client = client_.get();
  args->program = program.get();
  args->compile_options = compile_options.data();
  args->compile_options_size = compile_options.size();
  TPU_PJRT_CALL(api(), PJRT_Client_Compile, args.get());
  Owned<PJRT_LoadedExecutable> executable(client_.api_ptr(), args->executable);
  return std::make_shared<LoadedExecutable>(std::move(executable));
}

ExecutablePtr Client::deserialize(const std::string& bytes) const {
  PaddedArgs<PJRT_Executable_DeserializeAndLoad_Args> args;
  args->client = client_.get();
  args->serialized_executable = bytes.data();
  args->serialized_executable_size = bytes.size();
  TPU_PJRT_CALL(api(), PJRT_Executable_DeserializeAndLoad, args.get());
  Owned<PJRT_LoadedExecutable> executable(client_.api_ptr(), args->loaded_executable);
  return std::make_shared<LoadedExecutable>(std::move(executable));
}

HostToDevice Client::buffer_from_host(const void* data, BufferType type,
                                      const std::vector<int64_t>& dims, const DeviceInfo& device,
                                      HostSemantics semantics) const {
  PaddedArgs<PJRT_Client_BufferFromHostBuffer_Args> args;
  args->client = client_.get();
  args->data = data;
  args->type = type;
  args->dims = dims.data();
  args->num_dims = dims.size();
  switch (semantics) {
    case HostSemantics::kCopyDuringCall:
      args->host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
      break;
    case HostSemantics::kUntilTransferDone:
      args->host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
      break;
    case HostSemantics::kZeroCopy:
      args->host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
      break;
  }
  args->device = device.raw;
  TPU_PJRT_CALL(api(), PJRT_Client_BufferFromHostBuffer, args.get());
  Owned<PJRT_Buffer> buffer(client_.api_ptr(), args->buffer);
  Owned<PJRT_Event> done(client_.api_ptr(), args->done_with_host_buffer);
  HostToDevice result;
  result.buffer = std::make_shared<Buffer>(std::move(buffer));
  if (done) result.done_with_host = std::make_shared<Event>(std::move(done));
  return result;
}

bool Client::memory_stats(const DeviceInfo& device, MemoryStats* stats) const {
  if (!api().has(offsetof(PJRT_Api, PJRT_Device_MemoryStats)) ||
      api().raw()->PJRT_Device_MemoryStats == nullptr) {
    return false;
  }
  PaddedArgs<PJRT_Device_MemoryStats_Args> args;
  args->device = device.raw;
  PJRT_Error* error = api().raw()->PJRT_Device_MemoryStats(args.get());
  if (error != nullptr) {
    // The CPU plugin answers "unimplemented"; that is not a failure.
    (void)api().to_exception(error, "PJRT_Device_MemoryStats");
    return false;
  }
  stats->bytes_in_use = args->bytes_in_use;
  if (args->peak_bytes_in_use_is_set) stats->peak_bytes_in_use = args->peak_bytes_in_use;
  if (args->bytes_limit_is_set) stats->bytes_limit = args->bytes_limit;
  return true;
}

}  // namespace torch_tpu::pjrt
