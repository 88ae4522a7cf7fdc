// See hlo/rounds.h.
#include "hlo/rounds.h"

#include "hlo/predicates.h"

namespace torch_tpu::hlo {

std::vector<Value> rounds_until_done(Builder& b, const std::vector<Value>& state, size_t done,
                                     int64_t cap, const Round& step) {
  std::vector<Value> init{b.constant_int(ElementType::kS64, 0)};
  init.insert(init.end(), state.begin(), state.end());
  auto loop = b.while_loop(
      init,
      [&](Builder& l, const std::vector<Value>& v) {
        Value more = l.compare(Compare::kLT, v[0], l.constant_int(ElementType::kS64, cap));
        return l.binary("and", more, any_true(l, l.unary("not", v[1 + done])));
      },
      [&](Builder& l, const std::vector<Value>& v) {
        std::vector<Value> next = step(l, v[0], std::vector<Value>(v.begin() + 1, v.end()));
        next.insert(next.begin(), l.binary("add", v[0], l.constant_int(ElementType::kS64, 1)));
        return next;
      });
  return std::vector<Value>(loop.begin() + 1, loop.end());
}

}  // namespace torch_tpu::hlo
