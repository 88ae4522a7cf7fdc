#include "hlo/builder.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace torch_tpu::hlo {
namespace {

const char* compare_name(Compare c) {
  switch (c) {
    case Compare::kEQ:
      return "EQ";
    case Compare::kNE:
      return "NE";
    case Compare::kLT:
      return "LT";
    case Compare::kLE:
      return "LE";
    case Compare::kGT:
      return "GT";
    case Compare::kGE:
      return "GE";
  }
  return "EQ";
}

const char* compare_type(ElementType t) {
  if (is_float(t) || is_complex(t)) return "FLOAT";
  if (is_signed_int(t)) return "SIGNED";
  return "UNSIGNED";
}

}  // namespace

std::string Builder::name(Value v) const {
  if (v.id < 0 || static_cast<size_t>(v.id) >= value_types_.size()) {
    throw std::logic_error("hlo::Builder: value from another builder");
  }
  std::string n =
      "%" + prefix_ + (is_param_[v.id] ? "arg" : "v") + std::to_string(value_index_[v.id]);
  if (result_index_[v.id] >= 0) n += "#" + std::to_string(result_index_[v.id]);
  return n;
}

std::string Builder::operand_list(const std::vector<Value>& operands) const {
  std::string s;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i) s += ", ";
    s += name(operands[i]);
  }
  return s;
}

std::string Builder::type_list(const std::vector<Value>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += values[i].type.str();
  }
  return s;
}

Value Builder::parameter(const TensorType& type) {
  Value v{static_cast<int>(value_types_.size()), type};
  is_param_.push_back(true);
  result_index_.push_back(-1);
  value_index_.push_back(static_cast<int>(params_.size()));
  value_types_.push_back(type);
  params_.push_back(type);
  param_alias_.push_back(-1);
  return v;
}

Value Builder::emit(const std::string& line, const TensorType& type) {
  Value v{static_cast<int>(value_types_.size()), type};
  is_param_.push_back(false);
  result_index_.push_back(-1);
  value_index_.push_back(num_ops_);
  value_types_.push_back(type);
  lines_.push_back("%" + prefix_ + "v" + std::to_string(num_ops_) + " = " + line);
  ++num_ops_;
  return v;
}

std::vector<Value> Builder::emit_multi(const std::string& line,
                                       const std::vector<TensorType>& types) {
  std::vector<Value> values;
  for (size_t i = 0; i < types.size(); ++i) {
    values.push_back(Value{static_cast<int>(value_types_.size()), types[i]});
    is_param_.push_back(false);
    result_index_.push_back(static_cast<int>(i));
    value_index_.push_back(num_ops_);
    value_types_.push_back(types[i]);
  }
  lines_.push_back("%" + prefix_ + "v" + std::to_string(num_ops_) + ":" +
                   std::to_string(types.size()) + " = " + line);
  ++num_ops_;
  return values;
}

std::string Builder::region_op(const std::string& out, const std::string& op_name,
                               const std::vector<std::pair<std::string, ElementType>>& args,
                               ElementType result, const std::string& attributes) {
  std::string names, types;
  for (size_t i = 0; i < args.size(); ++i) {
    names += (i ? ", " : "") + args[i].first;
    types += (i ? ", " : "") + TensorType{args[i].second, {}}.str();
  }
  std::string line = "      " + out + " = \"stablehlo." + op_name + "\"(" + names + ")";
  if (!attributes.empty()) line += " {" + attributes + "}";
  return line + " : (" + types + ") -> " + TensorType{result, {}}.str() + "\n";
}

std::string Builder::region_compare(const std::string& out, const std::string& a,
                                    const std::string& b, Compare direction, ElementType element) {
  return region_op(out, "compare", {{a, element}, {b, element}}, ElementType::kPred,
                   std::string("comparison_direction = #stablehlo<comparison_direction ") +
                       compare_name(direction) + ">, compare_type = #stablehlo<comparison_type " +
                       compare_type(element) + ">");
}

