#include "pjrt/buffer.h"

#include "pjrt/padded_args.h"

namespace torch_tpu::pjrt {

Buffer::Buffer(std::shared_ptr<const Api> api, PJRT_Buffer* buffer)
    : api_(std::move(api)), buffer_(buffer) {}

Buffer::~Buffer() {
  if (in_forked_child()) return;  // see fork_guard.h
  if (buffer_ == nullptr) return;
  PaddedArgs<PJRT_Buffer_Destroy_Args> args;
  args->buffer = buffer_;
  PJRT_Error* error = api_->raw()->PJRT_Buffer_Destroy(args.get());
  if (error != nullptr) (void)api_->to_exception(error, "PJRT_Buffer_Destroy");
}

BufferType Buffer::element_type() const {
  PaddedArgs<PJRT_Buffer_ElementType_Args> args;
  args->buffer = buffer_;
  TPU_PJRT_CALL(*api_, PJRT_Buffer_ElementType, args.get());
  return args->type;
}

std::vector<int64_t> Buffer::dims() const {
  PaddedArgs<PJRT_Buffer_Dimensions_Args> args;
  args->buffer = buffer_;
  TPU_PJRT_CALL(*api_, PJRT_Buffer_Dimensions, args.get());
  return std::vector<int64_t>(args->dims, args->dims + args->num_dims);
}

int64_t Buffer::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims()) n *= d;
  return n;
}

size_t Buffer::on_device_size() const {
  PaddedArgs<PJRT_Buffer_OnDeviceSizeInBytes_Args> args;
  args->buffer = buffer_;
  TPU_PJRT_CALL(*api_, PJRT_Buffer_OnDeviceSizeInBytes, args.get());
  return args->on_device_size_in_bytes;
}

EventPtr Buffer::to_host_async(void* dst, size_t dst_size) const {
  PaddedArgs<PJRT_Buffer_ToHostBuffer_Args> args;
  args->src = buffer_;
  args->dst = dst;
  args->dst_size = dst_size;
  TPU_PJRT_CALL(*api_, PJRT_Buffer_ToHostBuffer, args.get());
  return std::make_shared<Event>(api_, args->event);
}

EventPtr Buffer::ready_event() const {
  PaddedArgs<PJRT_Buffer_ReadyEvent_Args> args;
  args->buffer = buffer_;
  TPU_PJRT_CALL(*api_, PJRT_Buffer_ReadyEvent, args.get());
  return std::make_shared<Event>(api_, args->event);
}

}  // namespace torch_tpu::pjrt
