#include "ops/overload_names.h"

#include <unordered_map>

namespace torch_tpu::ops {

const OverloadNames& overload_names(const c10::OperatorHandle& op) {
  // Keyed by the schema's address, which is stable while the operator is
  // registered; per thread, so the lookup takes no lock.
  thread_local std::unordered_map<const c10::FunctionSchema*, OverloadNames> names;
  const c10::FunctionSchema& schema = op.schema();
  auto it = names.find(&schema);
  if (it == names.end()) {
    OverloadNames n;
    n.name = schema.name().substr(schema.name().find("::") + 2);
    n.op_name =
        schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
    it = names.emplace(&schema, std::move(n)).first;
  }
  return it->second;
}

}  // namespace torch_tpu::ops
