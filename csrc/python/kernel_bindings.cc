// torch_tpu._C's entry points for user kernels (torch_tpu/kernels.py).
//
// _kernel_call is a kernel's eager call from Python in one step: it reads
// the arguments, finds the lowering bound to their signature and runs it.
// A call of a small kernel then costs about what a native op costs; the
// Python wrapper takes over (returns None from here) whenever anything
// might act between the call and the kernel: autograd, a mode, a tensor
// subclass, an argument this table cannot key.
#include "python/kernel_bindings.h"

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <string>
#include <unordered_map>

#include "ops/user_kernels.h"

namespace torch_tpu {
namespace {

// [(dtype, [sizes...]), ...] from Python.
std::vector<ops::KernelResult> tensor_types(const pybind11::list& types) {
  std::vector<ops::KernelResult> out;
  for (const pybind11::handle& item : types) {
    const auto pair = item.cast<pybind11::tuple>();
    TORCH_CHECK_TYPE(pair.size() == 2 && THPDtype_Check(pair[0].ptr()),
                     "torch_tpu.kernels: a tensor type is (torch.dtype, sizes)");
    out.push_back({reinterpret_cast<THPDtype*>(pair[0].ptr())->scalar_type,
                   pair[1].cast<std::vector<int64_t>>()});
  }
  return out;
}

const c10::DispatchKeySet kWrapperKeys = c10::functorch_transforms_ks | c10::python_ks |
                                         c10::DispatchKeySet(c10::DispatchKey::Functionalize);

template <typename T>
void append(std::string& key, char tag, T value) {
  key.push_back(tag);
  key.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// The signature key of a call of kernel `number` (its tensors' dtypes and
// sizes, its other arguments' types and values), with the tensors; false
// where the call is not for this table (see the top of the file).
bool read_call(int64_t number, const pybind11::tuple& args, std::string& key,
               std::vector<at::Tensor>& tensors) {
  append(key, 'k', number);
  for (const pybind11::handle& arg : args) {
    PyObject* obj = arg.ptr();
    if (THPVariable_CheckExact(obj)) {
      const at::Tensor& t = THPVariable_Unpack(obj);
      if (t.device().type() != c10::DeviceType::PrivateUse1) return false;
      // A wrapper of a tpu tensor (torch.func's batched and grad tensors,
      // functionalization, Python subclasses) is the dispatcher's to unwrap.
      if (t.key_set().has_any(kWrapperKeys)) return false;
      if (t.requires_grad() && at::GradMode::is_enabled()) return false;
      append(key, 't', static_cast<int8_t>(t.scalar_type()));
      append(key, 'd', static_cast<int64_t>(t.dim()));
      for (int64_t s : t.sizes()) append(key, 's', s);
      tensors.push_back(t);
    } else if (PyBool_Check(obj)) {
      append(key, 'b', obj == Py_True);
    } else if (PyLong_CheckExact(obj)) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
      if (overflow != 0) return false;
      append(key, 'i', static_cast<int64_t>(v));
    } else if (PyFloat_CheckExact(obj)) {
      append(key, 'f', PyFloat_AS_DOUBLE(obj));  // by bits: -0.0 and NaNs stay apart
    } else if (obj == Py_None) {
      key.push_back('n');
    } else {
      return false;
    }
  }
  return !tensors.empty();
}

struct FastEntry {
  int64_t handle;
  bool single;  // return the one result itself, else a tuple of them
};

// Read and written with the GIL held, like everything in this file but the
// kernel run itself.
std::unordered_map<std::string, FastEntry>& fast_entries() {
  static auto* entries = new std::unordered_map<std::string, FastEntry>();
  return *entries;
}

bool modes_active() {
  return at::impl::torch_function_mode_enabled() ||
         c10::impl::TorchDispatchModeTLS::any_modes_set();
}

}  // namespace

void bind_user_kernels(pybind11::module_& m) {
  m.def("_kernel_define",
        [](const std::string& name, const std::string& callee, const std::string& functions,
           const pybind11::list& params, const pybind11::list& results) {
          return ops::define_user_kernel(name, callee, functions, tensor_types(params),
                                         tensor_types(results));
        });
  m.def("_kernel_run", &ops::run_user_kernel, pybind11::call_guard<pybind11::gil_scoped_release>());
  // Binds the signature of `args` to a lowering, for _kernel_call.
  m.def("_kernel_bind",
        [](int64_t number, const pybind11::tuple& args, int64_t handle, bool single) {
          std::string key;
          std::vector<at::Tensor> tensors;
          if (read_call(number, args, key, tensors))
            fast_entries()[key] = FastEntry{handle, single};
        });
  m.def("_kernel_call", [](int64_t number, const pybind11::tuple& args) -> pybind11::object {
    if (modes_active()) return pybind11::none();
    std::string key;
    std::vector<at::Tensor> tensors;
    if (!read_call(number, args, key, tensors)) return pybind11::none();
    const auto it = fast_entries().find(key);
    if (it == fast_entries().end()) return pybind11::none();
    const FastEntry entry = it->second;
    std::vector<at::Tensor> results;
    {
      pybind11::gil_scoped_release no_gil;
      results = ops::run_user_kernel(entry.handle, tensors);
    }
    if (entry.single) return pybind11::cast(results[0]);
    return pybind11::cast(results).cast<pybind11::tuple>();
  });
}

}  // namespace torch_tpu
