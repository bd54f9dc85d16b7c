#include "conformance_kit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <map>
#include <nnp/autocast.hpp>
#include <nnp/compile.hpp>
#include <nnp/detail/printable.hpp>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>
#include <nnp/quantization.hpp>
#include <ostream>
#include <random>
#include <sstream>

namespace nnp::conformance {
namespace {

using Inputs = std::vector<Tensor>;
using OpFn = std::function<Tensor(const Inputs&)>;

// Passed as atol_terms: the results must be bit-identical.
constexpr double kExact = 0;

const Dtype kFloats[] = {Dtype::f32, Dtype::f64, Dtype::f16, Dtype::bf16};
const Dtype kAll[] = {Dtype::f32, Dtype::f64,     Dtype::f16, Dtype::bf16, Dtype::i64, Dtype::i32, Dtype::u8,
                      Dtype::i8,  Dtype::boolean, Dtype::i16, Dtype::u16,  Dtype::u32, Dtype::u64};

// nnp_unary_op's names, in its order.
const char* const kUnaryNames[] = {"neg",  "abs",     "exp",  "log",  "sqrt", "rsqrt", "sin", "cos",
                                   "tanh", "sigmoid", "relu", "gelu", "silu", "sign",  "erf", "round"};
static_assert(sizeof kUnaryNames / sizeof kUnaryNames[0] == NNP_UNARY_COUNT, "a name for every unary op");
const char* unary_op_name(nnp_unary_op op) { return kUnaryNames[op]; }

std::string shape_text(const Shape& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "," : "") << shape[i];
  out << "]";
  return out.str();
}

class Kit {
 public:
  Kit(const std::string& backend, const Options& options)
      : reference_("reference"), target_(backend), options_(options) {
    report_.backend = backend;
    // Only what the backend computes, as it declares it (nnp_backend 1.16; a
    // backend that declares nothing has ABI 1.0's sets, or 1.7's when built
    // against 1.7 to 1.15), is tested; the rest must be refused cleanly.
    const nnp_backend_info info = target_.info();
    dtypes_ = info.struct_size >= NNP_BACKEND_INFO_SIZE_1_16 ? info.dtypes : NNP_DTYPES_1_0;
    unary_ops_ = info.struct_size >= NNP_BACKEND_INFO_SIZE_1_16 ? info.unary_ops : NNP_UNARY_OPS_1_0;
    std::string skipped;
    for (Dtype d : kAll)
      if (!declares(d)) skipped += (skipped.empty() ? "" : ", ") + std::string(dtype_name(d));
    for (nnp_unary_op op = 0; op < NNP_UNARY_COUNT; ++op)
      if (!declares_unary(op)) skipped += (skipped.empty() ? "" : ", ") + std::string(unary_op_name(op));
    if (!skipped.empty())
      report_.note = "the backend does not declare " + skipped +
                     ": their cases are skipped (placing those dtypes is checked to be refused)";
    // A kernel the backend lacks (nnp_backend 1.24) is not skipped: its ops
    // run on cpu with the operands copied, and are checked as any other.
    const uint32_t lacks = info.struct_size >= NNP_BACKEND_INFO_SIZE_1_24 ? info.missing_kernels : 0;
    if (lacks != 0)
      report_.note += (report_.note.empty() ? "" : "; ") + std::string("the backend lacks the ") +
                      kernel_slots_text(lacks) + " kernels: their cases ran on the cpu backend, operands copied";
  }

  bool declares(Dtype d) const { return (dtypes_ >> static_cast<int>(d) & 1u) != 0; }

  // A dtype the backend does not declare is refused where a tensor of it
  // would be placed there, naming the backend and the dtype.
  void check_undeclared_refused() {
    for (Dtype d : kAll) {
      if (declares(d)) continue;
      Case c;
      c.op = "placement";
      c.dtype = dtype_name(d);
      c.layout = "an undeclared dtype is refused";
      try {
        (void)ones({2}, Dtype::f32, reference_).to(d).to(target_);
        c.detail = "placed on the backend although it does not declare it";
      } catch (const Error& e) {
        const std::string what = e.what();
        c.passed = e.status() == NNP_DTYPE_MISMATCH && what.find(report_.backend) != std::string::npos &&
                   what.find(dtype_name(d)) != std::string::npos;
        c.detail = c.passed ? "refused: " + what : "refused, but not naming the backend and dtype: " + what;
      }
      (c.passed ? report_.passed : report_.failed)++;
      if (options_.on_case) options_.on_case(c);
      report_.cases.push_back(std::move(c));
    }
  }
  bool declares_unary(nnp_unary_op op) const { return (unary_ops_ >> op & 1u) != 0; }

  Report finish() { return std::move(report_); }

  // Random inputs live on the reference device; each case moves them to the
  // target and applies its views there, so both sides see the same layout.
  Tensor normal(const Shape& shape, Dtype dtype, double scale = 1.0) {
    Tensor x = randn(shape, Dtype::f64, reference_) * scale;
    return x.to(dtype);
  }
  Tensor positive(const Shape& shape, Dtype dtype) {
    return (rand(shape, Dtype::f64, reference_) * 2.0 + 0.1).to(dtype);
  }
  Tensor integers(const Shape& shape, int64_t low, int64_t high, Dtype dtype) {
    return randint(low, high, shape, Dtype::i64, reference_).to(dtype);
  }
  // Values for any dtype: normals for floats, small integers otherwise.
  Tensor values(const Shape& shape, Dtype dtype) {
    if (is_floating(dtype)) return normal(shape, dtype);
    if (dtype == Dtype::boolean) return integers(shape, 0, 2, Dtype::i64).to(Dtype::boolean);
    const bool is_unsigned = dtype == Dtype::u8 || dtype == Dtype::u16 || dtype == Dtype::u32 || dtype == Dtype::u64;
    return integers(shape, is_unsigned ? 0 : -20, 20, dtype);
  }

  void check(const std::string& op, Dtype dtype, const std::string& layout, const Inputs& inputs, const OpFn& fn,
             double atol_terms = 1) {
    if (!declares(dtype) || !declares_conversion(layout) || (op == "round" && !declares_unary(NNP_UNARY_ROUND)) ||
        ((op.find("quantize") != std::string::npos || op.find("integer") != std::string::npos) &&
         !(declares(Dtype::i8) && declares_unary(NNP_UNARY_ROUND))))
      return;
    if (options_.on_start) options_.on_start(op, dtype_name(dtype), layout);
    Case c;
    c.op = op;
    c.dtype = dtype_name(dtype);
    c.layout = layout;
    Tensor expected, actual;
    std::string expected_error, actual_error;
    try {
      expected = fn(inputs);
    } catch (const Error& e) {
      expected_error = e.what();
    }
    try {
      Inputs moved;
      for (const Tensor& t : inputs) moved.push_back(t.to(target_));
      actual = fn(moved);
    } catch (const Error& e) {
      actual_error = e.what();
    }
    if (!expected_error.empty() || !actual_error.empty()) {
      // Both must refuse, or neither.
      c.passed = !expected_error.empty() && !actual_error.empty();
      c.detail = c.passed ? "both refused: " + actual_error
                          : "reference: " + (expected_error.empty() ? "ok" : expected_error) +
                                "; backend: " + (actual_error.empty() ? "ok" : actual_error);
    } else {
      // Judged at the result's precision (integer inputs of exp promote to f32).
      Tolerance tol = tolerance_for(dtype_name(expected.dtype()));
      tol.atol *= atol_terms;
      if (atol_terms == kExact) tol = Tolerance{};
      compare(expected, actual, tol, c);
    }
    (c.passed ? report_.passed : report_.failed)++;
    if (options_.on_case) options_.on_case(c);
    report_.cases.push_back(std::move(c));
  }

  const Device& reference() const { return reference_; }
  const Device& target() const { return target_; }

 private:
  void compare(const Tensor& expected, const Tensor& actual, const Tolerance& tol, Case& c) {
    if (expected.shape() != actual.shape() || expected.dtype() != actual.dtype()) {
      c.detail = "result " + shape_text(actual.shape()) + " " + dtype_name(actual.dtype()) + ", expected " +
                 shape_text(expected.shape()) + " " + dtype_name(expected.dtype());
      return;
    }
    std::vector<double> e = expected.to(reference_, Dtype::f64).to_vector<double>();
    std::vector<double> a = actual.to(reference_, Dtype::f64).to_vector<double>();
    c.passed = true;
    for (size_t i = 0; i < e.size(); ++i) {
      double score;
      if (std::isnan(e[i]) || std::isnan(a[i]))
        score = std::isnan(e[i]) && std::isnan(a[i]) ? 0 : INFINITY;
      else if (std::isinf(e[i]) || std::isinf(a[i]))
        score = e[i] == a[i] ? 0 : INFINITY;
      else
        score = std::fabs(a[i] - e[i]) / (tol.atol + tol.rtol * std::fabs(e[i]) + 1e-300);
      if (score > c.worst) c.worst = score;
      if (score > 1 && c.passed) {
        c.passed = false;
        std::ostringstream detail;
        detail << std::setprecision(9) << "element " << i << ": got " << a[i] << ", expected " << e[i];
        c.detail = detail.str();
      }
    }
  }

  // A case converting "to X" needs X declared.
  bool declares_conversion(const std::string& layout) const {
    for (Dtype d : kAll)
      if (!declares(d) && layout.find(std::string("to ") + dtype_name(d)) != std::string::npos) return false;
    return true;
  }

  Device reference_;
  Device target_;
  Options options_;
  Report report_;
  uint32_t dtypes_ = 0;
  uint32_t unary_ops_ = 0;
};

// ---- the families ----

void check_narrow_rounding(Kit& kit);
void check_packed_int8_convolutions(Kit& kit);
void check_packed_conv_integers(Kit& kit);
void check_dynamic_quantize_linear(Kit& kit);
void check_elementwise_chains(Kit& kit);

// A module's output on in[0] with its parameters set to in[1], in[2], ...
// in order, on in[0]'s device and without gradients (graph mode's plans
// run there): how the layer-level cases call their layer or graph.
Tensor with_parameters(nn::ModuleHandle module, const Inputs& in) {
  module.to(in[0].device());
  NoGradGuard no_grad;
  std::vector<Tensor> params = module.parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(in[i + 1]);
  return module(in[0]);
}

void check_copy_and_fill(Kit& kit) {
  kit.check_undeclared_refused();
  for (Dtype from : kAll) {
    Tensor base = kit.values({33, 4}, from);
    for (Dtype to : kAll)
      kit.check("copy", from, std::string("to ") + dtype_name(to) + ", transposed [4,33]", {base},
                [to](const Inputs& in) { return in[0].t().to(to); });
    kit.check("copy", from, "contiguous of sliced [8,33] step 2", {kit.values({8, 66}, from)},
              [](const Inputs& in) { return in[0].slice(1, 0, 66, 2).contiguous(); });
    kit.check("copy", from, "clone of broadcast [5,1]->[5,6]", {kit.values({5, 1}, from)}, [](const Inputs& in) {
      return in[0].expand({5, 6}).clone();
    });
    kit.check("fill", from, "full [3,7] = 2.5", {kit.values({1}, from)}, [from](const Inputs& in) {
      return full({3, 7}, from == Dtype::boolean ? 1.0 : 2.5, from, in[0].device());
    });
  }
  check_narrow_rounding(kit);
}

// Conversions to f16 and bf16 where rounding decides: halfway cases (ties
// to even), values just under and at the overflow threshold, subnormals,
// signed zeros and NaN. Bit-identical: a truncating or ties-away conversion
// passes every tolerance test and fails here.
void check_narrow_rounding(Kit& kit) {
  const std::vector<double> f16_values = {1.0 + 1.0 / 2048,
                                          1.0 + 3.0 / 2048,
                                          2049,
                                          2051,
                                          -2049,
                                          65504,
                                          65519,
                                          65519.99,
                                          65520,
                                          1e5,
                                          -65520,
                                          1e-8,
                                          5.960464477539063e-8,
                                          2.9802322387695312e-8,
                                          8.940696716308594e-8,
                                          -0.0,
                                          6.1e-5,
                                          0.1,
                                          1.0 / 3};
  const std::vector<double> bf16_values = {1.0 + 1.0 / 256,
                                           1.0 + 3.0 / 256,
                                           257,
                                           259,
                                           -257,
                                           3.3895313892515355e38,
                                           3.39e38,
                                           3.4e38,
                                           1e38,
                                           -3.4e38,
                                           1e-40,
                                           9.2e-41,
                                           -0.0,
                                           0.1,
                                           1.0 / 3,
                                           1e30};
  for (const auto& [to, values] : {std::pair{Dtype::f16, f16_values}, std::pair{Dtype::bf16, bf16_values}})
    for (Dtype from : {Dtype::f32, Dtype::f64}) {
      std::vector<double> with_nan = values;
      with_nan.push_back(NAN);
      kit.check(
          "copy", from, std::string("to ") + dtype_name(to) + " at rounding boundaries and overflow",
          {from_vector(with_nan, kit.reference()).to(from)}, [to = to](const Inputs& in) { return in[0].to(to); },
          kExact);
    }
}

void check_unary(Kit& kit) {
  struct Op {
    const char* name;
    nnp_unary_op op;
    bool positive_domain;
    bool integers;
  };
  const Op ops[] = {{"neg", NNP_UNARY_NEG, false, true},    {"abs", NNP_UNARY_ABS, false, true},
                    {"exp", NNP_UNARY_EXP, false, false},   {"log", NNP_UNARY_LOG, true, false},
                    {"sqrt", NNP_UNARY_SQRT, true, false},  {"rsqrt", NNP_UNARY_RSQRT, true, false},
                    {"sin", NNP_UNARY_SIN, false, false},   {"cos", NNP_UNARY_COS, false, false},
                    {"tanh", NNP_UNARY_TANH, false, false}, {"sigmoid", NNP_UNARY_SIGMOID, false, false},
                    {"relu", NNP_UNARY_RELU, false, true},  {"gelu", NNP_UNARY_GELU, false, false},
                    {"silu", NNP_UNARY_SILU, false, false}, {"sign", NNP_UNARY_SIGN, false, true},
                    {"erf", NNP_UNARY_ERF, false, false},   {"round", NNP_UNARY_ROUND, false, false}};
  for (const Op& op : ops) {
    nnp_unary_op code = op.op;
    if (!kit.declares_unary(code)) continue;
    auto apply = [code](const Tensor& t) { return t.unary(code); };
    for (Dtype dtype : kFloats) {
      auto make = [&](const Shape& s) { return op.positive_domain ? kit.positive(s, dtype) : kit.normal(s, dtype); };
      kit.check(op.name, dtype, "contiguous [37]", {make({37})}, [apply](const Inputs& in) { return apply(in[0]); });
      kit.check(op.name, dtype, "transposed [4,33]", {make({33, 4})},
                [apply](const Inputs& in) { return apply(in[0].t()); });
      kit.check(op.name, dtype, "sliced [8,33] step 2", {make({8, 66})},
                [apply](const Inputs& in) { return apply(in[0].slice(1, 0, 66, 2)); });
      kit.check(op.name, dtype, "0-d", {make({})}, [apply](const Inputs& in) { return apply(in[0]); });
      kit.check(op.name, dtype, "empty [0,3]", {make({0, 3})}, [apply](const Inputs& in) { return apply(in[0]); });
      kit.check(op.name, dtype, "large [256,300] (threaded)", {make({256, 300})},
                [apply](const Inputs& in) { return apply(in[0]); });
    }
    for (Dtype dtype : {Dtype::i64, Dtype::i32, Dtype::u8, Dtype::i8})
      kit.check(op.name, dtype, op.integers ? "transposed [4,33]" : "transposed [4,33], promoted to f32",
                {kit.values({33, 4}, dtype)}, [apply](const Inputs& in) { return apply(in[0].t()); });
  }
  kit.check("neg", Dtype::boolean, "bool is refused", {kit.values({4}, Dtype::boolean)},
            [](const Inputs& in) { return in[0].neg(); });
  // Round's ties go to even (the vector paths' rounding mode), and its specials pass.
  if (kit.declares_unary(NNP_UNARY_ROUND))
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      const std::vector<double> values = {0.5,  1.5, 2.5,      -0.5,      -1.5,      -2.5,       254.5,     255.5,
                                          -0.0, NAN, INFINITY, -INFINITY, 8388609.0, -8388607.5, 0.49999997};
      std::vector<double> run;
      for (int copy = 0; copy < 3; ++copy) run.insert(run.end(), values.begin(), values.end());
      kit.check("round", dtype, "contiguous [45]: ties, NaN, infinities, -0 and 2^23 + 1",
                {from_vector<double>(run, kit.reference()).to(dtype)},
                [](const Inputs& in) { return in[0].unary(NNP_UNARY_ROUND); });
    }
}

