// Precompiled for every translation unit of torch_tpu._C (CMake's
// target_precompile_headers): the PyTorch headers most kernels include.
// Parsing them was 5-7 s of every unit's 8 (ATen/native/Resize.h and
// ATen/ScalarOps.h alone pull in most of ATen); loaded from the compiled
// header it is a fraction of a second. Only third-party and standard headers
// belong here: a project header here would rebuild every unit when it changes.
// Each source still includes what it uses, so it also builds without this
// (-DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON checks that).
#pragma once

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/OpMathType.h>
#include <ATen/ScalarOps.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/Scalar.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>
