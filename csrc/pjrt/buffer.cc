#include "pjrt/buffer.h"

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

BufferType Buffer::element_type() const {
  PaddedArgs<PJRT_Buffer_ElementType_Args> args;
  args->buffer = raw();
  TPU_PJRT_CALL(api(), PJRT_Buffer_ElementType, args.get());
  return args->type;
}

std::vector<int64_t> Buffer::dims() const {
  PaddedArgs<PJRT_Buffer_Dimensions_Args> args;
  args->buffer = raw();
  TPU_PJRT_CALL(api(), PJRT_Buffer_Dimensions, args.get());
  return std::vector<int64_t>(args->dims, args->dims + args->num_dims);
}

int64_t Buffer::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims()) n *= d;
  return n;
}

PinnedMemory::PinnedMemory(BufferPtr buffer) : buffer_(std::move(buffer)) {
  const Api& api = buffer_->api();
  PaddedArgs<PJRT_Buffer_IncreaseExternalReferenceCount_Args> hold;
  hold->buffer = buffer_->raw();
  TPU_PJRT_CALL(api, PJRT_Buffer_IncreaseExternalReferenceCount, hold.get());
  PaddedArgs<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args> address;
  address->buffer = buffer_->raw();
  try {
    TPU_PJRT_CALL(api, PJRT_Buffer_OpaqueDeviceMemoryDataPointer, address.get());
  } catch (...) {
    PaddedArgs<PJRT_Buffer_DecreaseExternalReferenceCount_Args> release;
    release->buffer = buffer_->raw();
    (void)api.raw()->PJRT_Buffer_DecreaseExternalReferenceCount(release.get());
    throw;
  }
  data_ = address->device_memory_ptr;
}

PinnedMemory::~PinnedMemory() {
  PaddedArgs<PJRT_Buffer_DecreaseExternalReferenceCount_Args> release;
  release->buffer = buffer_->raw();
  PJRT_Error* error =
      buffer_->api().raw()->PJRT_Buffer_DecreaseExternalReferenceCount(release.get());
  if (error != nullptr) (void)buffer_->api().to_exception(error, "DecreaseExternalReferenceCount");
}

bool Buffer::is_deleted() const {
  PaddedArgs<PJRT_Buffer_IsDeleted_Args> args;
  args->buffer = raw();
  TPU_PJRT_CALL(api(), PJRT_Buffer_IsDeleted, args.get());
  return args->is_deleted;
}

size_t Buffer::on_device_size() const {
  PaddedArgs<PJRT_Buffer_OnDeviceSizeInBytes_Args> args;
  args->buffer = raw();
  TPU_PJRT_CALL(api(), PJRT_Buffer_OnDeviceSizeInBytes, args.get());
  return args->on_device_size_in_bytes;
}

EventPtr Buffer::to_host_async(void* dst, size_t dst_size) const {
  PaddedArgs<PJRT_Buffer_ToHostBuffer_Args> args;
  args->src = raw();
  args->dst = dst;
  args->dst_size = dst_size;
  TPU_PJRT_CALL(api(), PJRT_Buffer_ToHostBuffer, args.get());
  Owned<PJRT_Event> done(buffer_.api_ptr(), args->event);
  return std::make_shared<Event>(std::move(done));
}

EventPtr Buffer::ready_event() const {
  PaddedArgs<PJRT_Buffer_ReadyEvent_Args> args;
  args->buffer = raw();
  TPU_PJRT_CALL(api(), PJRT_Buffer_ReadyEvent, args.get());
  Owned<PJRT_Event> ready(buffer_.api_ptr(), args->event);
  return std::make_shared<Event>(std::move(ready));
}

}  // namespace torch_tpu::pjrt
