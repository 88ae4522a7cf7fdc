#include "ops/storage_resize.h"

#include <c10/util/Exception.h>

#include "core/allocator.h"
#include "exec/eager_mode.h"
#include "exec/executable_cache.h"
#include "exec/fragment_cache.h"
#include "exec/launcher.h"
#include "exec/region.h"
#include "hlo/builder.h"
#include "hlo/strided_view.h"

namespace torch_tpu {

void resize_storage_bytes(const c10::Storage& storage, size_t new_nbytes) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  const size_t old_nbytes = storage.nbytes();
  if (new_nbytes == old_nbytes) return;
  const int device = storage.device().index();
  c10::DataPtr fresh = TpuAllocator::get().allocate_on(new_nbytes, device);
  DeviceStorage* old_storage = storage_of(storage);
  auto* new_storage = static_cast<DeviceStorage*>(fresh.get_context());
  if (old_storage != nullptr && new_storage != nullptr && !old_storage->is_empty()) {
    // Copy the common prefix in the bytes' current element type when it
    // divides both sizes, else as raw bytes.
    hlo::ElementType type = old_storage->element();
    if (new_nbytes % hlo::byte_size(type) != 0) type = hlo::ElementType::kU8;
    const hlo::ElementType old_type = old_storage->element();
    const int64_t old_count = old_storage->element_count();
    // The old contents are the whole device buffer, which can be longer than
    // the storage says (a data-dependent result keeps its bucket).
    const int64_t old_n = static_cast<int64_t>(old_storage->nbytes() / hlo::byte_size(type));
    const int64_t new_n = static_cast<int64_t>(new_nbytes / hlo::byte_size(type));
    const std::string key = std::string("resize:") + hlo::mlir_name(old_type) + ":" +
                            std::to_string(old_count) + "->" + hlo::mlir_name(type) + ":" +
                            std::to_string(new_n);
    auto lower = [&](hlo::Builder& b) {
      hlo::Value base = b.parameter({old_type, {old_count}});
      hlo::Value flat = hlo::bitcast_flat(b, base, type);
      hlo::Value result = new_n <= old_n
                              ? b.slice(flat, {0}, {new_n}, {1})
                              : b.pad(flat, b.constant_int(type, 0), {0}, {new_n - old_n});
      b.set_results({result});
    };
    if (current_eager_mode() == EagerMode::kDeferAndFuse) {
      // (the old contents may still be pending in the region: not read here)
      OpNode node;
      node.function = &FragmentCache::get().find_or_lower(key, lower);
      node.params.push_back({OpNode::Param::Kind::kStorageBase, old_storage, type, nullptr});
      node.writes.push_back({new_storage, type});
      defer_op(device, node);
    } else {
      pjrt::BufferPtr old_buffer = old_storage->buffer(type);
      auto exe = ExecutableCache::get().get_or_compile(key, [&] {
        hlo::Builder b;
        lower(b);
        return b.module_text();
      });
      new_storage->set_buffer(launch(*exe, {old_buffer}, device).at(0), type);
    }
  }
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(new_nbytes);
}

}  // namespace torch_tpu