std::string Builder::binary_region(const char* body, ElementType element) {
  const std::string t = TensorType{element, {}}.str();
  const ElementType pred = ElementType::kPred;
  std::string lines;
  const bool is_max = std::strcmp(body, "maximum") == 0;
  if (is_float(element) && (is_max || std::strcmp(body, "minimum") == 0)) {
    // As maximum()/minimum(): %rhs where it is beyond %lhs or NaN, else %lhs.
    lines =
        region_compare("%beyond", "%lhs", "%rhs", is_max ? Compare::kLT : Compare::kGT, element) +
        region_compare("%nan", "%rhs", "%rhs", Compare::kNE, element) +
        region_op("%take_rhs", "or", {{"%beyond", pred}, {"%nan", pred}}, pred) +
        region_op("%r", "select", {{"%take_rhs", pred}, {"%rhs", element}, {"%lhs", element}},
                  element);
  } else if (std::strcmp(body, kMaximumMayDropNan) == 0) {
    lines = region_op("%r", "maximum", {{"%lhs", element}, {"%rhs", element}}, element);
  } else {
    lines = region_op("%r", body, {{"%lhs", element}, {"%rhs", element}}, element);
  }
  return " ({\n    ^bb0(%lhs: " + t + ", %rhs: " + t + "):\n" + lines +
         "      \"stablehlo.return\"(%r) : (" + t + ") -> ()\n    })";
}

Value Builder::op(const std::string& op_name, const std::vector<Value>& operands,
                  const TensorType& result, const std::string& attributes) {
  std::string line = "\"" + op_name + "\"(" + operand_list(operands) + ")";
  if (!attributes.empty()) line += " {" + attributes + "}";
  line += " : (" + type_list(operands) + ") -> " + result.str();
  return emit(line, result);
}

Value Builder::optimization_barrier(Value v) {
  return op("stablehlo.optimization_barrier", {v}, v.type);
}

Value Builder::constant(ElementType type, double value) {
  if (!is_float(type) && !is_complex(type)) {
    return constant_int(type, static_cast<int64_t>(value));
  }
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%016" PRIX64, bits);
  TensorType f64{ElementType::kF64, {}};
  Value c = emit("\"stablehlo.constant\"() {value = dense<" + std::string(hex) +
                     "> : tensor<f64>} : () -> tensor<f64>",
                 f64);
  return type == ElementType::kF64 ? c : convert(c, type);
}

Value Builder::constant_int(ElementType type, int64_t value) {
  TensorType t{type, {}};
  std::string literal;
  if (type == ElementType::kPred) {
    literal = value ? "true" : "false";
  } else if (is_float(type) || is_complex(type)) {
    return constant(type, static_cast<double>(value));
  } else if (is_unsigned_int(type)) {
    literal = std::to_string(static_cast<uint64_t>(value));
  } else {
    literal = std::to_string(value);
  }
  return emit("\"stablehlo.constant\"() {value = dense<" + literal + "> : " + t.str() +
                  "} : () -> " + t.str(),
              t);
}

Value Builder::zeros(const TensorType& type) {
  return splat(constant_int(type.element, 0), type.dims);
}

Value Builder::constant_tensor(const TensorType& type, const std::vector<unsigned char>& bytes) {
  return emit(constant_op_text(type, bytes.data(), bytes.size()), type);
}

Value Builder::iota(const TensorType& type, int64_t dimension) {
  return emit("\"stablehlo.iota\"() {iota_dimension = " + std::to_string(dimension) +
                  " : i64} : () -> " + type.str(),
              type);
}

Value Builder::convert(Value x, ElementType to) {
  if (x.type.element == to) return x;
  const ElementType from = x.type.element;
  // PyTorch's 8-bit floats convert from and to float: anything else (a
  // double, an integer, a half, another 8-bit float) goes through f32 first
  // (XLA's direct conversions from bf16 round differently at a few values).
  if (is_float8(to)) {
    return float8_from_float(x, from == ElementType::kF32 ? x : convert(x, ElementType::kF32), to);
  }
  if (is_float8(from) && to != ElementType::kF32) {
    return convert(convert(x, ElementType::kF32), to);
  }
  if (is_float(x.type.element) && to == ElementType::kU8) return float_to_u8(x);
  return op("stablehlo.convert", {x}, TensorType{to, x.type.dims});
}

