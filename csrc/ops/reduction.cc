#include "ops/reduction.h"

#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include <limits>
#include <string>

#include "core/dtype_map.h"
#include "hlo/reduce_identity.h"
#include "ops/broadcast.h"
#include "ops/device_empty.h"
#include "ops/out_checks.h"
#include "ops/overload_names.h"
#include "ops/tensor_program.h"

namespace torch_tpu::ops {
namespace {

using hlo::Builder;
using hlo::ElementType;
using hlo::Value;

Value reduce(Builder& b, Value x, const std::vector<int64_t>& dims, const char* body) {
  if (dims.empty()) return x;
  return b.reduce(x, hlo::reduce_identity(b, body, x.type.element), dims, body);
}

// Shape of x with `dims` reduced, kept as size 1 for broadcasting back.
std::vector<int64_t> kept_shape(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& dims) {
  std::vector<int64_t> out = shape;
  for (int64_t d : dims) out[d] = 1;
  return out;
}

Value is_nan(Builder& b, Value x) { return b.compare(hlo::Compare::kNE, x, x); }

// The first max (or min) along `dim` and its index, {value, index}; NaN
// counts as the extreme, as in PyTorch. (Three plain reductions: one
// variadic reduce over (value, index) pairs runs 5-10x slower on XLA's CPU
// backend.)
std::vector<Value> arg_extreme(Builder& b, Value x, int64_t dim, bool is_max) {
  const auto& shape = x.type.dims;
  Value m = reduce(b, x, {dim}, is_max ? "maximum" : "minimum");
  Value mb = broadcast_to(b, b.reshape(m, kept_shape(shape, {dim})), shape);
  Value hit = b.compare(hlo::Compare::kEQ, x, mb);
  if (hlo::is_float(x.type.element)) {
    hit = b.binary("or", hit, b.binary("and", is_nan(b, x), is_nan(b, mb)));
  }
  Value iota = b.iota({ElementType::kS64, shape}, dim);
  Value big =
      b.splat(b.constant_int(ElementType::kS64, std::numeric_limits<int64_t>::max()), shape);
  return {m, reduce(b, b.select(hit, iota, big), {dim}, "minimum")};
}

struct Args {
  at::Tensor self;
  std::optional<std::vector<int64_t>> dim;  // nullopt: all dims
  bool keepdim = false;
  std::optional<at::ScalarType> dtype;
  std::optional<at::Scalar> correction;
  double ord = 2.0;  // linalg_vector_norm
  int64_t mode = 0;  // hash_tensor
  std::vector<at::Tensor> outs;
};

Args parse(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  auto args = torch::jit::last(*stack, schema.arguments().size());
  Args a;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const auto& name = schema.arguments()[i].name();
    const c10::IValue& v = args[i];
    if (name == "self") {
      a.self = v.toTensor();
    } else if (name == "dim") {
      if (v.isInt()) {
        a.dim = std::vector<int64_t>{v.toInt()};
      } else if (v.isIntList()) {
        a.dim = v.toIntVector();
      }
    } else if (name == "keepdim") {
      a.keepdim = v.toBool();
    } else if (name == "dtype") {
      if (!v.isNone()) a.dtype = v.toScalarType();
    } else if (name == "correction") {
      if (!v.isNone()) a.correction = v.toScalar();
    } else if (name == "ord") {
      a.ord = v.toScalar().toDouble();
    } else if (name == "mode") {
      a.mode = v.toInt();
    } else if (name == "unbiased") {
      a.correction = at::Scalar(v.toBool() ? 1 : 0);
    } else if (schema.arguments()[i].alias_info() &&
               schema.arguments()[i].alias_info()->isWrite()) {
      // out=, or max.dim_max's (max, max_values), min.dim_min's (min, min_indices)
      a.outs.push_back(v.toTensor());
    }
  }
  return a;
}

// CPU's rules for a reduction's out= tensors (each op's own wording), given
// the dtype the op computes.
void check_reduction_outs(const std::string& name, const char* op, const Args& a,
                          at::ScalarType out_type, bool with_indices) {
  const at::Tensor& out = a.outs[0];
  const at::ScalarType in_type = a.self.scalar_type();
  if (name == "argmax" || name == "argmin" || name == "linalg_vector_norm") {
    check_out_dtype(op, out, out_type);
  } else if (with_indices) {
    check_out_dtype(op, out, in_type);
    check_out_dtype(op, a.outs[1], at::kLong);
  } else if (name == "amax" || name == "amin") {
    TORCH_CHECK(out.scalar_type() == in_type, op,
                ": Expected the dtype for input and out to match, but got ", in_type,
                " for input's dtype and ", out.scalar_type(), " for out's dtype.");
  } else if (name == "mean") {
    if (a.dtype) check_out_dtype(op, out, *a.dtype);
    // CPU sums into out, then divides it in place: a true division, whose
    // result (the default float dtype) must cast to out's.
    check_out_castable(op, c10::typeMetaToScalarType(c10::get_default_dtype()), out);
  } else if (name == "var" || name == "std") {
    check_out_castable(op, out_type, out);
  } else if (name == "logsumexp") {
    TORCH_CHECK(at::isFloatingType(out.scalar_type()) || at::isComplexType(out.scalar_type()),
                "logsumexp(): Expected floating point type for result tensor, but got: ",
                out.scalar_type());
  } else if (name == "all" || name == "any") {
    TORCH_CHECK(out.scalar_type() == at::kBool || out.scalar_type() == at::kByte, name,
                " only supports bool tensor for result, got: ", out.scalar_type());
  } else if (name == "hash_tensor") {
    TORCH_CHECK(out.scalar_type() == at::kUInt64, "Expected result to be of dtype uint64, but got ",
                out.scalar_type());
  }
}

void reduction_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const OverloadNames& names = overload_names(op);
  const std::string& name = names.name;
  const std::string& op_name = names.op_name;
  Args a = parse(op, stack);
  const at::Tensor& self = a.self;
  const int64_t rank = self.dim();