void check_binary(Kit& kit) {
  struct Op {
    const char* name;
    nnp_binary_op op;
  };
  const Op ops[] = {{"add", NNP_BINARY_ADD},
                    {"sub", NNP_BINARY_SUB},
                    {"mul", NNP_BINARY_MUL},
                    {"div", NNP_BINARY_DIV},
                    {"pow", NNP_BINARY_POW},
                    {"maximum", NNP_BINARY_MAXIMUM},
                    {"minimum", NNP_BINARY_MINIMUM},
                    {"eq", NNP_BINARY_EQ},
                    {"ne", NNP_BINARY_NE},
                    {"lt", NNP_BINARY_LT},
                    {"le", NNP_BINARY_LE},
                    {"gt", NNP_BINARY_GT},
                    {"ge", NNP_BINARY_GE}};
  for (const Op& op : ops) {
    nnp_binary_op code = op.op;
    auto apply = [code](const Tensor& a, const Tensor& b) { return a.binary(code, b); };
    for (Dtype dtype : kAll) {
      const bool is_pow = code == NNP_BINARY_POW;
      auto make = [&](const Shape& s) {
        if (is_pow && is_floating(dtype)) return kit.positive(s, dtype);
        if (is_pow && dtype != Dtype::boolean) return kit.integers(s, 0, 4, dtype);
        return kit.values(s, dtype);
      };
      // Integer-valued floats make comparisons hit equality too.
      if (code >= NNP_BINARY_EQ && is_floating(dtype)) {
        kit.check(op.name, dtype, "contiguous [37] with ties",
                  {kit.integers({37}, -2, 3, dtype), kit.integers({37}, -2, 3, dtype)},
                  [apply](const Inputs& in) { return apply(in[0], in[1]); });
      }
      kit.check(op.name, dtype, "contiguous [37]", {make({37}), make({37})},
                [apply](const Inputs& in) { return apply(in[0], in[1]); });
      kit.check(op.name, dtype, "[4,33] with transposed [4,33]", {make({4, 33}), make({33, 4})},
                [apply](const Inputs& in) { return apply(in[0], in[1].t()); });
      kit.check(op.name, dtype, "broadcast [4,1,5] with [3,1]", {make({4, 1, 5}), make({3, 1})},
                [apply](const Inputs& in) { return apply(in[0], in[1]); });
      kit.check(op.name, dtype, "0-d with [5,6]", {make({}), make({5, 6})},
                [apply](const Inputs& in) { return apply(in[0], in[1]); });
      kit.check(op.name, dtype, "sliced [8,33] with 0-d", {make({8, 66}), make({})},
                [apply](const Inputs& in) { return apply(in[0].slice(1, 1, 66, 2), in[1]); });
      kit.check(op.name, dtype, "empty [0,3] with [3]", {make({0, 3}), make({3})},
                [apply](const Inputs& in) { return apply(in[0], in[1]); });
      if (dtype == Dtype::f32 || dtype == Dtype::i64)
        kit.check(op.name, dtype, "large [256,300] with row [300] (threaded)", {make({256, 300}), make({300})},
                  [apply](const Inputs& in) { return apply(in[0], in[1]); });
    }
  }
  kit.check("add", Dtype::f32, "shapes [2,3] and [4] are refused",
            {kit.normal({2, 3}, Dtype::f32), kit.normal({4}, Dtype::f32)},
            [](const Inputs& in) { return in[0] + in[1]; });
  kit.check("pow", Dtype::i64, "negative integer exponent is refused",
            {kit.integers({4}, 1, 3, Dtype::i64), kit.integers({4}, -3, -1, Dtype::i64)},
            [](const Inputs& in) { return in[0].pow(in[1]); });
  check_elementwise_chains(kit);
}

// ABI 1.19's optional elementwise_chain: graph mode fuses a chain of
// elementwise nodes (an nn.GraphModule under no_grad, whose plan asks the
// kernel; the reference backend runs the nodes). The program's inputs are
// x and its tensors t0, t1, ... (broadcast against x where shaped so).
void check_elementwise_chains(Kit& kit) {
  struct Chain {
    const char* layout;
    std::vector<Shape> shapes;  // x, then the tensors
    const char* nodes;          // the chain, ending in "y"
    bool transposed_x;
    bool specials;                    // NaN, infinities, zeros and ties in x
    std::vector<nnp_unary_op> unary;  // the unary ops it runs: skipped where one is not declared
  };
  const Chain chains[] = {
      {"[64,64], 20 ops with [64] and [1] operands (W2c's)",
       {{64, 64}, {64}, {1}},
       R"({"op": "Mul", "inputs": ["x", "t1"], "outputs": ["a"]}, {"op": "Add", "inputs": ["a", "t0"], "outputs": ["b"]},
          {"op": "Relu", "inputs": ["b"], "outputs": ["c"]}, {"op": "Sub", "inputs": ["c", "x"], "outputs": ["d"]},
          {"op": "Tanh", "inputs": ["d"], "outputs": ["e"]}, {"op": "Mul", "inputs": ["e", "e"], "outputs": ["f"]},
          {"op": "Add", "inputs": ["f", "t1"], "outputs": ["g"]}, {"op": "Sqrt", "inputs": ["g"], "outputs": ["h"]},
          {"op": "Div", "inputs": ["x", "h"], "outputs": ["i"]}, {"op": "Sigmoid", "inputs": ["i"], "outputs": ["j"]},
          {"op": "Neg", "inputs": ["j"], "outputs": ["k"]}, {"op": "Exp", "inputs": ["k"], "outputs": ["l"]},
          {"op": "Add", "inputs": ["l", "t0"], "outputs": ["m"]}, {"op": "Abs", "inputs": ["m"], "outputs": ["n"]},
          {"op": "Log", "inputs": ["n"], "outputs": ["o"]}, {"op": "Sin", "inputs": ["o"], "outputs": ["p"]},
          {"op": "Cos", "inputs": ["p"], "outputs": ["q"]}, {"op": "Erf", "inputs": ["q"], "outputs": ["r"]},
          {"op": "Mul", "inputs": ["r", "t0"], "outputs": ["s"]}, {"op": "Sub", "inputs": ["s", "x"], "outputs": ["y"]})",
       false,
       false,
       {NNP_UNARY_RELU, NNP_UNARY_TANH, NNP_UNARY_SQRT, NNP_UNARY_SIGMOID, NNP_UNARY_NEG, NNP_UNARY_EXP, NNP_UNARY_ABS,
        NNP_UNARY_LOG, NNP_UNARY_SIN, NNP_UNARY_COS, NNP_UNARY_ERF}},
      {"[3,1,5] with [4,1] and 0-d, a transposed x",
       {{5, 1, 3}, {4, 1}, {}},
       R"({"op": "Add", "inputs": ["x", "t0"], "outputs": ["a"]}, {"op": "Mul", "inputs": ["t1", "a"], "outputs": ["b"]},
          {"op": "Exp", "inputs": ["b"], "outputs": ["c"]}, {"op": "Div", "inputs": ["c", "t0"], "outputs": ["y"]})",
       true,
       false,
       {NNP_UNARY_EXP}},
      {"[300,70] (threaded) with NaN, infinities, signed zeros and ties",
       {{300, 70}},
       R"({"op": "Round", "inputs": ["x"], "outputs": ["a"]}, {"op": "Sign", "inputs": ["x"], "outputs": ["s"]},
          {"op": "Mul", "inputs": ["a", "s"], "outputs": ["b"]}, {"op": "Relu", "inputs": ["b"], "outputs": ["c"]},
          {"op": "Add", "inputs": ["c", "x"], "outputs": ["y"]})",
       false,
       true,
       {NNP_UNARY_ROUND, NNP_UNARY_SIGN, NNP_UNARY_RELU}},
      {"[8,33] Clip (ReLU6: a Max and a Min step), Max and Min with NaN and infinities",
       {{8, 33}, {}, {}, {33}},
       R"({"op": "Clip", "inputs": ["x", "t0", "t1"], "outputs": ["a"]}, {"op": "Max", "inputs": ["a", "t2"], "outputs": ["b"]},
          {"op": "Min", "inputs": ["t2", "b"], "outputs": ["c"]}, {"op": "Clip", "inputs": ["c", "t1"], "outputs": ["y"]})",
       false,
       true,
       {}},
  };
  for (const Chain& c : chains) {
    if (!std::all_of(c.unary.begin(), c.unary.end(), [&](nnp_unary_op op) { return kit.declares_unary(op); })) continue;
    Inputs inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i) inputs.push_back(kit.normal(c.shapes[i], Dtype::f32, 2.0));
    if (c.specials) {
      Tensor flat = inputs[0].reshape({-1});
      const double values[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 2.5, -0.5, 1.5, -3.5};
      for (size_t i = 0; i < std::size(values); ++i) flat.index_put_({static_cast<int64_t>(i * 31)}, values[i]);
    }
    std::string tensors;
    for (size_t i = 1; i < c.shapes.size(); ++i) {
      std::string dims;
      for (int64_t d : c.shapes[i]) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      tensors += std::string(tensors.empty() ? "" : ", ") + R"({"key": "t)" + std::to_string(i - 1) +
                 R"(", "value": "t)" + std::to_string(i - 1) + R"(", "shape": [)" + dims + R"(], "dtype": "f32"})";
    }
    const std::string program = R"({"inputs": ["x"], "outputs": ["y"], "layers": [], "tensors": [)" + tensors +
                                R"(], "nodes": [)" + c.nodes + "]}";
    const bool transposed = c.transposed_x;
    kit.check("elementwise_chain", Dtype::f32, c.layout, inputs, [program, transposed](const Inputs& in) {
      nn::ModuleHandle net = nn::GraphModule(program);
      net.to(in[0].device());
      NoGradGuard no_grad;
      std::vector<Tensor> buffers = net.buffers();
      for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(in[i + 1]);
      return net(transposed ? in[0].transpose(0, 2) : in[0]);
    });
  }
}

void check_where(Kit& kit) {
  for (Dtype dtype : kAll) {
    kit.check("where", dtype, "cond [4,1,5], a [3,5], b 0-d",
              {kit.values({4, 1, 5}, Dtype::boolean), kit.values({3, 5}, dtype), kit.values({}, dtype)},
              [](const Inputs& in) { return where(in[0], in[1], in[2]); });
    kit.check("where", dtype, "transposed a and b [6,9]",
              {kit.values({6, 9}, Dtype::boolean), kit.values({9, 6}, dtype), kit.values({9, 6}, dtype)},
              [](const Inputs& in) { return where(in[0], in[1].t(), in[2].t()); });
  }
}

void check_reduce(Kit& kit) {
  struct Op {
    const char* name;
    nnp_reduce_op op;
  };
  const Op ops[] = {{"sum", NNP_REDUCE_SUM},  {"mean", NNP_REDUCE_MEAN},     {"amax", NNP_REDUCE_MAX},
                    {"amin", NNP_REDUCE_MIN}, {"argmax", NNP_REDUCE_ARGMAX}, {"argmin", NNP_REDUCE_ARGMIN},
                    {"var", NNP_REDUCE_VAR}};
  const std::vector<std::vector<int32_t>> dim_sets = {{}, {0}, {1}, {2}, {0, 2}, {-1}};
  for (const Op& op : ops) {
    nnp_reduce_op code = op.op;
    const bool is_arg = code == NNP_REDUCE_ARGMAX || code == NNP_REDUCE_ARGMIN;
    for (Dtype dtype : kAll) {
      if (dtype == Dtype::boolean && code != NNP_REDUCE_SUM) continue;
      for (const auto& dims : dim_sets) {
        if (is_arg && dims.size() > 1) continue;
        for (bool keepdim : {false, true}) {
          std::string layout = "[6,7,8] dims {";
          for (size_t i = 0; i < dims.size(); ++i) layout += (i ? "," : "") + std::to_string(dims[i]);
          layout += keepdim ? "} keepdim" : "}";
          kit.check(
              op.name, dtype, layout, {kit.values({6, 7, 8}, dtype)},
              [=](const Inputs& in) { return in[0].reduce(code, dims, keepdim, 1.0); }, 8 * 7 * 6);
        }
      }
      kit.check(
          op.name, dtype, "permuted [8,6,7] dims {1,2}", {kit.values({6, 7, 8}, dtype)},
          [=](const Inputs& in) {
            return in[0].permute({2, 0, 1}).reduce(code, is_arg ? std::vector<int32_t>{1} : std::vector<int32_t>{1, 2},
                                                   false, 0.0);
          },
          42);
      kit.check(op.name, dtype, "0-d", {kit.values({}, dtype)},
                [=](const Inputs& in) { return in[0].reduce(code, {}, false, 1.0); });
    }
    for (const std::vector<int32_t>& dims : std::vector<std::vector<int32_t>>{{1}, {0}, {}}) {
      if (is_arg && dims.empty()) continue;
      std::string layout = dims.empty() ? "large [300,400] all dims" : "large [300,400] dim " + std::to_string(dims[0]);
      kit.check(
          op.name, Dtype::f32, layout, {kit.normal({300, 400}, Dtype::f32)},
          [=](const Inputs& in) { return in[0].reduce(code, dims, false, 1.0); }, 400 * 300);
    }
    kit.check(op.name, Dtype::f32, "empty [0,4] over dim 0", {kit.normal({0, 4}, Dtype::f32)},
              [=](const Inputs& in) { return in[0].reduce(code, {0}, false, 1.0); });
  }
}