// XLA's conversion to an 8-bit float with the three places where PyTorch's
// (c10's Float8 types) decides otherwise: e4m3fn saturates what is beyond
// its largest value (448) instead of making it NaN; e5m2 spells NaN
// 0x7F/0xFF (XLA: 0x7E/0xFE); e8m0 takes the magnitude (a negative value's
// exponent) and makes zero its smallest value, 2^-127, not NaN.
Value Builder::float8_from_float(Value original, Value x, ElementType to) {
  const std::vector<int64_t>& dims = x.type.dims;
  const TensorType result{to, dims};
  switch (to) {
    case ElementType::kF8E4M3FN: {
      const Value largest = splat(constant(x.type.element, 448.0), dims);
      const Value beyond = compare(Compare::kGT, unary("abs", x), largest);
      x = select(beyond, binary("multiply", unary("sign", x), largest), x);
      return op("stablehlo.convert", {x}, result);
    }
    case ElementType::kF8E5M2: {
      const TensorType u8{ElementType::kU8, dims};
      auto byte = [&](int64_t b) { return splat(constant_int(ElementType::kU8, b), dims); };
      // The NaN byte keeps the source's sign, read before it was widened
      // (XLA's conversions need not keep a NaN's sign). An integer is never
      // NaN, and the NaN of a FNUZ or e8m0 type has no sign: it becomes
      // float's positive NaN.
      const ElementType from = original.type.element;
      Value nan_byte = byte(0x7F);
      if (is_float(from) && from != ElementType::kF8E4M3FNUZ && from != ElementType::kF8E5M2FNUZ &&
          from != ElementType::kF8E8M0FNU) {
        const size_t width = byte_size(from);
        const ElementType raw = width == 1   ? ElementType::kU8
                                : width == 2 ? ElementType::kU16
                                : width == 4 ? ElementType::kU32
                                             : ElementType::kU64;
        const Value top =
            splat(constant_int(raw, static_cast<int64_t>(uint64_t{1} << (8 * width - 1))), dims);
        const Value sign_set =
            compare(Compare::kGE, bitcast_convert(original, TensorType{raw, dims}), top);
        nan_byte = select(sign_set, byte(0xFF), nan_byte);
      }
      // chosen among bytes, then reinterpreted: a NaN constant of the 8-bit
      // type would be folded into XLA's one NaN, whatever its sign
      const Value y = bitcast_convert(op("stablehlo.convert", {x}, result), u8);
      return bitcast_convert(select(compare(Compare::kNE, x, x), nan_byte, y), result);
    }
    case ElementType::kF8E8M0FNU: {
      // From the f32 bits, in integers (the CPU plugin's conversion flushes
      // subnormal inputs to zero first): the biased exponent of |x|, plus
      // one where the mantissa is at least half (to nearest, ties up: c10's
      // rule); inf and NaN, and what rounds past 2^127, are 0xFF (NaN).
      const TensorType u32{ElementType::kU32, dims};
      auto word = [&](int64_t w) { return splat(constant_int(ElementType::kU32, w), dims); };
      const Value b = bitcast_convert(x, u32);
      const Value exponent = binary("and", binary("shift_right_logical", b, word(23)), word(0xFF));
      // (a subnormal of exactly 2^-127 is e8m0's smallest value, not a tie)
      const Value mantissa = binary("and", b, word(0x7FFFFF));
      const Value up = binary("and", compare(Compare::kGE, mantissa, word(0x400000)),
                              binary("or", compare(Compare::kNE, exponent, word(0)),
                                     compare(Compare::kGT, mantissa, word(0x400000))));
      const Value rounded = binary("add", exponent, convert(up, ElementType::kU32));
      const Value byte = convert(binary("minimum", rounded, word(0xFF)), ElementType::kU8);
      return bitcast_convert(byte, result);
    }
    default:
      return op("stablehlo.convert", {x}, result);
  }
}

