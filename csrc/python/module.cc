// torch_tpu._C: the only C++ file that touches Python. Thin bindings over
// the runtime, allocator, launcher and metrics for the Python package.
// torch/csrc/utils/pybind.h rather than torch/extension.h: the tensor type
// casters are all this file needs, and extension.h brings the whole C++
// frontend (17 s of this unit's 27 s to compile).
#include <ATen/ops/empty.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include "core/allocator.h"
#include "core/current_device.h"
#include "core/device_storage.h"
#include "core/metrics.h"
#include "core/runtime.h"
#include "device/autograd_drain.h"
#include "device/generator.h"
#include "exec/async_errors.h"
#include "exec/captured_graph.h"
#include "exec/eager_mode.h"
#include "exec/executable_cache.h"
#include "exec/launcher.h"
#include "exec/persistent_cache.h"
#include "ops/elementwise.h"
#include "ops/missing_op.h"
#include "ops/scaled_mm_kernels.h"
#include "pjrt/plugin_discovery.h"
#include "python/kernel_bindings.h"

namespace torch_tpu {
void register_hooks();  // device/hooks.cc

namespace {

pybind11::dict device_properties(int index) {
  auto& runtime = Runtime::get();
  const auto& device = runtime.device(index);
  pybind11::dict d;
  d["name"] = device.kind;
  d["platform"] = runtime.client().platform_name();
  d["platform_version"] = runtime.client().platform_version();
  d["plugin_path"] = runtime.plugin_path();
  d["plugin_reason"] = runtime.plugin_reason();
  d["pjrt_api_version"] = runtime.client().api().version_string();
  d["pjrt_id"] = device.id;
  d["local_hardware_id"] = device.local_hardware_id;
  pjrt::MemoryStats stats;
  if (runtime.client().memory_stats(device, &stats)) {
    d["total_memory"] = stats.bytes_limit;
    d["memory_reported_by_plugin"] = true;
  } else {
    d["total_memory"] = runtime.memory_capacity(index);
    d["memory_reported_by_plugin"] = false;
  }
  return d;
}

pybind11::dict storage_state(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "_storage_state expects a tpu tensor");
  pybind11::dict d;
  DeviceStorage* s = storage_of(t.storage());
  d["nbytes"] = t.storage().nbytes();
  if (s == nullptr) {
    d["state"] = "none";
    return d;
  }
  d["state"] = s->is_empty() ? "empty" : (s->is_pending() ? "pending" : "materialized");
  d["element"] = s->is_empty() ? "" : hlo::mlir_name(s->element());
  return d;
}

// A tensor over a new storage that shares `t`'s storage buffer, made the way
// PyTorch copies a whole storage (Allocator::clone, which calls the tpu
// allocator's copy_data): the tests' way to reach that path, which donation
// must never write through.
at::Tensor share_storage_buffer_for_testing(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "_testing_share_storage_buffer expects a tpu tensor");
  const c10::Storage& storage = t.storage();
  c10::DataPtr copy = TpuAllocator::get().clone(storage.data(), storage.nbytes());
  c10::Storage twin(c10::Storage::use_byte_size_t(), storage.nbytes(), std::move(copy),
                    &TpuAllocator::get(), /*resizable=*/true);
  return at::empty({0}, t.options()).set_(twin, t.storage_offset(), t.sizes(), t.strides());
}

// Maps c10 errors thrown by our bindings to the Python exception types
// PyTorch itself raises for them, without the C++ backtrace.
void translate_exception(std::exception_ptr p) {
  auto raise = [](PyObject* type, const c10::Error& e) {
    PyErr_SetString(type, e.what_without_backtrace());
  };
  try {
    std::rethrow_exception(p);
  } catch (const c10::IndexError& e) {
    raise(PyExc_IndexError, e);
  } catch (const c10::ValueError& e) {
    raise(PyExc_ValueError, e);
  } catch (const c10::TypeError& e) {
    raise(PyExc_TypeError, e);
  } catch (const c10::NotImplementedError& e) {
    raise(PyExc_NotImplementedError, e);
  } catch (const c10::OutOfMemoryError& e) {
    pybind11::object oom = pybind11::module_::import("torch").attr("OutOfMemoryError");
    raise(oom.ptr(), e);
  } catch (const c10::Error& e) {
    raise(PyExc_RuntimeError, e);
  }
}

}  // namespace
}  // namespace torch_tpu