void check_matmul(Kit& kit) {
  struct Shapes {
    const char* layout;
    Shape a, b;
    bool transpose_a, transpose_b;
  };
  const Shapes cases[] = {
      {"[5,7] @ [7,3]", {5, 7}, {7, 3}, false, false},
      {"[5,7]^T-stored @ [7,3]", {7, 5}, {7, 3}, true, false},
      {"[5,7] @ [7,3]^T-stored", {5, 7}, {3, 7}, false, true},
      {"batched [2,3,4,5] @ [5,6]", {2, 3, 4, 5}, {5, 6}, false, false},
      {"broadcast batch [2,1,4,5] @ [3,5,2]", {2, 1, 4, 5}, {3, 5, 2}, false, false},
      {"vector [7] @ [7,3]", {7}, {7, 3}, false, false},
      {"one row [1,7] @ [7,3]^T-stored", {1, 7}, {3, 7}, false, true},
      {"one row [1,7]^T-stored @ [7,3]", {7, 1}, {7, 3}, true, false},
      {"one row [1,784] @ [784,512]^T-stored (a Linear at batch 1)", {1, 784}, {512, 784}, false, true},
      {"[5,7] @ vector [7]", {5, 7}, {7}, false, false},
      {"dot [7] @ [7]", {7}, {7}, false, false},
      {"inner size 0: [3,0] @ [0,4]", {3, 0}, {0, 4}, false, false},
      {"large [128,256] @ [256,64]", {128, 256}, {256, 64}, false, false},
      // Large enough for a backend to split (the cpu backend's weight-gradient
      // shape splits by rows, and by columns when it has few rows).
      {"large [96,128]^T-stored @ [128,80]", {128, 96}, {128, 80}, true, false},
      {"large [10,128]^T-stored @ [128,512]", {128, 10}, {128, 512}, true, false},
      // Edges of a packed GEMM's blocks (the cpu backend's own kernels):
      // rows and columns short of a register block, k over one and two
      // cache blocks and not a multiple of a vector.
      {"large [100,600] @ [600,45]^T-stored", {100, 600}, {45, 600}, false, true},
      {"large [70,300]^T-stored @ [300,90]", {300, 70}, {300, 90}, true, false},
      {"large [77,33] @ [33,530]", {77, 33}, {33, 530}, false, false},
      {"large [60,1100]^T-stored @ [1100,40]^T-stored", {1100, 60}, {40, 1100}, true, true},
  };
  for (Dtype dtype : kFloats)
    for (const Shapes& s : cases) {
      bool ta = s.transpose_a, tb = s.transpose_b;
      int64_t k = s.b.size() == 1 ? s.b[0] : s.b[s.b.size() - 2];
      if (tb) k = s.b[1];
      kit.check(
          "matmul", dtype, s.layout, {kit.normal(s.a, dtype), kit.normal(s.b, dtype)},
          [ta, tb](const Inputs& in) { return (ta ? in[0].t() : in[0]).matmul(tb ? in[1].t() : in[1]); },
          static_cast<double>(std::max<int64_t>(k, 1)));
    }
  // ABI 1.18's optional gemm_epilogue: graph mode fuses a MatMul with the
  // bias Add and the ReLU after it (an nn.GraphModule under no_grad, whose
  // plan asks the kernel; the reference backend composes). The weight is
  // the program's tensor, transposed by a node the plan folds (a strided
  // right operand) where the case says so.
  struct Epilogue {
    const char* layout;
    Shape x;
    int64_t n;
    bool bias, relu, transposed;
  };
  const Epilogue epilogues[] = {
      {"[64,128] @ [128,96] + bias, relu (W7's feed-forward shape)", {64, 128}, 96, true, true, false},
      {"[2,5,7] @ [7,3] + bias", {2, 5, 7}, 3, true, false, false},
      {"[33,40] @ [40,17]^T-stored + bias, relu", {33, 40}, 17, true, true, true},
      {"[9,16] @ [16,300], relu, no bias (a split product)", {9, 16}, 300, false, true, false},
  };
  for (const Epilogue& e : epilogues) {
    const int64_t k = e.x.back();
    const Shape w_shape = e.transposed ? Shape{e.n, k} : Shape{k, e.n};
    Inputs inputs{kit.normal(e.x, Dtype::f32), kit.normal(w_shape, Dtype::f32)};
    if (e.bias) inputs.push_back(kit.normal({e.n}, Dtype::f32));
    const auto dims = [](const Shape& s) {
      std::string text;
      for (int64_t d : s) text += (text.empty() ? "" : ", ") + std::to_string(d);
      return "[" + text + "]";
    };
    std::string nodes = e.transposed
                            ? R"({"op": "Transpose", "inputs": ["w"], "outputs": ["wk"], "attrs": {"perm": [1, 0]}},
        {"op": "MatMul", "inputs": ["x", "wk"], "outputs": ["p"]})"
                            : R"({"op": "MatMul", "inputs": ["x", "w"], "outputs": ["p"]})";
    std::string tensors = R"({"key": "w", "value": "w", "shape": )" + dims(w_shape) + R"(, "dtype": "f32"})";
    std::string last = "p";
    if (e.bias) {
      tensors += R"(, {"key": "b", "value": "b", "shape": [)" + std::to_string(e.n) + R"(], "dtype": "f32"})";
      nodes += R"(, {"op": "Add", "inputs": ["p", "b"], "outputs": ["q"]})";
      last = "q";
    }
    if (e.relu) {
      nodes += R"(, {"op": "Relu", "inputs": [")" + last + R"("], "outputs": ["r"]})";
      last = "r";
    }
    const std::string program = R"({"inputs": ["x"], "outputs": [")" + last + R"("], "layers": [], "tensors": [)" +
                                tensors + R"(], "nodes": [)" + nodes + "]}";
    kit.check(
        "gemm_epilogue", Dtype::f32, e.layout, inputs,
        [program](const Inputs& in) {
          nn::ModuleHandle net = nn::GraphModule(program);
          net.to(in[0].device());
          NoGradGuard no_grad;
          std::vector<Tensor> buffers = net.buffers();
          for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(in[i + 1]);
          return net(in[0]);
        },
        static_cast<double>(k));
  }
  // ABI 1.20's optional attention: graph mode fuses MatMul(scaled Q, K^T),
  // the mask's Add, Softmax and MatMul with V (an nn.GraphModule under
  // no_grad; the reference backend runs the nodes). K comes transposed by a
  // Transpose node, Q scaled by a Mul or the scores divided by a Div.
  struct Attention {
    const char* layout;
    Shape q, k, v;  // q [..., L, E], k [..., S, E], v [..., S, Ev]
    bool mask, divide, transposed_q, nan_row;
  };
  const Attention attentions[] = {
      {"[16,64,32] heads of W7, Q scaled", {16, 64, 32}, {16, 64, 32}, {16, 64, 32}, false, false, false, false},
      {"[3,5,19] against 37 keys, Ev 33, mask [5,37], scores divided",
       {3, 5, 19},
       {3, 37, 19},
       {3, 37, 33},
       true,
       true,
       false,
       false},
      {"[2,3,1,8] one query (batch 1's), rank 4, transposed Q",
       {2, 3, 1, 8},
       {2, 3, 70, 8},
       {2, 3, 70, 16},
       false,
       false,
       true,
       false},
      {"[2,6,16] with a NaN in a query row", {2, 6, 16}, {2, 9, 16}, {2, 9, 16}, true, false, false, true},
      // (unmasked, whole blocks of 64 keys: the scores' maxima come with the products)
      {"[2,64,32] unmasked with a NaN in a query row",
       {2, 64, 32},
       {2, 64, 32},
       {2, 64, 32},
       false,
       false,
       false,
       true},
      {"[4,13,24] against 70 keys, Ev 40, mask [13,70]: query rows in a group of eight and a part",
       {4, 13, 24},
       {4, 70, 24},
       {4, 70, 40},
       true,
       false,
       false,
       false},
  };
  for (const Attention& a : attentions) {
    const int32_t rank = static_cast<int32_t>(a.q.size());
    Inputs inputs{kit.normal(a.transposed_q ? Shape{a.q[0], a.q[1], a.q[3], a.q[2]} : a.q, Dtype::f32),
                  kit.normal(a.k, Dtype::f32), kit.normal(a.v, Dtype::f32)};
    if (a.mask) inputs.push_back(kit.normal({a.q[rank - 2], a.k[rank - 2]}, Dtype::f32));
    if (a.nan_row) inputs[0].index_put_({1, 2, 3}, NAN);
    std::string perm;
    for (int32_t d = 0; d < rank; ++d)
      perm += (d ? ", " : "") + std::to_string(d < rank - 2 ? d : (d == rank - 2 ? rank - 1 : rank - 2));
    const std::string scale = a.divide ? "4.5" : "0.17677669";
    std::string nodes =
        R"({"op": "Transpose", "inputs": ["k"], "outputs": ["kt"], "attrs": {"perm": [)" + perm + "]}}, ";
    nodes += a.divide ? R"({"op": "MatMul", "inputs": ["q", "kt"], "outputs": ["p"]},
        {"op": "Div", "inputs": ["p", "c"], "outputs": ["s"]})"
                      : R"({"op": "Mul", "inputs": ["q", "c"], "outputs": ["qs"]},
        {"op": "MatMul", "inputs": ["qs", "kt"], "outputs": ["s"]})";
    std::string scores = "s";
    if (a.mask) {
      nodes += R"(, {"op": "Add", "inputs": ["s", "m"], "outputs": ["sm"]})";
      scores = "sm";
    }
    nodes += R"(, {"op": "Softmax", "inputs": [")" + scores + R"("], "outputs": ["w"], "attrs": {"axis": -1}},
        {"op": "MatMul", "inputs": ["w", "v"], "outputs": ["y"]})";
    const std::string program = std::string(R"({"inputs": ["q", "k", "v")") + (a.mask ? R"(, "m")" : "") +
                                R"(], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "c", "value": "c", "shape": [], "dtype": "f32", "data": [)" +
                                scale + R"(]}], "nodes": [)" + nodes + "]}";
    const bool transposed = a.transposed_q;
    kit.check(
        "attention", Dtype::f32, a.layout, inputs,
        [program, transposed](const Inputs& in) {
          nn::ModuleHandle net = nn::GraphModule(program);
          net.to(in[0].device());
          NoGradGuard no_grad;
          std::vector<Tensor> args(in.begin(), in.end());
          if (transposed) args[0] = args[0].transpose(-1, -2);
          return net.call(args);
        },
        static_cast<double>(a.k.back()));
  }
  // ABI 1.21's optional gemm_pack / gemm_packed: graph mode packs a
  // MatMul's constant weight once per plan (here the GraphModule's
  // parameters, one stored [N, K] behind a Transpose the plan folds) and
  // runs the product with its bias and ReLU from it; the reference backend,
  // which packs nothing, runs the nodes. Shapes a backend declines run the
  // nodes too, and must still agree.
  struct Packed {
    const char* layout;
    int64_t m, k, n;
    bool transposed, relu;
  };
  const Packed packed_products[] = {
      {"[64,128] @ [128,384] + bias (W7's projection at batch 1)", 64, 128, 384, false, false},
      {"[5,40] @ [40,33] + bias, relu (fewer rows than a block; 33 columns)", 5, 40, 33, false, true},
      {"[300,520] @ transpose([70,520]) + bias, relu (two blocks of depth)", 300, 520, 70, true, true},
      {"[2,3,16] @ [16,48] + bias (leading axes as rows)", 6, 16, 48, false, false},
  };
  for (const Packed& c : packed_products) {
    const std::string w_shape = c.transposed ? "[" + std::to_string(c.n) + ", " + std::to_string(c.k) + "]"
                                             : "[" + std::to_string(c.k) + ", " + std::to_string(c.n) + "]";
    std::string nodes = c.transposed
                            ? R"({"op": "Transpose", "inputs": ["w"], "outputs": ["wt"], "attrs": {"perm": [1, 0]}},
        {"op": "MatMul", "inputs": ["x", "wt"], "outputs": ["p"]})"
                            : R"({"op": "MatMul", "inputs": ["x", "w"], "outputs": ["p"]})";
    nodes += R"(, {"op": "Add", "inputs": ["p", "b"], "outputs": ["q"]})";
    nodes += c.relu ? R"(, {"op": "Relu", "inputs": ["q"], "outputs": ["y"]})"
                    : R"(, {"op": "Identity", "inputs": ["q"], "outputs": ["y"]})";
    const std::string program = R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "w", "value": "w", "shape": )" +
                                w_shape + R"(, "dtype": "f32", "parameter": true},
                    {"key": "b", "value": "b", "shape": [)" +
                                std::to_string(c.n) + R"(], "dtype": "f32", "parameter": true}],
        "nodes": [)" + nodes + "]}";
    const Shape x_shape = c.m == 6 ? Shape{2, 3, c.k} : Shape{c.m, c.k};
    Inputs inputs{kit.normal(x_shape, Dtype::f32),
                  kit.normal(c.transposed ? Shape{c.n, c.k} : Shape{c.k, c.n}, Dtype::f32),
                  kit.normal({c.n}, Dtype::f32)};
    kit.check(
        "matmul packed", Dtype::f32, c.layout, inputs,
        [program](const Inputs& in) { return with_parameters(nn::GraphModule(program), in); },
        static_cast<double>(c.k));
  }
  kit.check("matmul", Dtype::f32, "[4,3] @ [4,3] is refused",
            {kit.normal({4, 3}, Dtype::f32), kit.normal({4, 3}, Dtype::f32)},
            [](const Inputs& in) { return in[0].matmul(in[1]); });
  kit.check("matmul", Dtype::i64, "integers are refused",
            {kit.integers({2, 2}, 0, 3, Dtype::i64), kit.integers({2, 2}, 0, 3, Dtype::i64)},
            [](const Inputs& in) { return in[0].matmul(in[1]); });
}

