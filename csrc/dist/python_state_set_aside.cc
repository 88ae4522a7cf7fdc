#include "dist/python_state_set_aside.h"

namespace torch_tpu::dist {

PythonStateSetAside::PythonStateSetAside()
    : objects_(at::impl::ThreadLocalPythonObjects::get_state()),
      torch_function_(at::impl::PythonTorchFunctionTLS::get_state()),
      dispatch_modes_(c10::impl::TorchDispatchModeTLS::get_state()),
      saved_tensor_hooks_(at::SavedTensorDefaultHooks::get_tls_state()) {
  at::impl::ThreadLocalPythonObjects::set_state({});
  at::impl::PythonTorchFunctionTLS::set_state({});
  c10::impl::TorchDispatchModeTLS::set_state({});
  at::SavedTensorDefaultHooks::set_tls_state({});
}

PythonStateSetAside::~PythonStateSetAside() {
  at::impl::ThreadLocalPythonObjects::set_state(std::move(objects_));
  at::impl::PythonTorchFunctionTLS::set_state(torch_function_);
  c10::impl::TorchDispatchModeTLS::set_state(std::move(dispatch_modes_));
  at::SavedTensorDefaultHooks::set_tls_state(saved_tensor_hooks_);
}

}  // namespace torch_tpu::dist