// A float becomes u8 through a 64-bit integer, wrapping modulo 256 (-1.5 is
// 255, 300.0 is 44): the one out-of-range float-to-integer cast the front end
// defines the same way on every device (XLA's own convert saturates). Values
// no 64-bit integer holds, infinities and NaN give 0, as the x86 conversion
// (whose out-of-range result is INT64_MIN) does.
Value Builder::float_to_u8(Value x) {
  const TensorType u8{ElementType::kU8, x.type.dims};
  Value wide = op("stablehlo.convert", {x}, TensorType{ElementType::kS64, x.type.dims});
  Value wrapped = op("stablehlo.convert", {wide}, u8);
  // f16 holds no finite value beyond 65504; 2^63 is exact in the wider floats.
  Value in_range =
      x.type.element == ElementType::kF16
          ? op("stablehlo.is_finite", {x}, TensorType{ElementType::kPred, x.type.dims})
          : compare(Compare::kLT, unary("abs", x),
                    splat(constant(x.type.element, 9223372036854775808.0), x.type.dims));
  return select(in_range, wrapped, zeros(u8));
}

Value Builder::bitcast_convert(Value x, const TensorType& to) {
  if (x.type == to) return x;
  return op("stablehlo.bitcast_convert", {x}, to);
}

Value Builder::reshape(Value x, const std::vector<int64_t>& dims) {
  if (x.type.dims == dims) return x;
  return op("stablehlo.reshape", {x}, TensorType{x.type.element, dims});
}

Value Builder::broadcast_in_dim(Value x, const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& bdims) {
  return op("stablehlo.broadcast_in_dim", {x}, TensorType{x.type.element, dims},
            "broadcast_dimensions = " + i64_array(bdims));
}

Value Builder::splat(Value scalar, const std::vector<int64_t>& dims) {
  if (dims.empty() && scalar.type.dims.empty()) return scalar;
  return broadcast_in_dim(scalar, dims, {});
}

Value Builder::transpose(Value x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  if (identity) return x;
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x.type.dims[p]);
  return op("stablehlo.transpose", {x}, TensorType{x.type.element, dims},
            "permutation = " + i64_array(perm));
}

Value Builder::slice(Value x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                     const std::vector<int64_t>& strides) {
  std::vector<int64_t> dims;
  bool identity = true;
  for (size_t i = 0; i < start.size(); ++i) {
    int64_t n = limit[i] > start[i] ? (limit[i] - start[i] + strides[i] - 1) / strides[i] : 0;
    dims.push_back(n);
    identity &= start[i] == 0 && limit[i] == x.type.dims[i] && strides[i] == 1;
  }
  if (identity) return x;
  return op("stablehlo.slice", {x}, TensorType{x.type.element, dims},
            "start_indices = " + i64_array(start) + ", limit_indices = " + i64_array(limit) +
                ", strides = " + i64_array(strides));
}

Value Builder::pad(Value x, Value pad_value, const std::vector<int64_t>& low,
                   const std::vector<int64_t>& high) {
  return pad(x, pad_value, low, high, std::vector<int64_t>(x.type.dims.size(), 0));
}

Value Builder::pad(Value x, Value pad_value, const std::vector<int64_t>& low,
                   const std::vector<int64_t>& high, const std::vector<int64_t>& interior) {
  std::vector<int64_t> dims = x.type.dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t n = dims[i];
    dims[i] = low[i] + high[i] + (n > 0 ? n + (n - 1) * interior[i] : 0);
  }
  return op("stablehlo.pad", {x, pad_value}, TensorType{x.type.element, dims},
            "edge_padding_low = " + i64_array(low) + ", edge_padding_high = " + i64_array(high) +
                ", interior_padding = " + i64_array(interior));
}

