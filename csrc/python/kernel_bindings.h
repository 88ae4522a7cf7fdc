// Adds the user-kernel entry points to torch_tpu._C.
#pragma once

#include <pybind11/pybind11.h>

namespace torch_tpu {

void bind_user_kernels(pybind11::module_& m);

}  // namespace torch_tpu
