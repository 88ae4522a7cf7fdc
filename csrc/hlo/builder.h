// A small builder that emits one StableHLO function (`main`) as MLIR text.
//
// Ops are printed in MLIR's generic form ("stablehlo.add"(%a, %b) : ...),
// which every StableHLO version since the dialect's first release parses the
// same way; attributes go in a plain attribute dictionary for the same reason.
// A lowering receives a Builder, adds parameters and ops, and names results;
// Strict mode wraps one op this way, DeferAndFuse and torch.compile wrap many.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hlo/types.h"

namespace torch_tpu::hlo {

struct Value {
  int id = -1;  // index into the builder's value table
  TensorType type;
  // False for a default-made Value (an optional operand left out).
  bool valid() const { return id >= 0; }
};

enum class Compare { kEQ, kNE, kLT, kLE, kGT, kGE };

class Builder {
 public:
  Builder() = default;

  Value parameter(const TensorType& type);

  // Scalar constant of `type`. Floats are emitted as exact f64 bit patterns
  // and converted, so no value is rounded by printing.
  Value constant(ElementType type, double value);
  Value constant_int(ElementType type, int64_t value);
  Value zeros(const TensorType& type);
  // A dense constant from raw little-endian element bytes (numel * size).
  Value constant_tensor(const TensorType& type, const std::vector<unsigned char>& bytes);

  Value iota(const TensorType& type, int64_t dimension);
  // Element type conversion; float to u8 wraps (see float_to_u8).
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
  // Pad with interior padding (zeros between elements); negative low/high crop.
  Value pad(Value x, Value pad_value, const std::vector<int64_t>& low,
            const std::vector<int64_t>& high, const std::vector<int64_t>& interior);
  Value reverse(Value x, const std::vector<int64_t>& dims);
  Value concatenate(const std::vector<Value>& xs, int64_t dimension);
  // Writes `update` into `x` at constant start indices.
  Value dynamic_update_slice(Value x, Value update, const std::vector<int64_t>& start);
  // The same at start indices computed in the program (0-d integers, one per
  // dim; StableHLO clamps them so the update fits).
  Value dynamic_update_slice_at(Value x, Value update, const std::vector<Value>& start);
  // x[start[0] : start[0] + sizes[0], ...] at computed start indices.
  Value dynamic_slice(Value x, const std::vector<Value>& start, const std::vector<int64_t>& sizes);

  // A loop: the carried values start as `init`; while cond(carried) is true,
  // carried = body(carried). cond and body are built into child builders
  // whose parameters are the carried values. They cannot use this builder's
  // values (they would name values of another scope): what they need goes in
  // as carried values. Returns the carried values after the last iteration.
  using LoopCond = std::function<Value(Builder&, const std::vector<Value>&)>;
  using LoopBody = std::function<std::vector<Value>(Builder&, const std::vector<Value>&)>;
  std::vector<Value> while_loop(const std::vector<Value>& init, const LoopCond& cond,
                                const LoopBody& body);
  // result[i...] = x[indices[i...]] for a rank-1 `x` and integer `indices`.
  Value gather_1d(Value x, Value indices);
  // x[indices[i...]] = updates[i...] for a rank-1 `x`; `updates` has the
  // shape of `indices`.
  // `body` combines the old and the new value ("add", "maximum", ...);
  // nullptr keeps the new value. Out-of-range indices are skipped.
  // A "maximum"/"minimum" body propagates NaN, as binary() does.
  Value scatter_1d(Value x, Value indices, Value updates, const char* body = nullptr);

  // Reduces `dims` of `x` with the binary StableHLO op `body` ("add",
  // "maximum", ...) starting from scalar `init`. A "maximum"/"minimum" body
  // propagates NaN, as binary() does.
  Value reduce(Value x, Value init, const std::vector<int64_t>& dims, const char* body);
  // A reduce body: XLA's own maximum, which may drop a NaN. About twice as
  // fast on the CPU plugin as the NaN-propagating "maximum" (XLA vectorizes
  // it); only for a value whose NaNs reach the result another way, such as
  // softmax's shift.
  static constexpr const char* kMaximumMayDropNan = "maximum (may drop NaN)";

  // Contraction of a and b (batch dims first in the result, then a's free
  // dims, then b's), at full precision: PyTorch's default float32 matmul
  // precision is "highest".
  Value dot_general(Value a, Value b, const std::vector<int64_t>& batch_a,
                    const std::vector<int64_t>& batch_b, const std::vector<int64_t>& contract_a,
                    const std::vector<int64_t>& contract_b, ElementType result);

  // Windowed reduction (pooling, cumulative sums): one window per output
  // element; `padding` holds (low, high) per dimension.
  Value reduce_window(Value x, Value init, const std::vector<int64_t>& window,
                      const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                      const std::vector<std::pair<int64_t, int64_t>>& padding, const char* body);

  // N-d convolution with PyTorch's layout: lhs [N, C, spatial...], rhs
  // [O, I, spatial...], result [N, O, spatial...]. `rhs_spec` may swap the
  // roles of rhs dims 0 and 1 ("io"), `lhs_spec`/`out_spec` the roles of dims
  // 0 and 1 ("fb") — what the weight-gradient convolution needs.
  struct ConvSpec {
    std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
    std::vector<std::pair<int64_t, int64_t>> padding;
    int64_t feature_groups = 1, batch_groups = 1;
    bool lhs_fb = false, rhs_io = false, out_fb = false;
  };
  Value convolution(Value lhs, Value rhs, const ConvSpec& spec, const TensorType& result);