Value Builder::reverse(Value x, const std::vector<int64_t>& dims) {
  if (dims.empty()) return x;
  return op("stablehlo.reverse", {x}, x.type, "dimensions = " + i64_array(dims));
}

Value Builder::concatenate(const std::vector<Value>& xs, int64_t dimension) {
  if (xs.size() == 1) return xs[0];
  TensorType result = xs.at(0).type;
  result.dims[dimension] = 0;
  for (const Value& x : xs) result.dims[dimension] += x.type.dims[dimension];
  return op("stablehlo.concatenate", xs, result,
            "dimension = " + std::to_string(dimension) + " : i64");
}

Value Builder::dynamic_update_slice(Value x, Value update, const std::vector<int64_t>& start) {
  std::vector<Value> operands{x, update};
  for (int64_t s : start) operands.push_back(constant_int(ElementType::kS64, s));
  return op("stablehlo.dynamic_update_slice", operands, x.type);
}

Value Builder::dynamic_update_slice_at(Value x, Value update, const std::vector<Value>& start) {
  std::vector<Value> operands{x, update};
  operands.insert(operands.end(), start.begin(), start.end());
  return op("stablehlo.dynamic_update_slice", operands, x.type);
}

Value Builder::dynamic_slice(Value x, const std::vector<Value>& start,
                             const std::vector<int64_t>& sizes) {
  std::vector<Value> operands{x};
  operands.insert(operands.end(), start.begin(), start.end());
  return op("stablehlo.dynamic_slice", operands, TensorType{x.type.element, sizes},
            "slice_sizes = " + i64_array(sizes));
}

std::string Builder::region_text(const std::vector<Value>& results) const {
  std::string s = "{\n    ^bb0(";
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i) s += ", ";
    s += "%" + prefix_ + "arg" + std::to_string(i) + ": " + params_[i].str();
  }
  s += "):\n";
  for (const auto& line : lines_) s += "      " + line + "\n";
  s += "      \"stablehlo.return\"(" + operand_list(results) + ") : (" + type_list(results) +
       ") -> ()\n    }";
  return s;
}

std::vector<Value> Builder::while_loop(const std::vector<Value>& init, const LoopCond& cond,
                                       const LoopBody& body) {
  const std::string prefix = prefix_ + "w" + std::to_string(regions_++) + "_";
  std::vector<TensorType> types;
  for (const Value& v : init) types.push_back(v.type);
  auto child = [&](const char* role) {
    Builder b(prefix + role);
    std::vector<Value> carried;
    for (const TensorType& t : types) carried.push_back(b.parameter(t));
    return std::make_pair(std::move(b), carried);
  };
  auto [cond_builder, cond_args] = child("c");
  const Value keep_going = cond(cond_builder, cond_args);
  if (keep_going.type.element != ElementType::kPred || !keep_going.type.dims.empty()) {
    throw std::logic_error("hlo::Builder::while_loop: the condition must be a 0-d i1");
  }
  auto [body_builder, body_args] = child("b");
  const std::vector<Value> next = body(body_builder, body_args);
  if (next.size() != types.size()) {
    throw std::logic_error("hlo::Builder::while_loop: the body must return every carried value");
  }
  for (size_t i = 0; i < next.size(); ++i) {
    if (!(next[i].type == types[i])) {
      throw std::logic_error("hlo::Builder::while_loop: carried value " + std::to_string(i) +
                             " changes type in the body");
    }
  }
  for (const Builder* child : {&cond_builder, &body_builder}) {
    externals_.insert(child->externals_.begin(), child->externals_.end());
  }
  std::string line = "\"stablehlo.while\"(" + operand_list(init) + ") (" +
                     cond_builder.region_text({keep_going}) + ", " +
                     body_builder.region_text(next) + ") : (" + type_list(init) + ") -> (" +
                     type_list(init) + ")";
  if (types.size() == 1) return {emit(line, types[0])};
  return emit_multi(line, types);
}