void check_softmax(Kit& kit) {
  for (bool log : {false, true}) {
    const char* name = log ? "log_softmax" : "softmax";
    auto apply = [log](const Tensor& t, int32_t dim) { return log ? t.log_softmax(dim) : t.softmax(dim); };
    for (Dtype dtype : kFloats) {
      kit.check(name, dtype, "[4,33] dim -1", {kit.normal({4, 33}, dtype, 3)},
                [apply](const Inputs& in) { return apply(in[0], -1); });
      kit.check(name, dtype, "[4,33] dim 0", {kit.normal({4, 33}, dtype, 3)},
                [apply](const Inputs& in) { return apply(in[0], 0); });
      kit.check(name, dtype, "[3,4,5] dim 1", {kit.normal({3, 4, 5}, dtype, 3)},
                [apply](const Inputs& in) { return apply(in[0], 1); });
      kit.check(name, dtype, "transposed [6,9] dim 1", {kit.normal({9, 6}, dtype, 3)},
                [apply](const Inputs& in) { return apply(in[0].t(), 1); });
      kit.check(name, dtype, "0-d", {kit.normal({}, dtype)}, [apply](const Inputs& in) { return apply(in[0], 0); });
    }
    kit.check(name, Dtype::f32, "large [256,500] dim 1 (threaded)", {kit.normal({256, 500}, Dtype::f32, 3)},
              [apply](const Inputs& in) { return apply(in[0], 1); });
    // Logits in the thousands: exp overflows unless the row's max is taken
    // off first, as every softmax must.
    for (Dtype dtype : {Dtype::f32, Dtype::f64, Dtype::f16, Dtype::bf16})
      kit.check(name, dtype, "large logits (|x| ~ 1000) [4,33] dim 1", {kit.normal({4, 33}, dtype, 1000)},
                [apply](const Inputs& in) { return apply(in[0], 1); });
    kit.check(name, Dtype::f32, "a row of equal logits 1e4 [3,8] dim 1",
              {full({3, 8}, 1e4, Dtype::f32, kit.reference())}, [apply](const Inputs& in) { return apply(in[0], 1); });
  }
}

void check_indexing(Kit& kit) {
  for (Dtype dtype : kAll) {
    kit.check("cat", dtype, "[2,3] + [4,3] dim 0", {kit.values({2, 3}, dtype), kit.values({4, 3}, dtype)},
              [](const Inputs& in) {
                return cat({in[0], in[1]}, 0);
              });
    kit.check("cat", dtype, "transposed [3,2] + [3,5] dim 1", {kit.values({2, 3}, dtype), kit.values({3, 5}, dtype)},
              [](const Inputs& in) {
                return cat({in[0].t(), in[1]}, 1);
              });
    kit.check("index_select", dtype, "[10,6] dim 0", {kit.values({10, 6}, dtype), kit.integers({7}, 0, 10, Dtype::i64)},
              [](const Inputs& in) { return in[0].index_select(0, in[1]); });
    kit.check("index_select", dtype, "transposed [6,10] dim 1, i32 index",
              {kit.values({10, 6}, dtype), kit.integers({7}, 0, 10, Dtype::i32)},
              [](const Inputs& in) { return in[0].t().index_select(1, in[1]); });
    kit.check("gather", dtype, "[5,7] dim 1 index [5,4]",
              {kit.values({5, 7}, dtype), kit.integers({5, 4}, 0, 7, Dtype::i64)},
              [](const Inputs& in) { return in[0].gather(1, in[1]); });
    kit.check("gather", dtype, "transposed [7,5] dim 0 index [3,5]",
              {kit.values({5, 7}, dtype), kit.integers({3, 5}, 0, 7, Dtype::i64)},
              [](const Inputs& in) { return in[0].t().gather(0, in[1]); });
    if (dtype == Dtype::boolean) continue;
    kit.check(
        "scatter_add", dtype, "[5,7] dim 1 index [5,4]",
        {kit.values({5, 7}, dtype), kit.integers({5, 4}, 0, 7, Dtype::i64), kit.values({5, 6}, dtype)},
        [](const Inputs& in) { return in[0].scatter_add(1, in[1], in[2]); }, 4);
    kit.check(
        "scatter_add", dtype, "[6,3] dim 0 index [9,3] (repeats)",
        {kit.values({6, 3}, dtype), kit.integers({9, 3}, 0, 6, Dtype::i64), kit.values({9, 3}, dtype)},
        [](const Inputs& in) { return in[0].scatter_add(0, in[1], in[2]); }, 9);
  }
  kit.check("index_select", Dtype::f32, "index 10 out of range is refused",
            {kit.normal({10, 2}, Dtype::f32), kit.integers({3}, 10, 11, Dtype::i64)},
            [](const Inputs& in) { return in[0].index_select(0, in[1]); });
  kit.check("gather", Dtype::f32, "index -1 is refused",
            {kit.normal({4, 2}, Dtype::f32), kit.integers({4, 2}, -1, 0, Dtype::i64)},
            [](const Inputs& in) { return in[0].gather(0, in[1]); });
}

void check_random(Kit& kit) {
  // Same seed, same numbers, bit for bit (tolerance zero).
  for (Dtype dtype : kFloats) {
    for (const char* kind : {"rand", "randn"}) {
      std::string name = kind;
      kit.check(
          name, dtype, "[1000] seed 7, bit-identical", {kit.values({1}, dtype)},
          [name, dtype](const Inputs& in) {
            manual_seed(7);
            return name == "rand" ? rand({1000}, dtype, in[0].device()) : randn({1000}, dtype, in[0].device());
          },
          kExact);
    }
  }
  // A draw after another starts where the first ended (its offset): a kernel
  // that ignores its offset repeats the first draw's numbers.
  for (Dtype dtype : kFloats)
    for (const char* kind : {"rand", "randn"}) {
      std::string name = kind;
      kit.check(
          name, dtype, "[1000] after a draw of 13, bit-identical", {kit.values({1}, dtype)},
          [name, dtype](const Inputs& in) {
            manual_seed(7);
            (void)rand({13}, dtype, in[0].device());
            return name == "rand" ? rand({1000}, dtype, in[0].device()) : randn({1000}, dtype, in[0].device());
          },
          kExact);
    }
  // Counters that cross 2^32 (the counter's high word carries) under a seed
  // with both words set: a vectorised Philox must carry as the scalar does.
  for (Dtype dtype : kFloats)
    kit.check(
        "rand", dtype, "[1000] from offset 2^32 - 500, seed 0x123456789abcdef, bit-identical", {kit.values({1}, dtype)},
        [dtype](const Inputs& in) {
          check(api().device_set_rng_state(in[0].device().raw(), 0x123456789abcdefULL, (uint64_t{1} << 32) - 500));
          return rand({1000}, dtype, in[0].device());
        },
        kExact);
  kit.check(
      "randint", Dtype::i64, "[1000] after a draw of 13, bit-identical", {kit.values({1}, Dtype::i64)},
      [](const Inputs& in) {
        manual_seed(9);
        (void)randint(0, 5, {13}, Dtype::i64, in[0].device());
        return randint(3, 250, {1000}, Dtype::i64, in[0].device());
      },
      kExact);
  for (Dtype dtype : {Dtype::i64, Dtype::i32, Dtype::u8, Dtype::f32})
    kit.check(
        "randint", dtype, "[1000] in [3,250) seed 9, bit-identical", {kit.values({1}, dtype)},
        [dtype](const Inputs& in) {
          manual_seed(9);
          return randint(3, 250, {1000}, dtype, in[0].device());
        },
        kExact);
}

// The semantics sdk/README.md states, each on the values that decide it:
// NaN, signed zeros and infinities through relu, sign, abs, maximum and the
// max/argmax reductions (the first NaN wins), var of nothing, float to bool
// and to integers, copies between overlapping views, and the alignment of
// what alloc returns.
void check_semantics(Kit& kit) {
  const std::vector<double> special = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1.5, -2.5, 1e-300, 3e38};
  for (Dtype dtype : kFloats) {
    const Tensor x = from_vector(special, kit.reference()).to(dtype);
    for (const auto& [name, op] : {std::pair{"relu", NNP_UNARY_RELU}, std::pair{"sign", NNP_UNARY_SIGN},
                                   std::pair{"abs", NNP_UNARY_ABS}, std::pair{"neg", NNP_UNARY_NEG}})
      kit.check(
          name, dtype, "NaN, signed zeros, infinities", {x}, [op = op](const Inputs& in) { return in[0].unary(op); },
          kExact);
    const Tensor reversed =
        from_vector(std::vector<double>(special.rbegin(), special.rend()), kit.reference()).to(dtype);
    kit.check(
        "maximum", dtype, "NaN on either side propagates", {x, reversed},
        [](const Inputs& in) { return in[0].maximum(in[1]); }, kExact);
    const Tensor rows = from_vector<double>({1, NAN, 3, NAN, -INFINITY, 2, 5, 5, 5, 0, -0.0, 0}, kit.reference())
                            .to(dtype)
                            .reshape({4, 3});
    for (const auto& [name, op] : {std::pair{"amax", NNP_REDUCE_MAX}, std::pair{"amin", NNP_REDUCE_MIN},
                                   std::pair{"argmax", NNP_REDUCE_ARGMAX}, std::pair{"argmin", NNP_REDUCE_ARGMIN}})
      kit.check(
          name, dtype, "rows with NaN (the first NaN wins), ties (the first wins)", {rows},
          [op = op](const Inputs& in) { return in[0].reduce(op, {1}, false); }, kExact);
    // Rows long enough for vector code: NaN in the body, in the tail, none;
    // the extreme in the body and in the tail.
    Tensor long_rows = kit.normal({5, 301}, Dtype::f32).to(dtype);
    long_rows.index_put_({0, 17}, NAN);
    long_rows.index_put_({1, 300}, NAN);
    long_rows.index_put_({2, 40}, 1e4), long_rows.index_put_({2, 41}, -1e4);
    long_rows.index_put_({3, 299}, 1e4), long_rows.index_put_({3, 298}, -INFINITY);
    for (const auto& [name, op] : {std::pair{"amax", NNP_REDUCE_MAX}, std::pair{"amin", NNP_REDUCE_MIN}}) {
      kit.check(
          name, dtype, "rows of 301 with NaN in the body or the tail, extremes in the tail", {long_rows},
          [op = op](const Inputs& in) { return in[0].reduce(op, {1}, false); }, kExact);
      kit.check(
          name, dtype, "all of [5,301] (one output)", {long_rows.narrow(0, 2, 3)},
          [op = op](const Inputs& in) {
            return in[0].reduce(op, {0, 1}, false);
          },
          kExact);
    }
    kit.check(
        "var", dtype, "of nothing is NaN ([3,0] dim 1)", {empty({3, 0}, dtype, kit.reference())},
        [](const Inputs& in) { return in[0].var({1}); }, kExact);
    kit.check(
        "var", dtype, "of one value with correction 1 ([3,1] dim 1)", {kit.normal({3, 1}, dtype)},
        [](const Inputs& in) { return in[0].var({1}); }, kExact);
    kit.check(
        "copy", dtype, "to bool: NaN and -0.0", {x}, [](const Inputs& in) { return in[0].to(Dtype::boolean); }, kExact);
    for (Dtype to : {Dtype::i64, Dtype::i32, Dtype::u8, Dtype::i8})
      kit.check(
          "copy", dtype, std::string("to ") + dtype_name(to) + ": NaN, infinities, out of range, negatives",
          {from_vector<double>({NAN, INFINITY, -INFINITY, 1e30, -1e30, 3e9, -1.6, 255.9, 256, -0.0}, kit.reference())
               .to(dtype)},
          [to](const Inputs& in) { return in[0].to(to); }, kExact);
  }
  for (Dtype dtype : kAll) {
    // x[1:] = x[:-1]: the copy must read every element before it is overwritten.
    kit.check("copy", dtype, "between overlapping views of one tensor", {kit.values({9}, dtype)}, [](const Inputs& in) {
      Tensor x = in[0].clone();
      x.slice(0, 1, 9).copy_(x.slice(0, 0, 8));
      return x;
    });
    // What alloc returns is aligned for every element type (16 bytes).
    kit.check(
        "alloc", dtype, "alignment of 1, 3, 7, 33 and 1000 elements (remainder mod 16)", {kit.values({1}, dtype)},
        [dtype](const Inputs& in) {
          std::vector<int64_t> remainders;
          for (int64_t n : {1, 3, 7, 33, 1000})
            remainders.push_back(
                static_cast<int64_t>(reinterpret_cast<uintptr_t>(empty({n}, dtype, in[0].device()).data_ptr()) % 16));
          return from_vector(remainders, in[0].device());
        },
        kExact);
  }
}

// The profiler's device time comes from the backend's optional timing
// events (event_record, event_elapsed_us, event_release; ABI 1.6): every op
// gets a finite, non-negative time, or (no slots) none does.
void check_timing(Kit& kit) {
  kit.check(
      "timing_events", Dtype::f32, "device time of 4 matmuls 32x32 under the profiler (all >= 0 and finite, or none)",
      {kit.values({32, 32}, Dtype::f32)},
      [](const Inputs& in) {
        std::vector<profiler::Event> events;
        {
          profiler::Profiler recording;
          for (int i = 0; i < 4; ++i) in[0].matmul(in[0]);
          events = recording.stop().events();
        }
        int ops = 0, timed = 0, invalid = 0;
        for (const profiler::Event& e : events) {
          if (e.name != "matmul") continue;
          ++ops;
          if (e.device_us >= 0 && std::isfinite(e.device_us))
            ++timed;
          else if (e.device_us != -1)
            ++invalid;
        }
        const bool consistent = ops == 4 && invalid == 0 && (timed == 0 || timed == ops);
        return from_vector(std::vector<int64_t>{consistent ? 1 : 0}, in[0].device());
      },
      kExact);
}

