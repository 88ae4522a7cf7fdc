// Builder ops with windows, regions or several results: reduce_window,
// convolution, sort and the random bit generator. Kept apart from the plain
// elementwise and shape ops in builder.cc.
#include <string>

#include "hlo/builder.h"

namespace torch_tpu::hlo {
namespace {

std::string padding_attr(const std::vector<std::pair<int64_t, int64_t>>& padding) {
  std::string s = "dense<[";
  for (size_t i = 0; i < padding.size(); ++i) {
    if (i) s += ", ";
    s += "[" + std::to_string(padding[i].first) + ", " + std::to_string(padding[i].second) + "]";
  }
  s += "]> : tensor<" + std::to_string(padding.size()) + "x2xi64>";
  return s;
}

// Output length of a window sliding over `n` elements.
int64_t window_out(int64_t n, int64_t base_dilation, int64_t low, int64_t high, int64_t window,
                   int64_t window_dilation, int64_t stride) {
  const int64_t dilated = n > 0 ? (n - 1) * base_dilation + 1 : 0;
  const int64_t padded = dilated + low + high;
  const int64_t effective = (window - 1) * window_dilation + 1;
  return padded < effective ? 0 : (padded - effective) / stride + 1;
}

}  // namespace

Value Builder::reduce_window(Value x, Value init, const std::vector<int64_t>& window,
                             const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& dilation,
                             const std::vector<std::pair<int64_t, int64_t>>& padding,
                             const char* body) {
  TensorType result{x.type.element, {}};
  for (size_t i = 0; i < x.type.dims.size(); ++i) {
    result.dims.push_back(window_out(x.type.dims[i], 1, padding[i].first, padding[i].second,
                                     window[i], dilation[i], strides[i]));
  }
  std::string line =
      "\"stablehlo.reduce_window\"(" + operand_list({x, init}) + ")" +
      binary_region(body, x.type.element) + " {window_dimensions = " + i64_array(window) +
      ", window_strides = " + i64_array(strides) + ", window_dilations = " + i64_array(dilation) +
      ", padding = " + padding_attr(padding) + "} : (" + type_list({x, init}) + ") -> " +
      result.str();
  return emit(line, result);
}

Value Builder::convolution(Value lhs, Value rhs, const ConvSpec& spec, const TensorType& result) {
  std::string spatial;
  for (size_t i = 0; i < spec.strides.size(); ++i) spatial += ", " + std::to_string(i);
  const std::string lhs_layout = spec.lhs_fb ? "[f, b" : "[b, f";
  const std::string rhs_layout = spec.rhs_io ? "[i, o" : "[o, i";
  const std::string out_layout = spec.out_fb ? "[f, b" : "[b, f";
  std::string attrs =
      "batch_group_count = " + std::to_string(spec.batch_groups) +
      " : i64, dimension_numbers = #stablehlo.conv<" + lhs_layout + spatial + "]x" + rhs_layout +
      spatial + "]->" + out_layout + spatial +
      "]>, feature_group_count = " + std::to_string(spec.feature_groups) +
      " : i64, lhs_dilation = " + i64_array(spec.lhs_dilation) +
      ", padding = " + padding_attr(spec.padding) +
      ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]" +
      ", rhs_dilation = " + i64_array(spec.rhs_dilation) +
      ", window_strides = " + i64_array(spec.strides);
  return op("stablehlo.convolution", {lhs, rhs}, result, attrs);
}

std::vector<Value> Builder::sort(const std::vector<Value>& operands, int64_t dim, bool descending) {
  const ElementType key = operands.at(0).type.element;
  const std::string kt = TensorType{key, {}}.str();
  const std::string pt = TensorType{ElementType::kPred, {}}.str();
  std::string args;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string t = TensorType{operands[i].type.element, {}}.str();
    if (i) args += ", ";
    args += "%a" + std::to_string(i) + ": " + t + ", %b" + std::to_string(i) + ": " + t;
  }
  auto cmp = [&](const std::string& out, const std::string& a, const std::string& b,
                 const char* dir, const char* type) {
    return "      " + out + " = \"stablehlo.compare\"(" + a + ", " + b +
           ") {comparison_direction = #stablehlo<comparison_direction " + dir +
           ">, compare_type = #stablehlo<comparison_type " + type + ">} : (" + kt + ", " + kt +
           ") -> " + pt + "\n";
  };
  const bool fp = is_float(key);
  const char* type = fp ? "FLOAT" : (is_signed_int(key) ? "SIGNED" : "UNSIGNED");
  std::string region = " ({\n    ^bb0(" + args + "):\n";
  if (key == ElementType::kPred) {
    // false < true: a < b  <=>  !a && b (ascending), a && !b (descending).
    region += "      %t = \"stablehlo.constant\"() {value = dense<true> : " + pt + "} : () -> " +
              pt + "\n";
    const char* lo = descending ? "%b0" : "%a0";
    const char* hi = descending ? "%a0" : "%b0";
    region += std::string("      %n = \"stablehlo.xor\"(") + lo + ", %t) : (" + pt + ", " + pt +
              ") -> " + pt + "\n";
    region += std::string("      %r = \"stablehlo.and\"(%n, ") + hi + ") : (" + pt + ", " + pt +
              ") -> " + pt + "\n";
  } else if (!fp) {
    region += cmp("%r", "%a0", "%b0", descending ? "GT" : "LT", type);
  } else {
    // NaN sorts as the largest value: last ascending, first descending.
    region += cmp("%o", "%a0", "%b0", descending ? "GT" : "LT", type);
    region += cmp("%an", "%a0", "%a0", "NE", type);
    region += cmp("%bn", "%b0", "%b0", "NE", type);
    region += "      %t = \"stablehlo.constant\"() {value = dense<true> : " + pt + "} : () -> " +
              pt + "\n";
    // ascending: !an && bn ; descending: an && !bn
    const char* keep = descending ? "%an" : "%bn";
    const char* flip = descending ? "%bn" : "%an";
    region += std::string("      %nf = \"stablehlo.xor\"(") + flip + ", %t) : (" + pt + ", " + pt +
              ") -> " + pt + "\n";
    region += std::string("      %nan = \"stablehlo.and\"(%nf, ") + keep + ") : (" + pt + ", " +
              pt + ") -> " + pt + "\n";
    region += "      %r = \"stablehlo.or\"(%o, %nan) : (" + pt + ", " + pt + ") -> " + pt + "\n";
  }
  region += "      \"stablehlo.return\"(%r) : (" + pt + ") -> ()\n    })";
  std::vector<TensorType> types;
  for (const Value& v : operands) types.push_back(v.type);
  std::string results;
  for (size_t i = 0; i < types.size(); ++i) results += (i ? ", " : "") + types[i].str();
  std::string line = "\"stablehlo.sort\"(" + operand_list(operands) + ")" + region +
                     " {dimension = " + std::to_string(dim) + " : i64, is_stable = true} : (" +
                     type_list(operands) + ") -> (" + results + ")";
  return emit_multi(line, types);
}

std::vector<Value> Builder::rng_bit_generator(Value state, const TensorType& type) {
  std::string line = "\"stablehlo.rng_bit_generator\"(" + operand_list({state}) +
                     ") {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (" +
                     state.type.str() + ") -> (" + state.type.str() + ", " + type.str() + ")";
  return emit_multi(line, {state.type, type});
}

}  // namespace torch_tpu::hlo