Value Builder::gather_1d(Value x, Value indices) {
  std::vector<int64_t> idx_dims = indices.type.dims;
  TensorType result{x.type.element, idx_dims};
  return op("stablehlo.gather", {x, indices}, result,
            "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], "
            "start_index_map = [0], index_vector_dim = " +
                std::to_string(idx_dims.size()) +
                ">, indices_are_sorted = false, slice_sizes = array<i64: 1>");
}

Value Builder::scatter_1d(Value x, Value indices, Value updates, const char* body) {
  TensorType scalar{x.type.element, {}};
  // Without a body the update computation keeps the new value.
  std::string region = body != nullptr
                           ? binary_region(body, x.type.element)
                           : " ({\n    ^bb0(%lhs: " + scalar.str() + ", %rhs: " + scalar.str() +
                                 "):\n      \"stablehlo.return\"(%rhs) : (" + scalar.str() +
                                 ") -> ()\n    })";
  std::string line = "\"stablehlo.scatter\"(" + operand_list({x, indices, updates}) + ")" + region +
                     " {indices_are_sorted = false, scatter_dimension_numbers = "
                     "#stablehlo.scatter<inserted_window_dims = [0], "
                     "scatter_dims_to_operand_dims = [0], index_vector_dim = " +
                     std::to_string(indices.type.rank()) + ">, unique_indices = false} : (" +
                     type_list({x, indices, updates}) + ") -> " + x.type.str();
  return emit(line, x.type);
}

Value Builder::reduce(Value x, Value init, const std::vector<int64_t>& dims, const char* body) {
  std::vector<int64_t> kept;
  for (size_t i = 0; i < x.type.dims.size(); ++i) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) == dims.end()) {
      kept.push_back(x.type.dims[i]);
    }
  }
  TensorType result{x.type.element, kept};
  std::string line = "\"stablehlo.reduce\"(" + operand_list({x, init}) + ")" +
                     binary_region(body, x.type.element) + " {dimensions = " + i64_array(dims) +
                     "} : (" + type_list({x, init}) + ") -> " + result.str();
  return emit(line, result);
}

Value Builder::dot_general(Value a, Value b, const std::vector<int64_t>& batch_a,
                           const std::vector<int64_t>& batch_b,
                           const std::vector<int64_t>& contract_a,
                           const std::vector<int64_t>& contract_b, ElementType result) {
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<int64_t> dims;
  for (int64_t d : batch_a) dims.push_back(a.type.dims[d]);
  for (size_t d = 0; d < a.type.dims.size(); ++d) {
    if (!contains(batch_a, d) && !contains(contract_a, d)) dims.push_back(a.type.dims[d]);
  }
  for (size_t d = 0; d < b.type.dims.size(); ++d) {
    if (!contains(batch_b, d) && !contains(contract_b, d)) dims.push_back(b.type.dims[d]);
  }
  std::string numbers;
  auto field = [&](const char* name, const std::vector<int64_t>& v) {
    if (v.empty()) return;
    if (!numbers.empty()) numbers += ", ";
    numbers += std::string(name) + " = " + bracket_list(v);
  };
  field("lhs_batching_dimensions", batch_a);
  field("rhs_batching_dimensions", batch_b);
  field("lhs_contracting_dimensions", contract_a);
  field("rhs_contracting_dimensions", contract_b);
  return op("stablehlo.dot_general", {a, b}, TensorType{result, dims},
            "dot_dimension_numbers = #stablehlo.dot<" + numbers +
                ">, precision_config = [#stablehlo<precision HIGHEST>, "
                "#stablehlo<precision HIGHEST>]");
}

Value Builder::binary(const char* op_name, Value a, Value b) {
  if (std::strcmp(op_name, "maximum") == 0) return maximum(a, b);
  if (std::strcmp(op_name, "minimum") == 0) return minimum(a, b);
  return op(std::string("stablehlo.") + op_name, {a, b}, a.type);
}

