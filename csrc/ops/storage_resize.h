// Growing a tpu storage in place (resize_, set_, UntypedStorage.resize_).
#pragma once

#include <c10/core/Storage.h>

namespace torch_tpu {

// Makes `storage` hold `new_nbytes`, keeping the common prefix of its
// contents; new bytes are zero. The DataPtr (and so data_ptr()) changes, as
// it does for CUDA.
void resize_storage_bytes(const c10::Storage& storage, size_t new_nbytes);

}  // namespace torch_tpu
