#include "ops/user_kernels.h"

#include <c10/util/Exception.h>

#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/dtype_map.h"
#include "hlo/builder.h"
#include "ops/device_empty.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

struct UserKernel {
  std::string name;
  std::string callee;
  std::shared_ptr<const std::string> functions;
  std::vector<KernelResult> params;
  std::vector<KernelResult> results;
  std::vector<hlo::TensorType> result_types;
  std::string program_key;  // "kernel:" + callee
  std::string op;           // "kernel <name>": the op TensorProgram names in errors
};

class UserKernelTable {
 public:
  static UserKernelTable& get() {
    static auto* table = new UserKernelTable();  // never destroyed (see Runtime)
    return *table;
  }

  int64_t define(UserKernel kernel) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_callee_.find(kernel.callee);
    if (it != by_callee_.end()) return it->second;
    const auto handle = static_cast<int64_t>(kernels_.size());
    by_callee_.emplace(kernel.callee, handle);
    kernels_.push_back(std::move(kernel));
    return handle;
  }

  // Kernels are never removed, and a deque does not move its elements: the
  // reference stays valid without the lock.
  const UserKernel& at(int64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK_INDEX(handle >= 0 && handle < static_cast<int64_t>(kernels_.size()),
                      "torch_tpu.kernels: no kernel with handle ", handle);
    return kernels_[handle];
  }

 private:
  std::mutex mu_;
  std::deque<UserKernel> kernels_;
  std::unordered_map<std::string, int64_t> by_callee_;
};

std::string describe(c10::ScalarType dtype, c10::IntArrayRef sizes) {
  return c10::str(dtype, sizes);
}

}  // namespace

int64_t define_user_kernel(const std::string& name, const std::string& callee,
                           const std::string& functions, const std::vector<KernelResult>& params,
                           const std::vector<KernelResult>& results) {
  UserKernel k{name,
               callee,
               std::make_shared<const std::string>(functions),
               params,
               results,
               {},
               "kernel:" + callee,
               "kernel " + name};
  for (const KernelResult& p : params) (void)element_type_for(p.dtype, k.op.c_str());
  for (const KernelResult& r : results) {
    k.result_types.push_back({element_type_for(r.dtype, k.op.c_str()), r.sizes});
  }
  return UserKernelTable::get().define(std::move(k));
}

std::vector<at::Tensor> run_user_kernel(int64_t handle, const std::vector<at::Tensor>& args) {
  const UserKernel& k = UserKernelTable::get().at(handle);
  TORCH_CHECK(args.size() == k.params.size(), "kernel ", k.name, ": takes ", k.params.size(),
              " tensors, got ", args.size());
  std::optional<c10::Device> device;
  for (size_t i = 0; i < args.size(); ++i) {
    const at::Tensor& t = args[i];
    TORCH_CHECK(t.defined(), "kernel ", k.name, ": tensor argument ", i, " is undefined");
    TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "kernel ", k.name,
                ": tensor argument ", i, " is on ", t.device(),
                "; kernels take tpu tensors (move it with .to('tpu'))");
    if (!device) device = t.device();
    TORCH_CHECK(t.device() == *device, "kernel ", k.name,
                ": expected all tensors to be on the same device, but found ", *device, " and ",
                t.device());
    const KernelResult& p = k.params[i];
    TORCH_CHECK(t.scalar_type() == p.dtype && t.sizes().equals(p.sizes), "kernel ", k.name,
                ": tensor argument ", i, " is ", describe(t.scalar_type(), t.sizes()),
                ", but the kernel was lowered for ", describe(p.dtype, p.sizes));
  }
  TORCH_CHECK(device.has_value(), "kernel ", k.name, ": takes no tpu tensor");
  std::vector<at::Tensor> outputs;
  outputs.reserve(k.results.size());
  for (const KernelResult& r : k.results) {
    outputs.push_back(device_empty(r.sizes, at::TensorOptions().dtype(r.dtype).device(*device)));
  }
  TensorProgram program(k.op.c_str(), TensorProgram::BorrowedKey{k.program_key});
  for (const at::Tensor& t : args) program.input(t);
  for (const at::Tensor& t : outputs) program.output(t);
  program.run([&](hlo::Builder& b, const std::vector<hlo::Value>& in) {
    return b.call(k.callee, k.functions, in, k.result_types);
  });
  return outputs;
}

}  // namespace torch_tpu::ops
