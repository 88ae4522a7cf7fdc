// Reductions of pred tensors that loop conditions and checks need.
#pragma once

#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

// Whether any element of the pred tensor `flags` is set: a pred scalar.
inline Value any_true(Builder& b, Value flags) {
  std::vector<int64_t> all(flags.type.rank());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  Value count = b.reduce(b.convert(flags, ElementType::kS32), b.constant_int(ElementType::kS32, 0),
                         all, "maximum");
  return b.compare(Compare::kNE, count, b.zeros(count.type));
}

}  // namespace torch_tpu::hlo
