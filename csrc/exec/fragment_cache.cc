#include "exec/fragment_cache.h"

namespace torch_tpu {

FragmentCache& FragmentCache::get() {
  static auto* cache = new FragmentCache();  // never destroyed (see Runtime)
  return *cache;
}

const hlo::CalledFunction& FragmentCache::find_or_lower(
    const std::string& key, c10::function_ref<void(hlo::Builder&)> lower) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) return *it->second;
  }
  // Lowered outside the lock (a lowering may raise, and may take long); a
  // thread that lowered the same key at the same time keeps the first
  // function. A name is reserved first so that it is never reused.
  size_t index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    index = functions_.size();
    functions_.emplace_back();
  }
  hlo::Builder b;
  lower(b);
  const std::string name = "op" + std::to_string(index);
  hlo::CalledFunction made{
      name, b.function_text(name), b.parameter_types(), {}, b.external_functions()};
  for (const hlo::Value& r : b.results()) made.results.push_back(r.type);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = by_key_.emplace(key, nullptr);
  if (inserted) {
    functions_[index] = std::move(made);
    it->second = &functions_[index];
  }
  return *it->second;
}

}  // namespace torch_tpu