  // Reduced dims: an empty list means all dims for these ops (dim=[] is
  // "reduce everything" in ATen's reduction convention).
  std::vector<int64_t> dims;
  if (a.dim && !a.dim->empty()) {
    auto bits = at::dim_list_to_bitset(*a.dim, rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (bits[d]) dims.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  const bool all_dims = !a.dim.has_value();
  const bool picks_element = name == "argmax" || name == "argmin" || name == "max" ||
                             name == "min" || name == "amax" || name == "amin";
  TORCH_CHECK((name != "argmax" && name != "argmin") || self.scalar_type() != at::kBool, name,
              "(): does not support bool input");
  const bool hash = name == "hash_tensor";
  if (hash) {
    // torch.hash_tensor: the xor of the elements' 64 bits (floats as double,
    // integers and bools as int64), CPU's only mode
    TORCH_CHECK(a.mode == 0, "Unknown hash_tensor mode: ", a.mode);
    const at::ScalarType t = self.scalar_type();
    const bool hashable = t == at::kBool || t == at::kByte || t == at::kChar || t == at::kShort ||
                          t == at::kInt || t == at::kLong || t == at::kHalf || t == at::kBFloat16 ||
                          t == at::kFloat || t == at::kDouble;
    TORCH_CHECK_NOT_IMPLEMENTED(hashable, "\"xor_sum\" not implemented for '", c10::toString(t),
                                "'");
  }
  if (self.numel() == 0 && (picks_element || hash)) {
    // (hash_tensor says "hash_tensor: ", the others "name(): ")
    const char* sep = hash ? ": " : "(): ";
    // (no dim, or dim=[]: every dim; picks_element ops other than amax and
    // amin take no dim list)
    const bool every_dim = !a.dim || a.dim->empty();
    TORCH_CHECK(!every_dim || name == "amax" || name == "amin", name, sep,
                "Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.");
    for (int64_t d : dims) {
      TORCH_CHECK_INDEX(self.size(d) != 0, name, sep, "Expected reduction dim ", d,
                        " to have non-zero size.");
    }
  }

  // Output dtype, as ATen computes it.
  const at::ScalarType in_type = self.scalar_type();
  at::ScalarType out_type = in_type;
  if (name == "sum" || name == "prod") {
    out_type = a.dtype.value_or(at::isIntegralType(in_type, true) ? at::kLong : in_type);
  } else if (name == "mean") {
    out_type = a.dtype.value_or(in_type);
    TORCH_CHECK(at::isFloatingType(out_type) || at::isComplexType(out_type),
                "mean(): could not infer output dtype. Input dtype must be either a floating point "
                "or complex dtype. Got: ",
                c10::toString(out_type));
  } else if (name == "all" || name == "any") {
    out_type = in_type == at::kByte ? at::kByte : at::kBool;
  } else if (name == "argmax" || name == "argmin") {
    out_type = at::kLong;
  } else if (name == "var" || name == "std") {
    TORCH_CHECK(at::isFloatingType(in_type) || at::isComplexType(in_type), name,
                "(): input dtype should be either floating point or complex. Got ",
                c10::toString(in_type), " instead.");
    out_type = c10::toRealValueType(in_type);
  } else if (name == "linalg_vector_norm") {
    TORCH_CHECK(at::isFloatingType(in_type) || at::isComplexType(in_type),
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
                c10::toString(in_type));
    out_type = a.dtype.value_or(c10::toRealValueType(in_type));
  } else if (hash) {
    out_type = at::kUInt64;
  } else if (name == "logsumexp") {
    out_type = at::isIntegralType(in_type, true)
                   ? c10::typeMetaToScalarType(c10::get_default_dtype())
                   : in_type;
  }

  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced)
      out_shape.push_back(self.size(d));
    else if (a.keepdim)
      out_shape.push_back(1);
  }