// The int8 GEMM of quantized layers (ABI 1.7's optional gemm_i8, or the
// core's fallback on the backend's floating gemm where the slot is NULL):
// exact int32 sums, at the extremes of int8, in the shapes its vector code
// and its threading split on, and quantization's round-and-clamp around it.
void check_int8(Kit& kit) {
  // (From 8 rows the AVX2 form packs b in panels of 16 columns and k in
  // pairs: {12, 40, 33} and {9, 17, 1} cut both.)
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},    {1, 64, 48},  {2, 4, 16},    {3, 5, 31},
                                                      {8, 9, 100},  {64, 33, 96}, {1, 256, 784}, {4, 8, 1500},
                                                      {12, 40, 33}, {9, 17, 1}};
  for (auto [m, n, k] : shapes)
    kit.check(
        "gemm_i8", Dtype::i8,
        "[" + std::to_string(m) + "," + std::to_string(k) + "] @ [" + std::to_string(n) + "," + std::to_string(k) +
            "]^T",
        {kit.integers({m, k}, -128, 128, Dtype::i8), kit.integers({n, k}, -128, 128, Dtype::i8)},
        [](const Inputs& in) { return matmul_i8(in[0], in[1]); }, kExact);
  kit.check(
      "gemm_i8", Dtype::i8, "all -128 (the largest products), [2,1024]", {full({2, 1024}, -128, Dtype::i8)},
      [](const Inputs& in) { return matmul_i8(in[0], in[0]); }, kExact);
  // ABI 1.19's optional quantized_gemm (the quantized layers' whole GEMM:
  // activations quantized in, sums rescaled out), against the reference's
  // composition: ties, NaN, infinities and values past int8 in x, zero
  // points 0 (negative offsets clamped), inside and 128, with and without
  // bias, on the shapes of the int8 GEMM.
  const std::array<int64_t, 3> zero_points = {0, 37, 128};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [m, n, k] = shapes[i];
    const int64_t zero_point = zero_points[i % 3];
    const bool with_bias = i % 2 == 0;
    std::vector<double> specials = {2.5 / 16, -3.5 / 16, NAN, INFINITY, -INFINITY, 1e6, -1e6, 0.5 / 16};
    Tensor x = kit.normal({m, k}, Dtype::f32, 4.0).reshape({m * k});
    for (size_t j = 0; j < specials.size() && static_cast<int64_t>(j) < m * k; ++j)
      x.index_put_({static_cast<int64_t>(j * 7 % static_cast<size_t>(m * k))}, specials[j]);
    kit.check(
        "quantized_gemm", Dtype::f32,
        "[" + std::to_string(m) + "," + std::to_string(k) + "] x [" + std::to_string(n) + "," + std::to_string(k) +
            "]^T, zero point " + std::to_string(zero_point) + (with_bias ? ", bias" : ""),
        {x.reshape({m, k}), kit.integers({n, k}, -128, 128, Dtype::i8), kit.normal({n}, Dtype::f32, 0.01),
         kit.normal({n}, Dtype::f32)},
        [zero_point, with_bias](const Inputs& in) {
          return quantized_matmul(in[0], 1.0 / 16, zero_point, in[1], in[2], with_bias ? in[3] : Tensor());
        },
        kExact);
  }
  kit.check(
      "quantize_per_tensor", Dtype::f32, "ties, out of range, quint8 zero point 128",
      {from_vector<double>({-0.25, 0.25, 0.75, -1.25, 40, -40, 0.1, -0.0}, kit.reference())},
      [](const Inputs& in) { return quantize_per_tensor(in[0], 0.5, 128, kQUInt8).int_repr(); }, kExact);
  kit.check(
      "quantize_per_channel", Dtype::f32, "qint8 along axis 1 of [5,3]", {kit.normal({5, 3}, Dtype::f32, 4.0)},
      [](const Inputs& in) {
        Tensor scales = from_vector<double>({0.1, 0.03, 0.25}, in[0].device());
        Tensor zero_points = from_vector<int64_t>({0, -3, 5}, in[0].device());
        return quantize_per_channel(in[0], scales, zero_points, 1, kQInt8).int_repr();
      },
      kExact);
  check_packed_int8_convolutions(kit);
  check_packed_conv_integers(kit);
  check_dynamic_quantize_linear(kit);
}

// The quantization grids of a static int8 layer's input and output.
struct Grids {
  double input_scale;
  int64_t input_zero_point;
  double scale;
  int64_t zero_point;
};

// The nn.GraphModule `program` on in[0], on in[0]'s device without
// gradients, its static int8 layer `name` given in[1] (the weight), in[2]
// (its scales), in[3] (the bias, where it has one) and the grids.
Tensor with_int8_layer(const std::string& program, const char* name, bool bias, const Grids& grids, const Inputs& in) {
  nn::ModuleHandle net = nn::GraphModule(program);
  net.to(in[0].device());
  NoGradGuard no_grad;
  nn::ModuleHandle layer = net.get_submodule(name);
  layer.get_buffer("weight").copy_(in[1]);
  layer.get_buffer("weight_scale").copy_(in[2]);
  if (bias) layer.get_buffer("bias").copy_(in[3]);
  layer.get_buffer("input_scale").fill_(grids.input_scale);
  layer.get_buffer("input_zero_point").fill_(static_cast<double>(grids.input_zero_point));
  layer.get_buffer("scale").fill_(grids.scale);
  layer.get_buffer("zero_point").fill_(static_cast<double>(grids.zero_point));
  return net(in[0]);
}

// ABI 1.22's optional quantized_conv2d_pack / quantized_conv2d_packed:
// graph mode packs an nn.quantized.Conv2d layer's weight once and fuses a
// MaxPool2d layer whose windows tile (an nn.GraphModule; the reference
// backend, which packs nothing, runs the layers: im2col, the int8 GEMM,
// the requantization). The result must be exactly the layers': the same
// roundings in the same order. Inputs with ties, NaN, infinities and
// values past the grid; zero points 0, inside and at the top. And the
// static int8 Linear layer, which graph mode runs as a 1 x 1 convolution.
void check_packed_int8_convolutions(Kit& kit) {
  struct Packed {
    const char* layout;
    Shape input;
    std::string conv;  // the layer's attributes
    std::string pool;  // the MaxPool2d's kernel_size, or "" for none
    Grids grids;
    bool bias;
  };
  const Packed packed[] = {
      {"[2,1,28,28] k5 to 16, relu, pool 2 (W3's first)",
       {2, 1, 28, 28},
       R"("in_channels": 1, "out_channels": 16, "kernel_size": 5, "relu": true)",
       "2",
       {1.0 / 32, 10, 0.05, 0},
       true},
      {"[2,16,12,12] k5 to 32, relu, pool 2 (W3's second)",
       {2, 16, 12, 12},
       R"("in_channels": 16, "out_channels": 32, "kernel_size": 5, "relu": true)",
       "2",
       {0.05, 0, 0.1, 4},
       true},
      {"[2,3,13,10] k3 padding 1 to 20, zero points 37 and 128",
       {2, 3, 13, 10},
       R"("in_channels": 3, "out_channels": 20, "kernel_size": 3, "padding": 1)",
       "",
       {1.0 / 16, 37, 0.25, 128},
       true},
      {"[1,20,9,9] k(3,2) padding (2,0) stride (1,2) to 40, pool (2,3)",
       {1, 20, 9, 9},
       R"("in_channels": 20, "out_channels": 40, "kernel_size": [3, 2], "padding": [2, 0], "stride": [1, 2],
          "relu": true)",
       "[2, 3]",
       {0.125, 3, 0.5, 20},
       true},
      {"[2,5,8,8] k3 dilation 2 to 17, no bias",
       {2, 5, 8, 8},
       R"("in_channels": 5, "out_channels": 17, "kernel_size": 3, "dilation": 2, "bias": false)",
       "",
       {0.1, 64, 0.2, 255},
       false},
      {"[1,1,6,6] k7 padding 3 to 3 (a kernel past the input)",
       {1, 1, 6, 6},
       R"("in_channels": 1, "out_channels": 3, "kernel_size": 7, "padding": 3)",
       "",
       {0.5, 0, 1.0, 100},
       true},
  };
  for (const Packed& c : packed) {
    std::string layers = R"([{"name": "conv", "type": "nn.quantized.Conv2d", "attrs": {)" + c.conv + "}}";
    std::string nodes = R"({"layer": "conv", "inputs": ["x"], "outputs": ["c"]})", last = "c";
    if (!c.pool.empty()) {
      layers += R"(, {"name": "pool", "type": "nn.MaxPool2d", "attrs": {"kernel_size": )" + c.pool + "}}";
      nodes += R"(, {"layer": "pool", "inputs": ["c"], "outputs": ["p"]})";
      last = "p";
    }
    const std::string program = R"({"inputs": ["x"], "outputs": [")" + last + R"("], "tensors": [], "layers": )" +
                                layers + R"(], "nodes": [)" + nodes + "]}";
    const Shape w =
        nn::model_from_spec(R"({"type": "nn.quantized.Conv2d", )" + c.conv + "}").get_buffer("weight").shape();
    Tensor x = (kit.normal(c.input, Dtype::f64, 40.0) * c.grids.input_scale).reshape({-1});
    const std::vector<double> specials = {2.5, -3.5, NAN, INFINITY, -INFINITY, 1e6, 0.5, -130};
    for (size_t j = 0; j < specials.size(); ++j)
      x.index_put_({static_cast<int64_t>(j * 13 % static_cast<size_t>(x.numel()))}, specials[j] * c.grids.input_scale);
    const Inputs inputs{x.reshape(c.input).to(Dtype::f32), kit.integers(w, -127, 128, Dtype::i8),
                        kit.positive({w[0]}, Dtype::f64) * 0.01, kit.normal({w[0]}, Dtype::f32)};
    kit.check(
        "quantized conv2d packed", Dtype::f32, c.layout, inputs,
        [program, c](const Inputs& in) { return with_int8_layer(program, "conv", c.bias, c.grids, in); }, kExact);
  }
  // A static int8 Linear runs the same kernel as a 1 x 1 convolution of its rows.
  struct Linear {
    const char* layout;
    Shape input;
    int64_t out;
    bool relu;
  };
  const Linear linears[] = {{"Linear [4,512] to 10 (W3's last)", {4, 512}, 10, false},
                            {"Linear [2,3,37] to 33, relu (rank 3)", {2, 3, 37}, 33, true}};
  for (const Linear& c : linears) {
    const int64_t k = c.input.back();
    const std::string attrs = R"("in_features": )" + std::to_string(k) + R"(, "out_features": )" +
                              std::to_string(c.out) + R"(, "relu": )" + (c.relu ? "true" : "false");
    const std::string program = R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
        "layers": [{"name": "linear", "type": "nn.quantized.Linear", "attrs": {)" +
                                attrs + R"(}}], "nodes": [{"layer": "linear", "inputs": ["x"], "outputs": ["y"]}]})";
    Tensor x = kit.normal(c.input, Dtype::f32, 2.0).reshape({-1});
    x.index_put_({3}, NAN);
    x.index_put_({5}, 1e9);
    const Inputs inputs{x.reshape(c.input), kit.integers({c.out, k}, -127, 128, Dtype::i8),
                        kit.positive({c.out}, Dtype::f64) * 0.01, kit.normal({c.out}, Dtype::f32)};
    kit.check(
        "quantized conv2d packed", Dtype::f32, c.layout, inputs,
        [program](const Inputs& in) {
          return with_int8_layer(program, "linear", true, {0.0625, 40, 0.125, 90}, in);
        },
        kExact);
  }
}

// ABI 1.29's optional conv2d_integer_pack / conv2d_integer_packed: graph
// mode packs the constant weight (and its zero point) of each ONNX
// ConvInteger node once (an nn.GraphModule under no_grad; the reference
// backend, which packs nothing, runs the node's exact composition). The
// int32 sums must be exact: u8 and i8 images and weights, zero points 0,
// inside, 128 and at the ends, per tensor and per channel, padding (which
// adds 0), strides, dilations, a first layer's one channel, depthwise
// layers (one channel a group), and the extremes of a 4,608-tap sum.
void check_packed_conv_integers(Kit& kit) {
  struct Case {
    const char* layout;
    Shape input, weight;
    Dtype x_dtype, w_dtype;
    std::vector<int64_t> x_zero, w_zero;  // empty: the input left out
    const char* attrs;
    bool extremes;  // x at its top and w at its bottom less a zero point at the top
  };
  const Case cases[] = {
      {"u8 [2,3,13,10] k3 padding 1 to 20, u8 weight, zero points 37 and 120",
       {2, 3, 13, 10},
       {20, 3, 3, 3},
       Dtype::u8,
       Dtype::u8,
       {37},
       {120},
       R"("pads": [1, 1, 1, 1])",
       false},
      {"u8 [2,16,12,12] k5 to 32, i8 weight, no weight zero point (W3's second)",
       {2, 16, 12, 12},
       {32, 16, 5, 5},
       Dtype::u8,
       Dtype::i8,
       {0},
       {},
       R"("kernel_shape": [5, 5])",
       false},
      {"i8 [1,20,9,9] k(3,2) padding (2,0) stride (1,2) to 40, per-channel i8 zero points",
       {1, 20, 9, 9},
       {40, 20, 3, 2},
       Dtype::i8,
       Dtype::i8,
       {-5},
       {0, 3, -7, 127, -128},
       R"("pads": [2, 0, 2, 0], "strides": [1, 2])",
       false},
      {"u8 [1,1,6,6] k7 padding 3 to 3 (a first layer's one channel), weight zero point 128",
       {1, 1, 6, 6},
       {3, 1, 7, 7},
       Dtype::u8,
       Dtype::u8,
       {255},
       {128},
       R"("pads": [3, 3, 3, 3])",
       false},
      {"u8 [2,5,8,8] k3 dilation 2 to 17, no zero points",
       {2, 5, 8, 8},
       {17, 5, 3, 3},
       Dtype::u8,
       Dtype::u8,
       {},
       {},
       R"("dilations": [2, 2], "auto_pad": "VALID")",
       false},
      {"u8 [2,8,9,11] depthwise k3 padding 1, per-channel zero points",
       {2, 8, 9, 11},
       {8, 1, 3, 3},
       Dtype::u8,
       Dtype::u8,
       {41},
       {0, 255, 128, 7, 99},
       R"("pads": [1, 1, 1, 1], "group": 8)",
       false},
      {"i8 [1,6,13,21] depthwise k3 stride 2 padding 1 (the even and odd columns)",
       {1, 6, 13, 21},
       {6, 1, 3, 3},
       Dtype::i8,
       Dtype::i8,
       {-3},
       {0},
       R"("pads": [1, 1, 1, 1], "strides": [2, 2], "group": 6)",
       false},
      {"u8 [1,5,7,29] depthwise k(3,5) stride (1,3) dilation (2,1) padding (2,2)",
       {1, 5, 7, 29},
       {5, 1, 3, 5},
       Dtype::u8,
       Dtype::u8,
       {200},
       {31},
       R"("pads": [2, 2, 2, 2], "strides": [1, 3], "dilations": [2, 1], "group": 5)",
       false},
      {"u8 [1,512,4,4] k3 padding 1 to 16: 4,608 taps at the extremes",
       {1, 512, 4, 4},
       {16, 512, 3, 3},
       Dtype::u8,
       Dtype::u8,
       {0},
       {255},
       R"("pads": [1, 1, 1, 1])",
       true},
  };
  for (const Case& c : cases) {
    const int64_t low = c.x_dtype == Dtype::u8 ? 0 : -128, high = c.x_dtype == Dtype::u8 ? 256 : 128;
    const int64_t w_low = c.w_dtype == Dtype::u8 ? 0 : -128, w_high = c.w_dtype == Dtype::u8 ? 256 : 128;
    Inputs inputs{
        c.extremes ? full(c.input, 255.0, c.x_dtype, kit.reference()) : kit.integers(c.input, low, high, c.x_dtype),
        c.extremes ? zeros(c.weight, c.w_dtype, kit.reference()) : kit.integers(c.weight, w_low, w_high, c.w_dtype)};
    std::vector<int64_t> w_zero = c.w_zero;
    if (w_zero.size() > 1) w_zero.resize(static_cast<size_t>(c.weight[0]), 1);  // one a channel
    auto dims = [](const std::vector<int64_t>& v) { return v.size() == 1 ? std::string() : std::to_string(v.size()); };
    std::string tensors = R"({"key": "w", "value": "w", "shape": [)" + std::to_string(c.weight[0]);
    for (size_t d = 1; d < 4; ++d) tensors += ", " + std::to_string(c.weight[d]);
    tensors += R"(], "dtype": ")" + std::string(dtype_name(c.w_dtype)) + R"("})";
    std::string node_inputs = R"("x", "w")";
    if (!c.x_zero.empty() || !w_zero.empty()) {
      node_inputs += c.x_zero.empty() ? R"(, "")" : R"(, "xz")";
      if (!c.x_zero.empty()) {
        tensors +=
            R"(, {"key": "xz", "value": "xz", "shape": [], "dtype": ")" + std::string(dtype_name(c.x_dtype)) + R"("})";
        inputs.push_back(full({}, static_cast<double>(c.x_zero[0]), c.x_dtype, kit.reference()));
      }
    }
    if (!w_zero.empty()) {
      node_inputs += R"(, "wz")";
      tensors += R"(, {"key": "wz", "value": "wz", "shape": [)" + dims(w_zero) + R"(], "dtype": ")" +
                 std::string(dtype_name(c.w_dtype)) + R"("})";
      std::vector<double> values(w_zero.begin(), w_zero.end());
      Tensor z = from_vector<double>(values, kit.reference()).to(c.w_dtype);
      inputs.push_back(w_zero.size() == 1 ? z.reshape({}) : z);
    }
    const std::string program = R"({"inputs": ["x"], "outputs": ["y"], "layers": [], "tensors": [)" + tensors +
                                R"(], "nodes": [{"op": "ConvInteger", "inputs": [)" + node_inputs +
                                R"(], "outputs": ["y"], "attrs": {)" + c.attrs + "}}]}";
    kit.check(
        "conv2d integer packed", Dtype::i32, c.layout, inputs,
        [program](const Inputs& in) {
          nn::ModuleHandle net = nn::GraphModule(program);
          net.to(in[0].device());
          NoGradGuard no_grad;
          std::vector<Tensor> buffers = net.buffers();
          for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(in[i + 1]);
          return net(in[0]);
        },
        kExact);
  }
}

