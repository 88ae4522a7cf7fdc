// Keeps Python objects out of the works the host engine (Gloo) makes.
//
// Gloo's works copy the calling thread's whole PyTorch thread-local state
// (at::ThreadLocalState) to run under it, and that state can hold Python
// objects: backward() stashes a contextvars.Context in it for the length of
// the pass (torch/autograd/graph.py), so every collective DDP launches from
// its autograd hooks carries one, and mode stacks and saved-tensor hooks
// are Python objects too. Gloo's worker thread drops its reference to a
// finished work after waking the waiter; when that is the last reference to
// such an object, the drop needs the GIL. If the main thread has meanwhile
// reached interpreter shutdown, CPython ends the worker with pthread_exit
// inside that noexcept destructor and the process aborts at exit
// ("terminate called without an active exception"), a rare race that a
// loaded machine hits. The engine only moves host buffers, so none of that
// state is its to keep: for the guard's lifetime the thread holds none of
// it, and it is put back as it was afterwards.
#pragma once

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/SavedTensorHooks.h>
#include <ATen/ThreadLocalPythonObjects.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

namespace torch_tpu::dist {

class PythonStateSetAside {
 public:
  PythonStateSetAside();
  ~PythonStateSetAside();
  PythonStateSetAside(const PythonStateSetAside&) = delete;
  PythonStateSetAside& operator=(const PythonStateSetAside&) = delete;

 private:
  at::impl::ThreadLocalPythonObjects objects_;
  at::impl::PythonTorchFunctionTLS torch_function_;
  c10::impl::TorchDispatchModeTLS dispatch_modes_;
  at::impl::SavedTensorDefaultHooksTLS saved_tensor_hooks_;
};

}  // namespace torch_tpu::dist
