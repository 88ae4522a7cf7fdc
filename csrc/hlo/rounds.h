// A loop over whole tensors that runs until every element is done: the
// shape of the series, continued fractions and rejection samplers whose
// elements converge or accept after different numbers of steps.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::hlo {

// step(builder, round (s64 scalar, from 0), state) -> next state. Rounds run
// while the pred tensor state[done] has an unset element, and at most `cap`
// times. Returns the final state. The step sees only the state (and the
// constants it makes), as every loop body.
using Round =
    std::function<std::vector<Value>(Builder&, Value round, const std::vector<Value>& state)>;
std::vector<Value> rounds_until_done(Builder& b, const std::vector<Value>& state, size_t done,
                                     int64_t cap, const Round& step);

}  // namespace torch_tpu::hlo