// ABI 1.29's optional dynamic_quantize_linear: graph mode runs each ONNX
// DynamicQuantizeLinear node with it (an nn.GraphModule under no_grad; the
// reference backend composes the node: its range read on the host). y, the
// scale and the zero point must be exactly the composition's: ranges on
// both sides of 0, only above or below it, all zeros (scale 0), an
// infinity (scale not finite), ties of x / scale, and an input split over
// threads. A NaN has no range and is refused.
void check_dynamic_quantize_linear(Kit& kit) {
  struct Case {
    const char* layout;
    Shape shape;
    double scale, shift;  // x = normal * scale + shift
    std::vector<double> specials;
  };
  const Case cases[] = {
      {"[2,3,5,7] across 0", {2, 3, 5, 7}, 3.0, 0.5, {}},
      {"[4,33] above 0 only", {4, 33}, 1.0, 10.0, {}},
      {"[4,33] below 0 only", {4, 33}, 1.0, -10.0, {}},
      {"[3,8] all zeros (scale 0)", {3, 8}, 0.0, 0.0, {}},
      {"[3,8] an infinity (scale not finite)", {3, 8}, 1.0, 0.0, {INFINITY}},
      {"[17] ties of x / scale", {17}, 0.0, 0.0, {-2.0, 0.5, 1.5, 2.5, -0.5, 253.5 / 127.5, -0.0}},
      {"[3,300,300] (threaded)", {3, 300, 300}, 2.0, 1.0, {}},
      {"[2,9] a NaN is refused", {2, 9}, 1.0, 0.0, {NAN}},
  };
  const std::string program = R"({"inputs": ["x"], "outputs": ["y", "s", "z"], "layers": [], "tensors": [],
      "nodes": [{"op": "DynamicQuantizeLinear", "inputs": ["x"], "outputs": ["y", "s", "z"]}]})";
  for (const Case& c : cases) {
    Tensor x = kit.normal(c.shape, Dtype::f32) * c.scale + c.shift;
    {
      NoGradGuard no_grad;
      Tensor flat = x.reshape({-1});
      for (size_t i = 0; i < c.specials.size(); ++i) flat.index_put_({static_cast<int64_t>(i)}, c.specials[i]);
    }
    for (int output = 0; output < 3; ++output)
      kit.check(
          "dynamic_quantize_linear", output == 1 ? Dtype::f32 : Dtype::u8,
          std::string(c.layout) + (output == 0   ? ""
                                   : output == 1 ? ": scale"
                                                 : ": zero point"),
          {x},
          [program, output](const Inputs& in) {
            nn::ModuleHandle net = nn::GraphModule(program);
            net.to(in[0].device());
            NoGradGuard no_grad;
            return net.call_values({Value(in[0])}).tensor(output);
          },
          kExact);
  }
}

// One case of a layer-level family: the input's shape and the layer's
// attributes.
struct Geometry {
  const char* layout;
  Shape input;
  std::string spec;
};

// ABI 1.9's optional conv2d (inference: the Conv layers take it under
// no_grad): each geometry against the reference backend's general path.
void check_conv(Kit& kit) {
  const Geometry geometries[] = {
      {"[2,3,9,9] k3 padding 1",
       {2, 3, 9, 9},
       R"("in_channels": 3, "out_channels": 4, "kernel_size": 3, "padding": 1)"},
      {"[1,1,28,28] k5 (W3's first)", {1, 1, 28, 28}, R"("in_channels": 1, "out_channels": 16, "kernel_size": 5)"},
      {"[3,4,10,8] k3 stride 2 dilation 2 groups 2 padding (1,2)",
       {3, 4, 10, 8},
       R"("in_channels": 4, "out_channels": 6, "kernel_size": 3, "stride": 2, "dilation": 2, "groups": 2,
          "padding": [1, 2])"},
      {"[2,6,7,7] k(3,1) groups 3 no bias",
       {2, 6, 7, 7},
       R"("in_channels": 6, "out_channels": 3, "kernel_size": [3, 1], "groups": 3, "bias": false)"},
      {"[5,2,4,4] k4 (one output position)", {5, 2, 4, 4}, R"("in_channels": 2, "out_channels": 3, "kernel_size": 4)"},
      {"[9,64,64,64] k3 (images split into chunks)",
       {9, 64, 64, 64},
       R"("in_channels": 64, "out_channels": 8, "kernel_size": 3, "padding": 1)"},
      {"[5,1,256,256] k3 (large images: a few per chunk)",
       {5, 1, 256, 256},
       R"("in_channels": 1, "out_channels": 16, "kernel_size": 3)"},
  };
  for (const Geometry& g : geometries) {
    const std::string spec = R"({"type": "nn.Conv2d", )" + g.spec + "}";
    nn::ModuleHandle shape_only = nn::model_from_spec(spec);
    Inputs inputs{kit.normal(g.input, Dtype::f32)};
    for (const Tensor& p : shape_only.parameters()) inputs.push_back(kit.normal(p.shape(), Dtype::f32));
    // Each output sums a window of weight[1] * kh * kw terms.
    const Shape& w = inputs[1].shape();
    kit.check(
        "conv2d", Dtype::f32, g.layout, inputs,
        [spec](const Inputs& in) { return with_parameters(nn::model_from_spec(spec), in); },
        static_cast<double>(w[1] * w[2] * w[3]));
    // ABI 1.18's activation: the ReLU applied by the kernel as it writes
    // (graph mode fuses it), or composed where the backend has no kernel.
    kit.check(
        "conv2d relu", Dtype::f32, g.layout, inputs,
        [spec](const Inputs& in) {
          const nn::LayerSpec layer = *nn::layer_spec(nn::model_from_spec(spec));
          const nn::Attrs& attrs = layer.attrs;
          auto pair = [&attrs](const char* name, int64_t fallback, int64_t out[2]) {
            std::vector<int64_t> v = attrs.has(name) ? attrs.integers(name) : std::vector<int64_t>{fallback};
            out[0] = v.front();
            out[1] = v.back();
          };
          nnp_conv2d_params p{};
          p.struct_size = sizeof p;
          pair("stride", 1, p.stride);
          pair("padding", 0, p.padding);
          pair("dilation", 1, p.dilation);
          p.groups = attrs.has("groups") ? attrs.integer("groups") : 1;
          p.activation = NNP_ACTIVATION_RELU;
          NoGradGuard no_grad;
          const Tensor* bias = in.size() > 2 ? &in[2] : nullptr;
          if (Tensor fused =
                  Tensor::call(api().conv2d_fused, in[0].get(), in[1].get(), bias ? bias->get() : nullptr, &p);
              fused.defined())
            return fused;
          nn::functional::Conv2dFuncOptions options;
          options.stride({p.stride[0], p.stride[1]}).padding({p.padding[0], p.padding[1]});
          options.dilation({p.dilation[0], p.dilation[1]}).groups(p.groups);
          if (bias) options.bias(*bias);
          return nn::functional::conv2d(in[0], in[1], options).relu();
        },
        static_cast<double>(w[1] * w[2] * w[3]));
    // Training (ABI 1.12's conv2d_backward, or the core's im2col ops): the
    // gradients of sum(conv(x) * r) for x, the weight and the bias, one
    // after another. Not for the largest product: the reference's loops
    // would take most of the kit's time on it.
    Shape out_shape;
    {
      nn::ModuleHandle conv = nn::model_from_spec(spec);
      conv.to(inputs[0].device());
      NoGradGuard no_grad;
      out_shape = conv(inputs[0]).shape();
    }
    if (out_shape[0] * out_shape[1] * out_shape[2] * out_shape[3] * w[1] * w[2] * w[3] > 50'000'000) continue;
    Inputs with_r = inputs;
    with_r.push_back(kit.normal(out_shape, Dtype::f32));
    const int64_t terms = std::max(out_shape[0] * out_shape[2] * out_shape[3], out_shape[1] * w[2] * w[3]);
    kit.check(
        "conv2d_backward", Dtype::f32, g.layout, with_r,
        [spec](const Inputs& in) {
          nn::ModuleHandle conv = nn::model_from_spec(spec);
          conv.to(in[0].device());
          std::vector<Tensor> params = conv.parameters();
          {
            NoGradGuard no_grad;
            for (size_t i = 0; i < params.size(); ++i) params[i].copy_(in[i + 1]);
          }
          Tensor x = in[0].clone().requires_grad_();
          (conv(x) * in.back()).sum().backward();
          std::vector<Tensor> grads{x.grad().reshape({-1})};
          for (const Tensor& p : params) grads.push_back(p.grad().reshape({-1}));
          return cat(grads, 0);
        },
        static_cast<double>(terms));
  }
  // ABI 1.21's optional conv2d_pack / conv2d_packed: graph mode packs a
  // Conv layer's weight once and fuses the Relu and a MaxPool2d layer whose
  // windows tile (an nn.GraphModule under no_grad; the reference backend,
  // which packs nothing, runs the layers). Geometries a backend declines
  // run the layers too, and must still agree.
  struct Packed {
    const char* layout;
    Shape input;
    std::string conv;
    bool relu, pool, nan;
  };
  const Packed packed[] = {
      {"[3,16,12,12] k5 to 32, relu, pool 2 (W3's second)",
       {3, 16, 12, 12},
       R"("in_channels": 16, "out_channels": 32, "kernel_size": 5)",
       true,
       true,
       false},
      {"[2,1,28,28] k5 to 16, relu, pool 2 (W3's first)",
       {2, 1, 28, 28},
       R"("in_channels": 1, "out_channels": 16, "kernel_size": 5)",
       true,
       true,
       false},
      {"[2,10,11,9] k5 padding 2 to 20, relu (odd sizes, no pool)",
       {2, 10, 11, 9},
       R"("in_channels": 10, "out_channels": 20, "kernel_size": 5, "padding": 2)",
       true,
       false,
       false},
      {"[1,3,13,10] k3 padding 1 to 24, pool 2, no bias",
       {1, 3, 13, 10},
       R"("in_channels": 3, "out_channels": 24, "kernel_size": 3, "padding": 1, "bias": false)",
       false,
       true,
       false},
      {"[2,20,9,9] k5 padding 4 to 40, relu, pool 2, a NaN in the input",
       {2, 20, 9, 9},
       R"("in_channels": 20, "out_channels": 40, "kernel_size": 5, "padding": 4)",
       true,
       true,
       true},
      {"[2,2,10,10] k(3,5) padding (1,2) to 7, relu",
       {2, 2, 10, 10},
       R"("in_channels": 2, "out_channels": 7, "kernel_size": [3, 5], "padding": [1, 2])",
       true,
       false,
       false},
      // Geometries the cpu backend packs in oneDNN's layout, one image in
      // parts of its output channels (16 and 32 of 48 on two threads).
      {"[1,32,20,20] k3 padding 1 to 48, relu, a NaN in the input (one image)",
       {1, 32, 20, 20},
       R"("in_channels": 32, "out_channels": 48, "kernel_size": 3, "padding": 1)",
       true,
       false,
       true},
      {"[1,32,30,30] k3 dilation 2 to 64, no bias (one image)",
       {1, 32, 30, 30},
       R"("in_channels": 32, "out_channels": 64, "kernel_size": 3, "dilation": 2, "bias": false)",
       false,
       false,
       false},
      {"[3,24,15,15] k1 stride 2 to 40, relu (1x1, three images)",
       {3, 24, 15, 15},
       R"("in_channels": 24, "out_channels": 40, "kernel_size": 1, "stride": 2)",
       true,
       false,
       false},
  };
  for (const Packed& c : packed) {
    const std::string layers = R"([{"name": "conv", "type": "nn.Conv2d", "attrs": {)" + c.conv +
                               R"(}}, {"name": "pool", "type": "nn.MaxPool2d", "attrs": {"kernel_size": 2}}])";
    std::string nodes = R"({"layer": "conv", "inputs": ["x"], "outputs": ["c"]})", last = "c";
    if (c.relu) {
      nodes += R"(, {"op": "Relu", "inputs": ["c"], "outputs": ["r"]})";
      last = "r";
    }
    if (c.pool) {
      nodes += R"(, {"layer": "pool", "inputs": [")" + last + R"("], "outputs": ["p"]})";
      last = "p";
    }
    const std::string program = R"({"inputs": ["x"], "outputs": [")" + last + R"("], "tensors": [],
        "layers": )" + layers + R"(, "nodes": [)" +
                                nodes + "]}";
    nn::ModuleHandle shape_only = nn::model_from_spec(R"({"type": "nn.Conv2d", )" + c.conv + "}");
    Inputs inputs{kit.normal(c.input, Dtype::f32)};
    for (const Tensor& p : shape_only.parameters()) inputs.push_back(kit.normal(p.shape(), Dtype::f32));
    if (c.nan) inputs[0].index_put_({c.input[0] - 1, 3, 4, 5}, NAN);
    const Shape& w = inputs[1].shape();
    kit.check(
        "conv2d packed", Dtype::f32, c.layout, inputs,
        [program](const Inputs& in) { return with_parameters(nn::GraphModule(program), in); },
        static_cast<double>(w[1] * w[2] * w[3]));
  }
  kit.check("conv1d", Dtype::f32, "[2,3,11] k3 stride 2 (as a conv2d of height 1)",
            {kit.normal({2, 3, 11}, Dtype::f32), kit.normal({5, 3, 3}, Dtype::f32), kit.normal({5}, Dtype::f32)},
            [](const Inputs& in) {
              nn::ModuleHandle conv = nn::model_from_spec(
                  R"({"type": "nn.Conv1d", "in_channels": 3, "out_channels": 5, "kernel_size": 3, "stride": 2})");
              conv.to(in[0].device());
              NoGradGuard no_grad;
              std::vector<Tensor> params = conv.parameters();
              params[0].copy_(in[1]);
              params[1].copy_(in[2]);
              return conv(in[0]);
            });
}