Value Builder::maximum(Value a, Value b) {
  if (!is_float(a.type.element)) return op("stablehlo.maximum", {a, b}, a.type);
  // b where it is beyond a or NaN; else a (NaN or not).
  Value take_b = binary("or", compare(Compare::kLT, a, b), compare(Compare::kNE, b, b));
  return select(take_b, b, a);
}

Value Builder::minimum(Value a, Value b) {
  if (!is_float(a.type.element)) return op("stablehlo.minimum", {a, b}, a.type);
  Value take_b = binary("or", compare(Compare::kGT, a, b), compare(Compare::kNE, b, b));
  return select(take_b, b, a);
}

Value Builder::unary(const char* op_name, Value a) {
  return op(std::string("stablehlo.") + op_name, {a}, a.type);
}

Value Builder::compare(Compare direction, Value a, Value b) {
  return op("stablehlo.compare", {a, b}, TensorType{ElementType::kPred, a.type.dims},
            std::string("comparison_direction = #stablehlo<comparison_direction ") +
                compare_name(direction) + ">, compare_type = #stablehlo<comparison_type " +
                compare_type(a.type.element) + ">");
}

Value Builder::conj(Value z) {
  const TensorType part{real_part_type(z.type.element), z.type.dims};
  Value re = op("stablehlo.real", {z}, part);
  Value im = op("stablehlo.imag", {z}, part);
  return op("stablehlo.complex", {re, unary("negate", im)}, z.type);
}

Value Builder::select(Value pred, Value on_true, Value on_false) {
  return op("stablehlo.select", {pred, on_true, on_false}, on_true.type);
}

void Builder::set_results(const std::vector<Value>& results) { results_ = results; }

void Builder::alias_result(Value param, int result_index) {
  if (param.id < 0 || !is_param_.at(param.id)) {
    throw std::invalid_argument("alias_result: not a parameter");
  }
  if (result_index < 0 || static_cast<size_t>(result_index) >= results_.size() ||
      !(results_[result_index].type == param.type)) {
    throw std::invalid_argument("alias_result: no result of the parameter's type at that index");
  }
  param_alias_.at(value_index_.at(param.id)) = result_index;
}

std::string Builder::function(const std::string& visibility, const std::string& name,
                              bool with_aliases) const {
  std::string s = "func.func " + visibility + " @" + name + "(";
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i) s += ", ";
    s += "%arg" + std::to_string(i) + ": " + params_[i].str();
    if (with_aliases && param_alias_[i] >= 0) {
      s += " {tf.aliasing_output = " + std::to_string(param_alias_[i]) + " : i32}";
    }
  }
  s += ") -> (" + type_list(results_) + ") {\n";
  for (const auto& line : lines_) s += "    " + line + "\n";
  s += "    \"func.return\"(" + operand_list(results_) + ") : (" + type_list(results_) +
       ") -> ()\n  }\n";
  return s;
}

std::vector<Value> Builder::call(const std::string& callee,
                                 const std::shared_ptr<const std::string>& functions,
                                 const std::vector<Value>& args,
                                 const std::vector<TensorType>& results) {
  auto [it, inserted] = externals_.emplace(callee, functions);
  if (!inserted && *it->second != *functions) {
    throw std::invalid_argument("hlo::Builder::call: two different definitions of @" + callee);
  }
  std::string result_types;
  for (size_t i = 0; i < results.size(); ++i) result_types += (i ? ", " : "") + results[i].str();
  const std::string line = "\"func.call\"(" + operand_list(args) + ") {callee = @" + callee +
                           "} : (" + type_list(args) + ") -> (" + result_types + ")";
  if (results.size() == 1) return {emit(line, results[0])};
  return emit_multi(line, results);
}

std::string Builder::module_text() const {
  std::string s = "module @torch_tpu {\n";
  for (const auto& [callee, text] : externals_) s += *text;
  return s + "  " + function("public", "main", /*with_aliases=*/true) + "}\n";
}

std::string Builder::function_text(const std::string& name) const {
  return "  " + function("private", name, /*with_aliases=*/false);
}

}  // namespace torch_tpu::hlo