PYBIND11_MODULE(_C, m) {
  using namespace torch_tpu;
  m.doc() = "torch_tpu native core";
  pybind11::register_local_exception_translator(&translate_exception);

  // What plugin discovery sees (scripts/gpu_check.sh asks): a GPU that the
  // CUDA plugin should be serving.
  m.def("_nvidia_gpu_present", &pjrt::nvidia_gpu_present);
  m.def("_init", [](std::vector<std::string> package_roots) {
    Runtime::set_package_roots(std::move(package_roots));
    c10::SetAllocator(c10::DeviceType::PrivateUse1, &TpuAllocator::get());
    register_hooks();
  });
  m.def("_runtime_initialized", &Runtime::initialized);
  m.def("_device_count", &Runtime::visible_device_count);
  m.def("_is_in_bad_fork", &Runtime::in_bad_fork);
  m.def("_lazy_init", [] { (void)Runtime::get(); });
  m.def("_current_device", [] { return current_device_index(); });
  m.def("_set_device", [](int index) {
    (void)Runtime::get().device(index);
    set_current_device_index(index);
  });
  m.def("_synchronize", [](int index) {
    pybind11::gil_scoped_release no_gil;
    synchronize_device(index < 0 ? current_device_index() : index);
  });
  m.def("_device_properties", &device_properties);
  m.def("_memory_fraction", [](int index) { return Runtime::get().memory_fraction(index); });
  m.def("_set_memory_fraction",
        [](int index, double fraction) { Runtime::get().set_memory_fraction(index, fraction); });
  m.def("_get_default_generator", [](int index) {
    return pybind11::reinterpret_steal<pybind11::object>(
        THPGenerator_initDefaultGenerator(default_generator(index)));
  });
  m.def("_metrics", [] {
    auto snapshot = Metrics::get().snapshot();
    snapshot["cached_executables"] = static_cast<int64_t>(ExecutableCache::get().size());
    return snapshot;
  });
  m.def("_reset_metrics", [] {
    Metrics::get().reset();
    ops::reset_fallback_counts();
  });
  m.def("_fallback_counts", &ops::fallback_counts);
  m.def("_elementwise_overloads", &ops::elementwise_overloads);
  m.def("_set_cpu_fallback", &ops::set_cpu_fallback_enabled);
  m.def("_set_scaled_mm_native_f8", &ops::set_scaled_mm_native_f8);
  m.def("_cpu_fallback_enabled", &ops::cpu_fallback_enabled);
  m.def("_set_eager_mode",
        [](const std::string& name) { set_global_eager_mode(parse_eager_mode(name)); });
  m.def("_get_eager_mode", [] { return std::string(eager_mode_name(current_eager_mode())); });
  m.def("_push_eager_mode",
        [](const std::string& name) { push_scoped_eager_mode(parse_eager_mode(name)); });
  m.def("_pop_eager_mode", &pop_scoped_eager_mode);
  using Tensors = CapturedGraph::Tensors;
  pybind11::class_<CapturedGraph, std::shared_ptr<CapturedGraph>>(m, "_CapturedGraph")
      .def("replay", [](const CapturedGraph& graph, const Tensors& inputs) {
        pybind11::gil_scoped_release no_gil;
        return graph.replay(inputs);
      });
  pybind11::class_<CapturedGraph::Capture>(m, "_GraphCapture")
      .def(pybind11::init<int, const Tensors&>())
      .def("end",
           [](CapturedGraph::Capture& capture, const Tensors& inputs, const Tensors& outputs) {
             pybind11::gil_scoped_release no_gil;
             return capture.end(inputs, outputs);
           });
  m.def("_persistent_cache_stats", [] {
    const PersistentCache::Stats s = PersistentCache::get().stats();
    pybind11::dict d;
    d["enabled"] = s.enabled;
    d["directory"] = s.directory;
    d["entries"] = s.entries;
    d["bytes"] = s.bytes;
    d["max_bytes"] = s.max_bytes;
    d["loaded_ahead"] = s.loaded_ahead;
    return d;
  });
  m.def("_persistent_cache_clear", [] { PersistentCache::get().clear(); });
  m.def("_storage_state", &storage_state);
  m.def("_testing_inject_async_failure", &inject_async_failure_for_testing);
  m.def("_testing_share_storage_buffer", &share_storage_buffer_for_testing);
  m.def("_drain_autograd_device_threads", [](int device_count) {
    pybind11::gil_scoped_release no_gil;
    drain_autograd_device_threads(device_count);
  });
  bind_user_kernels(m);
}
