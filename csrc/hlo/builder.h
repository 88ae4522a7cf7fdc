// A small builder that emits one StableHLO function (`main`) as MLIR text.
//
// Ops are printed in MLIR's generic form ("stablehlo.add"(%a, %b) : ...),
// which every StableHLO version since the dialect's first release parses the
// same way; attributes go in a plain attribute dictionary for the same reason.
// A lowering receives a Builder, adds parameters and ops, and names results;
// Strict mode wraps one op this way, DeferAndFuse and torch.compile wrap many.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/types.h"

namespace torch_tpu::hlo {

struct Value {
  int id = -1;  // index into the builder's value table
  TensorType type;
};

enum class Compare { kEQ, kNE, kLT, kLE, kGT, kGE };

class Builder {
 public:
  Value parameter(const TensorType& type);

  // Scalar constant of `type`. Floats are emitted as exact f64 bit patterns
  // and converted, so no value is rounded by printing.
  Value constant(ElementType type, double value);
  Value constant_int(ElementType type, int64_t value);
  Value zeros(const TensorType& type);

  Value iota(const TensorType& type, int64_t dimension);
  Value convert(Value x, ElementType to);
  // Reinterprets bits; byte widths may differ (adds/drops a minor dim).
  Value bitcast_convert(Value x, const TensorType& to);
  Value reshape(Value x, const std::vector<int64_t>& dims);
  Value broadcast_in_dim(Value x, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& broadcast_dimensions);
  // Broadcasts a scalar to `dims`.
  Value splat(Value scalar, const std::vector<int64_t>& dims);
  Value transpose(Value x, const std::vector<int64_t>& permutation);
  Value slice(Value x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
              const std::vector<int64_t>& strides);
  Value pad(Value x, Value pad_value, const std::vector<int64_t>& low,
            const std::vector<int64_t>& high);
  Value concatenate(const std::vector<Value>& xs, int64_t dimension);
  // Writes `update` into `x` at constant start indices.
  Value dynamic_update_slice(Value x, Value update, const std::vector<int64_t>& start);
  // result[i...] = x[indices[i...]] for a rank-1 `x` and integer `indices`.
  Value gather_1d(Value x, Value indices);
  // x[indices[i...]] = updates[i...] for a rank-1 `x`; `updates` has the
  // shape of `indices`.
  Value scatter_1d(Value x, Value indices, Value updates);

  // Reduces `dims` of `x` with the binary StableHLO op `body` ("add",
  // "maximum", ...) starting from scalar `init`.
  Value reduce(Value x, Value init, const std::vector<int64_t>& dims, const char* body);

  // Contraction of a and b (batch dims first in the result, then a's free
  // dims, then b's), at full precision: PyTorch's default float32 matmul
  // precision is "highest".
  Value dot_general(Value a, Value b, const std::vector<int64_t>& batch_a,
                    const std::vector<int64_t>& batch_b, const std::vector<int64_t>& contract_a,
                    const std::vector<int64_t>& contract_b, ElementType result);

  Value binary(const char* op, Value a, Value b);  // "add", "multiply", ...
  Value unary(const char* op, Value a);            // "negate", "abs", ...
  Value compare(Compare direction, Value a, Value b);
  Value select(Value pred, Value on_true, Value on_false);

  // Emits any op with one result in generic form. `attributes` is the text
  // inside the attribute dictionary (may be empty).
  Value op(const std::string& name, const std::vector<Value>& operands, const TensorType& result,
           const std::string& attributes = "");

  void set_results(const std::vector<Value>& results);
  const std::vector<TensorType>& parameter_types() const { return params_; }
  const std::vector<Value>& results() const { return results_; }

  // The whole module as MLIR text.
  std::string module_text() const;

 private:
  std::string name(Value v) const;
  std::string operand_list(const std::vector<Value>& operands) const;
  static std::string type_list(const std::vector<Value>& values);
  Value emit(const std::string& line_without_result, const TensorType& type);

  std::vector<TensorType> params_;
  std::vector<bool> is_param_;
  std::vector<int> value_index_;  // param number or op result number
  std::vector<TensorType> value_types_;
  std::vector<std::string> lines_;
  std::vector<Value> results_;
  int num_ops_ = 0;
};

}  // namespace torch_tpu::hlo
