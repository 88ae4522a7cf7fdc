// Precompiled for every translation unit of torch_tpu._dist (CMake's
// target_precompile_headers): c10d's Backend and Work, which include most of
// ATen and are what each unit of the tpu_dist backend spends its time
// parsing. Third-party and standard headers only, as in torch_kernels.h.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>