  // Values of max.dim/min.dim come with indices; argmax over all dims works
  // on the flattened tensor.
  const bool with_indices = (name == "max" || name == "min") && !all_dims;
  if (!a.outs.empty()) check_reduction_outs(name, name.c_str(), a, out_type, with_indices);
  std::vector<at::Tensor> results;
  auto make_out = [&](size_t i, at::ScalarType t) {
    if (i < a.outs.size()) {
      at::native::resize_output(a.outs[i], out_shape);
      return a.outs[i];
    }
    return device_empty(out_shape, self.options().dtype(t));
  };
  results.push_back(make_out(0, out_type));
  if (with_indices) results.push_back(make_out(1, at::kLong));
  if (with_indices && !a.outs.empty()) {
    // CPU checks the resized values and indices, seen with the reduced dim
    // kept, against the input.
    for (const at::Tensor& r : results) {
      check_out_overlap(a.keepdim || rank == 0 ? r : r.unsqueeze(dims[0]), {self});
    }
  }

  // Accumulate low-precision floats in f32, like the CPU kernels.
  at::ScalarType acc_type = out_type;
  if (name == "all" || name == "any") acc_type = at::kBool;
  if (name == "argmax" || name == "argmin" || with_indices) acc_type = in_type;
  // A max, min or their index picks one of its inputs, so it needs no wider
  // type (bfloat16 -> f32 is exact and monotonic: the same values and
  // indices), and reducing in the input's own type keeps bfloat16 amax/amin
  // away from a code path where the newer XLA CPU plugin
  // (lammps-jax-pjrt-cpu 0.11.2) never finishes compiling (convert to f32,
  // reduce, convert back).
  if (hash) acc_type = at::isFloatingType(in_type) ? at::kDouble : at::kLong;
  const ElementType acc = picks_element || hash
                              ? element_type_for(acc_type, op_name.c_str())
                              : opmath_element_type_for(acc_type, op_name.c_str());
  double correction = a.correction ? a.correction->toDouble() : 1.0;

  std::string key = "reduce:" + name + ":" + hlo::mlir_name(acc) + ":" + std::to_string(a.keepdim);
  for (int64_t d : dims) key += "," + std::to_string(d);
  if (name == "var" || name == "std") key += ":c" + std::to_string(correction);
  if (name == "linalg_vector_norm") key += ":ord" + std::to_string(a.ord);
  // all/any into a uint8 result read the input cast to uint8 (CPU's
  // reduction casts to the result type first: 0.6 is false there).
  const bool truth_of_u8 = (name == "all" || name == "any") && in_type != at::kByte &&
                           !at::isComplexType(in_type) && results[0].scalar_type() == at::kByte;
  if (truth_of_u8) key += ":u8";
  TensorProgram program(op_name.c_str(), key);
  program.input(self);
  for (const auto& r : results) program.output(r);
  const std::vector<int64_t> in_shape = self.sizes().vec();
  int64_t count = 1;
  for (int64_t d : dims) count *= in_shape[d];