// ABI 1.10's optional max_pool2d (the MaxPool layers take it under
// no_grad): values and return_indices against the reference backend's
// general path, which has no such kernel.
void check_pool(Kit& kit) {
  const Geometry geometries[] = {
      {"[2,3,8,8] k2 (W3's)", {2, 3, 8, 8}, R"("kernel_size": 2)"},
      {"[2,2,6,41] k2 (wide rows)", {2, 2, 6, 41}, R"("kernel_size": 2)"},
      {"[1,2,9,7] k3 stride 2 padding 1", {1, 2, 9, 7}, R"("kernel_size": 3, "stride": 2, "padding": 1)"},
      {"[2,2,10,9] k(3,2) stride (2,1) dilation 2",
       {2, 2, 10, 9},
       R"("kernel_size": [3, 2], "stride": [2, 1], "dilation": 2)"},
      {"[1,3,7,7] k2 ceil_mode (overhanging last window)", {1, 3, 7, 7}, R"("kernel_size": 2, "ceil_mode": true)"},
      {"[3,1,5,5] k5 (one output position)", {3, 1, 5, 5}, R"("kernel_size": 5)"},
      // Rows of many windows (the vector loops), NaN and -inf among them:
      {"[2,3,20,45] k3 stride 2 padding 1 (a ResNet's stem)",
       {2, 3, 20, 45},
       R"("kernel_size": 3, "stride": 2, "padding": 1)"},
      {"[1,2,13,55] k3 stride 2 ceil_mode (SqueezeNet's)",
       {1, 2, 13, 55},
       R"("kernel_size": 3, "stride": 2, "ceil_mode": true)"},
      {"[1,2,9,40] k(2,3) stride 1 padding (0,1) dilation (1,2)",
       {1, 2, 9, 40},
       R"("kernel_size": [2, 3], "stride": 1, "padding": [0, 1], "dilation": [1, 2])"},
  };
  for (const Geometry& g : geometries)
    for (bool indices : {false, true}) {
      const std::string spec = R"({"type": "nn.MaxPool2d", "return_indices": )" +
                               std::string(indices ? "true" : "false") + ", " + g.spec + "}";
      Tensor x = kit.normal(g.input, Dtype::f32);
      {
        NoGradGuard no_grad;
        Tensor flat = x.reshape({-1});
        const double specials[] = {NAN, -INFINITY, -0.0, 0.0};
        for (size_t i = 0; i < std::size(specials); ++i)
          flat.index_put_({static_cast<int64_t>((i * 97 + 29) % static_cast<size_t>(flat.numel()))}, specials[i]);
      }
      kit.check(
          indices ? "max_pool2d indices" : "max_pool2d", indices ? Dtype::i64 : Dtype::f32, g.layout, {x},
          [spec, indices](const Inputs& in) {
            nn::ModuleHandle pool = nn::model_from_spec(spec);
            NoGradGuard no_grad;
            if (!indices) return Tensor(pool(in[0]));
            return pool.call_values({Value(in[0])}).tensor(1);
          },
          kExact);
    }
  kit.check(
      "max_pool1d", Dtype::f32, "[2,3,11] k3 stride 2 (as a max_pool2d of height 1)",
      {kit.normal({2, 3, 11}, Dtype::f32)},
      [](const Inputs& in) {
        nn::ModuleHandle pool = nn::model_from_spec(R"({"type": "nn.MaxPool1d", "kernel_size": 3, "stride": 2})");
        NoGradGuard no_grad;
        return pool(in[0]);
      },
      kExact);
}

// ABI 1.18's optional layer_norm (LayerNorm and ONNX's LayerNormalization
// take it where no gradient is wanted): against the reference backend's
// composition, which has no such kernel. Rows of W7's width, odd widths
// (a kernel's vector tail), rows with a large mean (the centred variance
// keeps their precision), weight and bias or neither, and many rows (split
// over threads).
void check_norm(Kit& kit) {
  struct Case {
    const char* layout;
    Shape input;
    int32_t normalized;
    bool affine;
    double mean;
  };
  const Case cases[] = {
      {"[32,64,128] over 128 (W7's)", {32, 64, 128}, 1, true, 0},
      {"[5,37] over 37 (a vector tail)", {5, 37}, 1, true, 0},
      {"[3,4,6] over [4,6], no weight or bias", {3, 4, 6}, 2, false, 0},
      {"[6,200] mean 1000 (the centred variance)", {6, 200}, 1, true, 1000},
      {"[4096,16] (many rows, threaded)", {4096, 16}, 1, true, 0},
      {"[2,1] (one element a row: all zero)", {2, 1}, 1, true, 0},
      {"[7,48] (rows of whole vectors, an odd count)", {7, 48}, 1, true, 0},
  };
  for (const Case& c : cases) {
    const Shape normalized(c.input.end() - c.normalized, c.input.end());
    Inputs inputs{kit.normal(c.input, Dtype::f32) + c.mean};
    if (c.affine) {
      inputs.push_back(kit.normal(normalized, Dtype::f32));
      inputs.push_back(kit.normal(normalized, Dtype::f32));
    }
    int64_t terms = 1;
    for (int64_t d : normalized) terms *= d;
    kit.check(
        "layer_norm", Dtype::f32, c.layout, inputs,
        [normalized](const Inputs& in) {
          nn::functional::LayerNormFuncOptions options(normalized);
          if (in.size() == 3) options.weight(in[1]).bias(in[2]);
          return nn::functional::layer_norm(in[0], options.eps(1e-5));
        },
        static_cast<double>(terms));
  }
  // ABI 1.23's optional add_layer_norm: graph mode fuses an Add whose one
  // reader is a LayerNormalization over the last axis (an nn.GraphModule
  // under no_grad; the reference backend runs the two nodes). W7's residual
  // (its sublayer's output sequence-first, transposed where it lies), a
  // vector tail without a bias, a large mean.
  struct Residual {
    const char* layout;
    Shape a;
    bool transposed, bias;
    double mean;
  };
  const Residual residuals[] = {
      {"[32,64,128] + a transposed [64,32,128] (W7's residual)", {32, 64, 128}, true, true, 0},
      {"[5,37] + [5,37], no bias (a vector tail)", {5, 37}, false, false, 0},
      {"[6,200] + [6,200] mean 1000 (the centred variance)", {6, 200}, false, true, 1000},
      {"[3,5,32] + [3,5,32] (rows of whole vectors, an odd count)", {3, 5, 32}, false, true, 0},
  };
  for (const Residual& c : residuals) {
    const int64_t n = c.a.back();
    const Shape b_shape = c.transposed ? Shape{c.a[1], c.a[0], c.a[2]} : c.a;
    Inputs inputs{kit.normal(c.a, Dtype::f32) + c.mean, kit.normal(b_shape, Dtype::f32), kit.normal({n}, Dtype::f32)};
    if (c.bias) inputs.push_back(kit.normal({n}, Dtype::f32));
    std::string nodes, sum_input = "b";
    if (c.transposed) {
      nodes = R"({"op": "Transpose", "inputs": ["b"], "outputs": ["bt"], "attrs": {"perm": [1, 0, 2]}}, )";
      sum_input = "bt";
    }
    nodes += R"({"op": "Add", "inputs": ["a", ")" + sum_input + R"("], "outputs": ["s"]},
        {"op": "LayerNormalization", "inputs": ["s", "g")" +
             std::string(c.bias ? R"(, "beta")" : "") + R"(], "outputs": ["y"], "attrs": {"axis": -1}})";
    const std::string program = std::string(R"({"inputs": ["a", "b", "g")") + (c.bias ? R"(, "beta")" : "") +
                                R"(], "outputs": ["y"], "layers": [], "tensors": [], "nodes": [)" + nodes + "]}";
    kit.check(
        "add_layer_norm", Dtype::f32, c.layout, inputs,
        [program](const Inputs& in) {
          nn::ModuleHandle net = nn::GraphModule(program);
          net.to(in[0].device());
          NoGradGuard no_grad;
          return net.call(std::vector<Tensor>(in.begin(), in.end()));
        },
        static_cast<double>(n));
  }
}

// ABI 1.12's optional sgd_step (torch.optim.SGD takes it): three steps of
// each variant, the parameter after them against the reference backend's
// elementwise path, which has no such kernel. A backend flagged
// NNP_BACKEND_SGD_IN_PLACE (1.13) steps in place from the second step (from
// the first without momentum). in[0] is the parameter, in[1]
// to in[3] the gradients of the three steps; transposed gradients are not
// contiguous, which the kernel must leave to the ops.
void check_optimizer(Kit& kit) {
  struct Variant {
    const char* layout;
    double momentum, dampening, weight_decay;
    bool nesterov, maximize;
  };
  const Variant variants[] = {
      {"no momentum", 0, 0, 0, false, false},
      {"momentum 0.9 (W1's)", 0.9, 0, 0, false, false},
      {"momentum 0.9 nesterov weight_decay 0.01", 0.9, 0, 0.01, true, false},
      {"momentum 0.5 dampening 0.3 maximize", 0.5, 0.3, 0, false, true},
      {"weight_decay 0.1 maximize, no momentum", 0, 0, 0.1, false, true},
  };
  for (Dtype dtype : {Dtype::f32, Dtype::f64})
    for (const Variant& v : variants)
      for (bool transposed : {false, true}) {
        const Shape shape{33, 70}, grad_shape = transposed ? Shape{70, 33} : shape;  // spans the pool's threads
        kit.check("sgd_step", dtype, std::string(v.layout) + (transposed ? ", [33,70], transposed grads" : ", [33,70]"),
                  {kit.normal(shape, dtype), kit.normal(grad_shape, dtype), kit.normal(grad_shape, dtype),
                   kit.normal(grad_shape, dtype)},
                  [v, transposed](const Inputs& in) {
                    Tensor p = in[0].clone();
                    p.requires_grad_();
                    optim::Optimizer opt("SGD", {p},
                                         std::move(nn::Attrs()
                                                       .set("lr", 0.05)
                                                       .set("momentum", v.momentum)
                                                       .set("dampening", v.dampening)
                                                       .set("weight_decay", v.weight_decay)
                                                       .set("nesterov", v.nesterov)
                                                       .set("maximize", v.maximize)));
                    for (int step = 1; step <= 3; ++step) {
                      p.set_grad(transposed ? in[step].t() : in[step]);
                      opt.step();
                    }
                    return p.detach();
                  });
      }
}

}  // namespace

Tolerance tolerance_for(const std::string& dtype) {
  if (dtype == "f64") return {1e-10, 1e-12};
  if (dtype == "f32") return {2e-5, 1e-6};
  if (dtype == "f16") return {2e-3, 1e-4};
  if (dtype == "bf16") return {1.6e-2, 1e-3};
  return {0, 0};  // integers and bool are exact
}