  // Stable sort of `operands` (same shape) along `dim`, ordered by operand 0
  // ascending or descending with NaN last in ascending order as PyTorch does
  // (first when descending).
  std::vector<Value> sort(const std::vector<Value>& operands, int64_t dim, bool descending);

  // Counter-based random bits (Threefry): returns (new state, bits of `type`).
  std::vector<Value> rng_bit_generator(Value state, const TensorType& type);

  // "add", "multiply", ... "maximum" and "minimum" propagate NaN from either
  // operand (see maximum()).
  Value binary(const char* op, Value a, Value b);
  Value unary(const char* op, Value a);  // "negate", "abs", ...
  // Elementwise max/min that propagate NaN from either operand, as StableHLO
  // specifies and PyTorch does. XLA's CPU compiler lowers its own
  // maximum/minimum to instructions that drop a NaN unless the
  // xla_cpu_enable_fast_min_max option is off, so float operands get an
  // explicit compare and select that no plugin can reinterpret; integers use
  // the plain op. Of equal operands (-0.0 and +0.0) `a` is kept, as CPU's
  // scalar kernels and reductions keep the running value.
  Value maximum(Value a, Value b);
  Value minimum(Value a, Value b);
  Value compare(Compare direction, Value a, Value b);
  // The complex conjugate (parts negated exactly: no multiply by -1 + 0j).
  Value conj(Value z);
  Value select(Value pred, Value on_true, Value on_false);

  // `v` unchanged, but opaque to XLA's simplifier: what passes through it is
  // not folded into the ops around it (stablehlo.optimization_barrier).
  Value optimization_barrier(Value v);
  // Emits any op with one result in generic form. `attributes` is the text
  // inside the attribute dictionary (may be empty).
  Value op(const std::string& name, const std::vector<Value>& operands, const TensorType& result,
           const std::string& attributes = "");

  // Calls `callee`, a function this builder does not build: a user
  // kernel's StableHLO (torch_tpu.kernels), given as `functions`, the text
  // of private functions that defines `callee` and whatever it calls (every
  // name in it owned by that kernel). The text goes into the module once,
  // beside the functions that call it (external_functions()), however many
  // calls and fragments use it; XLA inlines the call.
  std::vector<Value> call(const std::string& callee,
                          const std::shared_ptr<const std::string>& functions,
                          const std::vector<Value>& args, const std::vector<TensorType>& results);
  using ExternalFunctions = std::map<std::string, std::shared_ptr<const std::string>>;
  // By callee: what call() brought in (in child regions too).
  const ExternalFunctions& external_functions() const { return externals_; }

  void set_results(const std::vector<Value>& results);
  // Lets the executable write result `result_index` into parameter
  // `param`'s memory when the caller donates that argument at launch (the
  // `tf.aliasing_output` argument attribute, which XLA reads as a may-alias
  // pair: an argument launched as non-donatable is copied instead). The
  // types must match exactly.
  void alias_result(Value param, int result_index);
  const std::vector<TensorType>& parameter_types() const { return params_; }
  const std::vector<Value>& results() const { return results_; }

  // The whole module as MLIR text.
  std::string module_text() const;
  // The function alone, private and named `name`, for a module that calls
  // it (hlo/call_module.h); argument aliasing is the caller's to declare.
  std::string function_text(const std::string& name) const;

 private:
  // A child builder for a region: its names carry `prefix` so they cannot
  // collide with the enclosing function's.
  explicit Builder(std::string prefix) : prefix_(std::move(prefix)) {}
  // The region text "{ ^bb0(args): lines; return results }" of a child.
  std::string region_text(const std::vector<Value>& results) const;

  // "func.func <visibility> @<name>(<args>) -> (<results>) { <body> }".
  std::string function(const std::string& visibility, const std::string& name,
                       bool with_aliases) const;
  Value float_to_u8(Value x);
  // `x` (f32) as the 8-bit float `to`, with PyTorch's rules; `original` is
  // the value before it was widened to f32.
  Value float8_from_float(Value original, Value x, ElementType to);
  std::string name(Value v) const;
  std::string operand_list(const std::vector<Value>& operands) const;
  static std::string type_list(const std::vector<Value>& values);
  Value emit(const std::string& line_without_result, const TensorType& type);
  std::vector<Value> emit_multi(const std::string& line_without_result,
                                const std::vector<TensorType>& types);
  // "({ ^bb0(%lhs: t, %rhs: t): %r = stablehlo.<body>(...) return %r })";
  // maximum/minimum propagate NaN and keep %lhs (the running value) on ties.
  static std::string binary_region(const char* body, ElementType element);
  // One line of region text: `out` = stablehlo.`op_name`(args) on scalars.
  static std::string region_op(const std::string& out, const std::string& op_name,
                               const std::vector<std::pair<std::string, ElementType>>& args,
                               ElementType result, const std::string& attributes = "");
  static std::string region_compare(const std::string& out, const std::string& a,
                                    const std::string& b, Compare direction, ElementType element);

  std::vector<TensorType> params_;
  std::vector<int> param_alias_;  // per parameter: the result it may alias, or -1
  std::vector<bool> is_param_;
  std::vector<int> value_index_;   // param number or op result number
  std::vector<int> result_index_;  // result number of a multi-result op, else -1
  std::vector<TensorType> value_types_;
  std::vector<std::string> lines_;
  std::vector<Value> results_;
  int num_ops_ = 0;
  std::string prefix_;  // of value names: "" for the function, unique per region
  int regions_ = 0;     // child regions made so far (for their prefixes)
  ExternalFunctions externals_;
};

}  // namespace torch_tpu::hlo