  program.run([&](Builder& b, const std::vector<Value>& in) {
    Value x = b.convert(truth_of_u8 ? b.convert(in[0], ElementType::kU8) : in[0], acc);
    std::vector<Value> outs;
    if (name == "sum") {
      outs.push_back(reduce(b, x, dims, "add"));
    } else if (name == "prod") {
      outs.push_back(reduce(b, x, dims, "multiply"));
    } else if (name == "mean") {
      Value s = reduce(b, x, dims, "add");
      outs.push_back(b.binary("divide", s, b.splat(b.constant(acc, double(count)), s.type.dims)));
    } else if (name == "amax" || (name == "max" && all_dims)) {
      outs.push_back(reduce(b, x, dims, "maximum"));
    } else if (name == "amin" || (name == "min" && all_dims)) {
      outs.push_back(reduce(b, x, dims, "minimum"));
    } else if (name == "all") {
      outs.push_back(reduce(b, x, dims, "and"));
    } else if (name == "any") {
      outs.push_back(reduce(b, x, dims, "or"));
    } else if ((name == "argmax" || name == "argmin" || with_indices) && rank == 0) {
      // A 0-d input has a single element: its value, at index 0.
      if (with_indices) outs.push_back(x);
      outs.push_back(b.constant_int(ElementType::kS64, 0));
    } else if (name == "argmax" || name == "argmin") {
      const bool is_max = name == "argmax";
      if (all_dims) {
        Value flat = b.reshape(x, {self.numel()});
        Value idx = arg_extreme(b, flat, 0, is_max)[1];
        outs.push_back(a.keepdim ? b.reshape(idx, out_shape) : idx);
      } else {
        outs.push_back(arg_extreme(b, x, dims[0], is_max)[1]);
      }
    } else if (with_indices) {
      for (Value v : arg_extreme(b, x, dims[0], name == "max")) outs.push_back(v);
    } else if (name == "var" || name == "std") {
      Value sum = reduce(b, x, dims, "add");
      Value n = b.constant(acc, double(count));
      Value mu = b.binary("divide", sum, b.splat(n, sum.type.dims));
      Value mub = broadcast_to(b, b.reshape(mu, kept_shape(in_shape, dims)), in_shape);
      Value dev = b.binary("subtract", x, mub);
      Value sq = b.binary("multiply", dev, dev);
      Value ss = reduce(b, sq, dims, "add");
      const double denom = std::max(0.0, double(count) - correction);
      Value var = b.binary("divide", ss, b.splat(b.constant(acc, denom), ss.type.dims));
      outs.push_back(name == "std" ? b.unary("sqrt", var) : var);
    } else if (name == "linalg_vector_norm") {
      const double inf = std::numeric_limits<double>::infinity();
      Value ax = b.unary("abs", x);
      if (a.ord == inf) {
        outs.push_back(reduce(b, ax, dims, "maximum"));
      } else if (a.ord == -inf) {
        outs.push_back(reduce(b, ax, dims, "minimum"));
      } else if (a.ord == 0) {
        Value nz = b.convert(b.compare(hlo::Compare::kNE, ax, b.zeros(ax.type)), acc);
        outs.push_back(reduce(b, nz, dims, "add"));
      } else if (a.ord == 1) {
        outs.push_back(reduce(b, ax, dims, "add"));
      } else if (a.ord == 2) {
        outs.push_back(b.unary("sqrt", reduce(b, b.binary("multiply", ax, ax), dims, "add")));
      } else {
        Value p = b.splat(b.constant(acc, a.ord), ax.type.dims);
        Value s = reduce(b, b.binary("power", ax, p), dims, "add");
        outs.push_back(b.binary("power", s, b.splat(b.constant(acc, 1.0 / a.ord), s.type.dims)));
      }
    } else if (hash) {
      Value bits = b.bitcast_convert(x, {ElementType::kU64, x.type.dims});
      outs.push_back(reduce(b, bits, dims, "xor"));
    } else if (name == "logsumexp") {
      Value m = reduce(b, x, dims, "maximum");
      // A slice of all -inf (or +inf) must not turn into NaN via inf - inf.
      Value finite =
          b.compare(hlo::Compare::kLT, b.unary("abs", m),
                    b.splat(b.constant(acc, std::numeric_limits<double>::infinity()), m.type.dims));
      Value safe_m = b.select(finite, m, b.zeros(m.type));
      Value mb = broadcast_to(b, b.reshape(safe_m, kept_shape(in_shape, dims)), in_shape);
      Value s = reduce(b, b.unary("exponential", b.binary("subtract", x, mb)), dims, "add");
      outs.push_back(b.binary("add", b.unary("log", s), safe_m));
    } else {
      TORCH_CHECK(false, op_name, ": reduction not handled");
    }
    for (size_t i = 0; i < outs.size(); ++i) outs[i] = b.reshape(outs[i], out_shape);
    return outs;
  });

  torch::jit::drop(*stack, op.schema().arguments().size());
  if (with_indices) {
    torch::jit::push(*stack, results[0], results[1]);
  } else {
    torch::jit::push(*stack, results[0]);
  }
}

}  // namespace

void register_reductions(torch::Library& m) {
  for (const char* name : {"sum",
                           "sum.dim_IntList",
                           "sum.IntList_out",
                           "mean",
                           "mean.dim",
                           "mean.out",
                           "prod",
                           "prod.dim_int",
                           "prod.int_out",
                           "amax",
                           "amax.out",
                           "amin",
                           "amin.out",
                           "all",
                           "all.dim",
                           "all.dims",
                           "all.out",
                           "all.dims_out",
                           "all.all_out",
                           "any",
                           "any.dim",
                           "any.dims",
                           "any.out",
                           "any.dims_out",
                           "any.all_out",
                           "argmax",
                           "argmax.out",
                           "argmin",
                           "argmin.out",
                           "max",
                           "max.dim",
                           "max.dim_max",
                           "min",
                           "min.dim",
                           "min.dim_min",
                           "var.correction",
                           "var.correction_out",
                           "std.correction",
                           "std.correction_out",
                           "logsumexp",
                           "logsumexp.out",
                           "linalg_vector_norm",
                           "linalg_vector_norm.out",
                           "hash_tensor",
                           "hash_tensor.out"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&reduction_kernel>());
  }
}

}  // namespace torch_tpu::ops
