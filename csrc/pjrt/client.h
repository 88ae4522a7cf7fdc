// RAII over PJRT_Client: devices, host transfers, compilation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pjrt/api.h"
#include "pjrt/buffer.h"
#include "pjrt/executable.h"
#include "pjrt/owned.h"

namespace torch_tpu::pjrt {

struct DeviceInfo {
  PJRT_Device* raw = nullptr;
  int id = 0;                 // PJRT global id
  int local_hardware_id = 0;  // -1 where the plugin does not report it
  std::string kind;           // e.g. "cpu", "NVIDIA H200", "TPU v5 lite"
};

struct MemoryStats {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = -1;  // -1: not reported by the plugin
  int64_t bytes_limit = -1;
};

// How long the host memory given to buffer_from_host must stay valid.
enum class HostSemantics {
  kCopyDuringCall,     // copied before the call returns
  kUntilTransferDone,  // caller keeps it alive until the done event fires
  // The buffer may use the host memory itself (where the device memory is
  // host memory, as on the CPU plugin), which the caller keeps alive and
  // unchanged until the done event fires: when the buffer is destroyed. The
  // runtime never writes it (a donation copies it instead).
  kZeroCopy,
};

struct HostToDevice {
  BufferPtr buffer;
  EventPtr done_with_host;  // may be null when the copy finished in the call
};

class Client {
 public:
  // Creates a client. Integer options (e.g. {"cpu_device_count", 4}) are
  // passed as PJRT named values; the plugin rejects names it does not know.
  static std::shared_ptr<Client> create(std::shared_ptr<const Api> api,
                                        const std::map<std::string, int64_t>& int_options);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Api& api() const { return client_.api(); }
  std::shared_ptr<const Api> api_ptr() const { return client_.api_ptr(); }
  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  const std::vector<DeviceInfo>& devices() const { return devices_; }

  // Compiles a StableHLO module given as MLIR text (or bytecode).
  ExecutablePtr compile(const std::string& mlir, const std::string& compile_options) const;
  ExecutablePtr deserialize(const std::string& bytes) const;

  HostToDevice buffer_from_host(const void* data, BufferType type, const std::vector<int64_t>& dims,
                                const DeviceInfo& device, HostSemantics semantics) const;

  // Returns false when the plugin does not implement memory statistics.
  bool memory_stats(const DeviceInfo& device, MemoryStats* stats) const;

 private:
  // Takes ownership first, so a failing query below destroys the client.
  explicit Client(Owned<PJRT_Client> client);
  Owned<PJRT_Client> client_;
  std::string platform_name_;
  std::string platform_version_;
  std::vector<DeviceInfo> devices_;
};

// Serialized xla.CompileOptionsProto for a single-device program that may run
// on any device of the client:
//   executable_build_options (3) { num_replicas (4) = 1, num_partitions (5) = 1 }
//   compile_portable_executable (4) = true
// Empty options abort inside the plugin, so they are always sent.
std::string single_device_compile_options();

}  // namespace torch_tpu::pjrt