namespace {

// Graph mode (nnp::compile) on the backend against the same model run
// eagerly on reference: random Sequential models of the layers a plan
// offers a backend that compiles graphs (nnp_backend 1.24: Linear as Gemm,
// Conv2d, MaxPool2d, ReLU, Flatten, Identity), weights given as inputs so
// both sides hold the same. Such a backend runs what it claims and cpu the
// rest; a claim its compile or execute then refuses, or gets wrong, fails
// the case with its message: claims are checked for honesty here.
void check_compile(Kit& kit) {
  std::mt19937 pick(2024);
  auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(pick); };
  struct Graph {
    std::string spec, layout;
    Shape input;
  };
  std::vector<Graph> graphs;
  for (int g = 0; g < 6; ++g) {  // products, biases and ReLUs: an MLP of 1 to 4 layers
    int features = between(1, 40);
    Graph graph{"", "", {between(1, 9), features}};
    std::string layers, text;
    for (int l = between(1, 4); l > 0; --l) {
      const int out = between(1, 40);
      const bool bias = between(0, 3) != 0;
      layers += R"({"type": "nn.Linear", "in_features": )" + std::to_string(features) + R"(, "out_features": )" +
                std::to_string(out) + R"(, "bias": )" + (bias ? "true" : "false") + "},";
      text += "Linear(" + std::to_string(features) + "," + std::to_string(out) + (bias ? "" : ",no bias") + ") ";
      features = out;
      if (between(0, 2) != 0) {
        layers += R"({"type": "nn.ReLU"},)";
        text += "ReLU ";
      }
    }
    graph.spec = R"({"type": "nn.Sequential", "children": [)" + layers + R"({"type": "nn.Identity"}]})";
    graph.layout = text + "on " + shape_text(graph.input);
    graphs.push_back(graph);
  }
  for (int g = 0; g < 4; ++g) {  // a convolution, ReLU, pooling, then Flatten and Linear
    const int channels = between(1, 3), size = between(6, 12), out = between(1, 6), kernel = 2 * between(0, 2) + 1;
    const int padding = between(0, kernel / 2), stride = between(1, 2);
    const int conv_size = (size + 2 * padding - kernel) / stride + 1, pooled = conv_size / 2;
    if (pooled < 1) continue;
    Graph graph{"", "", {between(1, 4), channels, size, size}};
    graph.spec = R"({"type": "nn.Sequential", "children": [{"type": "nn.Conv2d", "in_channels": )" +
                 std::to_string(channels) + R"(, "out_channels": )" + std::to_string(out) + R"(, "kernel_size": )" +
                 std::to_string(kernel) + R"(, "padding": )" + std::to_string(padding) + R"(, "stride": )" +
                 std::to_string(stride) + R"(}, {"type": "nn.ReLU"}, {"type": "nn.MaxPool2d", "kernel_size": 2},)" +
                 R"({"type": "nn.Flatten"}, {"type": "nn.Linear", "in_features": )" +
                 std::to_string(out * pooled * pooled) + R"(, "out_features": 3}]})";
    graph.layout = "Conv2d(" + std::to_string(channels) + "," + std::to_string(out) + ",k" + std::to_string(kernel) +
                   ",p" + std::to_string(padding) + ",s" + std::to_string(stride) +
                   ") ReLU MaxPool2d(2) Flatten Linear on " + shape_text(graph.input);
    graphs.push_back(graph);
  }
  const Device reference = kit.reference();
  for (const Graph& g : graphs) {
    Inputs in{kit.normal(g.input, Dtype::f32)};
    for (const Tensor& p : nn::model_from_spec(g.spec).parameters())
      in.push_back(kit.normal(p.shape(), Dtype::f32, 0.3));
    kit.check(
        "compile", Dtype::f32, g.layout, in,
        [spec = g.spec, reference](const Inputs& in) {
          nn::ModuleHandle model = nn::model_from_spec(spec);
          model.eval();
          if (in[0].device() == reference) return with_parameters(model, in);  // eager, the oracle
          model.to(in[0].device());
          {
            NoGradGuard no_grad;
            std::vector<Tensor> params = model.parameters();
            for (size_t i = 0; i < params.size(); ++i) params[i].copy_(in[i + 1]);
          }
          nn::ModuleHandle fast = compile(model, {in[0]});
          NoGradGuard no_grad;
          (void)fast(in[0]);  // the call that makes the plan (and asks the backend)
          return Tensor(fast(in[0]));
        },
        64);
  }
}

// A captured training step (nnp::compile_step, ABI 1.25) replayed on the
// backend against the same step on reference: two Linear layers and their
// ReLUs trained by SGD with momentum, four calls (two recordings, two
// replays), the parameters compared. A tape rewrites the step with the
// backend's optional kernels (ABI 1.26's relu_backward for each ReLU's
// backward and its bias's gradient), so this checks those against the
// composition. Pre-activations of exactly 0 (a row of zeros, no bias) are
// among the cases, and a NaN input, where the step only computes the
// gradients (a NaN weight would make every later number NaN): a NaN that
// reaches a ReLU passes the gradient, so the biases' gradients stay finite.
void check_captured_steps(Kit& kit) {
  struct Case {
    const char* layout;
    int64_t rows, in, hidden, out;
    bool bias, zero_row, nan;
  };
  const Case cases[] = {
      {"[32,20] -> 24 -> 10, biases, SGD", 32, 20, 24, 10, true, false, false},
      {"[7,5] -> 33 -> 3, biases, SGD (column tails)", 7, 5, 33, 3, true, false, false},
      {"[6,9] -> 40 -> 2, no biases, SGD, a row of zeros (pre-activations of 0)", 6, 9, 40, 2, false, true, false},
      {"[5,8] -> 40 -> 36, biases, a NaN input, the gradients", 5, 8, 40, 36, true, false, true},
  };
  for (const Case& c : cases) {
    std::vector<float> values = kit.normal({c.rows, c.in}, Dtype::f32).to_vector<float>();
    if (c.zero_row) std::fill(values.begin(), values.begin() + c.in, 0.0f);
    if (c.nan) values[3] = NAN;
    Inputs in{from_vector(values, {c.rows, c.in}, kit.reference()), kit.normal({c.rows, c.out}, Dtype::f32),
              kit.normal({c.hidden, c.in}, Dtype::f32, 0.4), kit.normal({c.out, c.hidden}, Dtype::f32, 0.4)};
    if (c.bias) in.push_back(kit.normal({c.hidden}, Dtype::f32)), in.push_back(kit.normal({c.out}, Dtype::f32));
    const bool train = !c.nan;
    kit.check(
        "captured step", Dtype::f32, c.layout, in,
        [train](const Inputs& in) {
          std::vector<Tensor> params;
          for (size_t i = 2; i < in.size(); ++i) params.push_back(in[i].clone().requires_grad_());
          const bool bias = params.size() == 4;
          optim::Optimizer opt("SGD", params, std::move(nn::Attrs().set("lr", 0.05).set("momentum", 0.9)));
          CapturedStep step = compile_step([&](const std::vector<Tensor>& v) {
            opt.zero_grad();
            Tensor h = nn::functional::linear(v[0], params[0], bias ? params[2] : Tensor()).relu();
            Tensor y = nn::functional::linear(h, params[1], bias ? params[3] : Tensor()).relu();
            Tensor loss = (y * v[1]).sum();
            loss.backward();
            if (train) opt.step();
            return std::vector<Tensor>{loss};
          });
          for (int call = 0; call < 4; ++call) (void)step({in[0], in[1]});
          std::vector<Tensor> flat;
          for (const Tensor& p : params) flat.push_back((train ? p.detach() : p.grad()).reshape({-1}));
          return cat(flat);
        },
        static_cast<double>(c.rows * c.hidden));
  }
}

// The lower-precision paths autocast takes (ABI 1.27) on the backend against
// reference: 16-bit products at sizes that reach a backend's fast paths
// (tiles of 32, transposed operands, batches), an MLP's loss and gradients
// under autocast in bf16 and f16 (the scope opened for the inputs' own
// device type), and a gradient scaler's unscale with an inf among the
// gradients (exact: one product each, the flag).
void check_autocast(Kit& kit) {
  for (Dtype d : {Dtype::bf16, Dtype::f16}) {
    struct Product {
      const char* layout;
      Shape a, b;
      bool transpose_a;
    };
    const Product products[] = {{"[64,96] @ [96,128]", {64, 96}, {96, 128}, false},
                                {"[67,61]^T-view @ [67,45] (edges, a transposed)", {67, 61}, {67, 45}, true},
                                {"[8,64,32] @ [8,32,64] (attention's heads)", {8, 64, 32}, {8, 32, 64}, false}};
    for (const Product& p : products)
      kit.check(
          "autocast product", d, p.layout, {kit.normal(p.a, d), kit.normal(p.b, d)},
          [&p](const Inputs& in) { return (p.transpose_a ? in[0].t() : in[0]).matmul(in[1]); },
          static_cast<double>(p.a.back()));
    Inputs mlp{kit.normal({64, 96}, Dtype::f32),       kit.integers({64}, 0, 40, Dtype::i64),
               kit.normal({128, 96}, Dtype::f32, 0.1), kit.normal({128}, Dtype::f32, 0.1),
               kit.normal({40, 128}, Dtype::f32, 0.1), kit.normal({40}, Dtype::f32, 0.1)};
    kit.check(
        "autocast MLP step", d, "[64,96] -> 128 -> 40, cross-entropy: loss and gradients", mlp,
        [d](const Inputs& in) {
          std::vector<Tensor> params;
          for (size_t i = 2; i < in.size(); ++i) params.push_back(in[i].clone().requires_grad_());
          const std::string backend = in[0].device().backend();
          Tensor loss;
          {
            nnp::autocast scope(backend == "rocm" ? "cuda" : backend, d);
            Tensor h = nn::functional::linear(in[0], params[0], params[1]).relu();
            loss = nn::functional::cross_entropy(nn::functional::linear(h, params[2], params[3]), in[1]);
          }
          loss.backward();
          std::vector<Tensor> flat{loss.reshape({1})};
          for (const Tensor& p : params) flat.push_back(p.grad().reshape({-1}));
          return cat(flat).to(d);  // judged at the lower precision
        },
        96);
  }
  std::vector<float> values(200);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.37f - 30.0f;
  values[131] = INFINITY;
  kit.check(
      "amp_unscale_grads", Dtype::f32, "[200] with an inf at 131, then [7] clean",
      {from_vector(values, {200}, kit.reference())},
      [](const Inputs& in) {
        Tensor p = zeros({200}, Dtype::f32, in[0].device()).requires_grad_();
        Tensor q = zeros({7}, Dtype::f32, in[0].device()).requires_grad_();
        (p * in[0]).sum().backward();
        (q * 3.0).sum().backward();
        optim::Optimizer opt("SGD", {p, q}, std::move(nn::Attrs().set("lr", 0.1)));
        Tensor found = zeros({1}, Dtype::f32, in[0].device());
        check(api().amp_unscale_grads(opt.get(), 1.0 / 1024, found.get(), 0));
        return cat({found, p.grad(), q.grad()});
      },
      kExact);
}

struct Family {
  const char* name;
  void (*check)(Kit&);
};
const Family kFamilies[] = {
    {"copy", check_copy_and_fill},  {"unary", check_unary},       {"binary", check_binary},
    {"where", check_where},         {"reduce", check_reduce},     {"matmul", check_matmul},
    {"softmax", check_softmax},     {"indexing", check_indexing}, {"random", check_random},
    {"semantics", check_semantics}, {"timing", check_timing},     {"int8", check_int8},
    {"conv", check_conv},           {"pool", check_pool},         {"optimizer", check_optimizer},
    {"norm", check_norm},           {"compile", check_compile},   {"capture", check_captured_steps},
    {"autocast", check_autocast}};

}  // namespace

std::vector<std::string> families() {
  std::vector<std::string> names;
  for (const Family& f : kFamilies) names.push_back(f.name);
  return names;
}

Report run(const std::string& backend, const Options& options) {
  Kit kit(backend, options);
  uint64_t seed = 0, offset = 0;
  api().get_rng_state(&seed, &offset);
  bool known = options.family.empty();
  for (size_t i = 0; i < std::size(kFamilies); ++i) {
    if (!options.family.empty() && options.family != kFamilies[i].name) continue;
    known = true;
    manual_seed(1234 + i);
    kFamilies[i].check(kit);
  }
  api().set_rng_state(seed, offset);
  if (!known) throw Error(NNP_INVALID_ARGUMENT, "conformance: no family '" + options.family + "'");
  return kit.finish();
}

void print(const Report& report, std::ostream& out, bool verbose) {
  struct Row {
    int passed = 0, failed = 0;
    double worst = 0;
  };
  std::map<std::string, Row> rows;
  for (const Case& c : report.cases) {
    Row& row = rows[detail::printable(c.op)];
    (c.passed ? row.passed : row.failed)++;
    row.worst = std::max(row.worst, c.worst);
    // The details quote the backend's own error text, a stranger's string:
    // every string is printed escaped.
    if (verbose || !c.passed)
      out << (c.passed ? "  ok    " : "  FAIL  ") << detail::printable(c.op) << " " << detail::printable(c.dtype) << " "
          << detail::printable(c.layout) << (c.detail.empty() ? "" : " -- " + detail::printable(c.detail, 1000))
          << "\n";
  }
  out << "conformance of backend '" << detail::printable(report.backend, 4096) << "' against 'reference'\n";
  if (!report.note.empty()) out << "note: " << detail::printable(report.note, 1000) << "\n";
  out << "tolerances: |got - want| <= atol + rtol*|want|; f64 rtol 1e-10, f32 2e-5, f16 2e-3, bf16 1.6e-2; "
         "integers, bool and random draws exact; GEMM/reductions scale atol by the terms summed\n";
  size_t width = 14;  // the op column fits the longest name
  for (const auto& entry : rows) width = std::max(width, entry.first.size() + 2);
  out << std::left << std::setw(static_cast<int>(width)) << "op" << std::setw(8) << "cases" << std::setw(8) << "failed"
      << "worst error / tolerance\n";
  for (const auto& [op, row] : rows)
    out << std::setw(static_cast<int>(width)) << op << std::setw(8) << row.passed + row.failed << std::setw(8)
        << row.failed << std::setprecision(3) << row.worst << "\n";
  out << report.passed << " passed, " << report.failed << " failed\n";
}

}  // namespace nnp::conformance
