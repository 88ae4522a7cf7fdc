#include "hlo/call_module.h"

#include <stdexcept>
#include <unordered_set>

namespace torch_tpu::hlo {
namespace {

std::string value_name(const CallSequence& seq, CallValue v) {
  if (v.call < 0) return "%arg" + std::to_string(v.index);
  const std::string base = "%c" + std::to_string(v.call);
  // A single result is named plainly; several are a group (%c3#1).
  if (seq.calls.at(v.call).function->results.size() == 1) return base;
  return base + "#" + std::to_string(v.index);
}

const TensorType& value_type(const CallSequence& seq, CallValue v) {
  if (v.call < 0) return seq.params.at(v.index);
  return seq.calls.at(v.call).function->results.at(v.index);
}

std::string type_list(const std::vector<TensorType>& types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += types[i].str();
  }
  return s;
}

}  // namespace

std::string call_module_text(const CallSequence& seq) {
  std::string s = "module @torch_tpu {\n";
  std::unordered_set<const CalledFunction*> emitted;
  std::unordered_set<std::string> emitted_externals;
  for (const auto& call : seq.calls) {
    if (!emitted.insert(call.function).second) continue;
    s += call.function->text;
    for (const auto& [callee, text] : call.function->externals) {
      if (emitted_externals.insert(callee).second) s += *text;
    }
  }
  std::vector<int> alias(seq.params.size(), -1);
  for (const auto& [param, result] : seq.aliases) alias.at(param) = result;
  s += "  func.func public @main(";
  bool first = true;
  for (size_t i = 0; i < seq.params.size(); ++i) {
    if (seq.constants.count(static_cast<int>(i))) continue;
    if (!first) s += ", ";
    first = false;
    s += "%arg" + std::to_string(i) + ": " + seq.params[i].str();
    if (alias[i] >= 0) s += " {tf.aliasing_output = " + std::to_string(alias[i]) + " : i32}";
  }
  std::vector<TensorType> result_types;
  for (CallValue v : seq.results) result_types.push_back(value_type(seq, v));
  s += ") -> (" + type_list(result_types) + ") {\n";
  for (const auto& [param, bytes] : seq.constants) {
    s += "    %arg" + std::to_string(param) + " = " +
         constant_op_text(seq.params.at(param), bytes.data(), bytes.size()) + "\n";
  }
  for (size_t c = 0; c < seq.calls.size(); ++c) {
    const auto& call = seq.calls[c];
    const CalledFunction& f = *call.function;
    if (call.args.size() != f.params.size()) {
      throw std::invalid_argument("call_module_text: wrong argument count for " + f.name);
    }
    s += "    %c" + std::to_string(c);
    if (f.results.size() != 1) s += ":" + std::to_string(f.results.size());
    s += " = \"func.call\"(";
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (i) s += ", ";
      if (!(value_type(seq, call.args[i]) == f.params[i])) {
        throw std::invalid_argument("call_module_text: argument type mismatch for " + f.name);
      }
      s += value_name(seq, call.args[i]);
    }
    s += ") {callee = @" + f.name + "} : (" + type_list(f.params) + ") -> (" +
         type_list(f.results) + ")\n";
  }
  s += "    \"func.return\"(";
  for (size_t i = 0; i < seq.results.size(); ++i) {
    if (i) s += ", ";
    s += value_name(seq, seq.results[i]);
  }
  s += ") : (" + type_list(result_types) + ") -> ()\n  }\n}\n";
  return s;
}

}  // namespace torch_tpu::hlo
