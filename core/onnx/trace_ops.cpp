// The ONNX form of each op the trace records, and which axis of its result
// is the batch (so the graph stays valid for every batch size).
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "../error.hpp"
#include "../shape.hpp"
#include "lowering.hpp"
#include "onnx_graph.hpp"
#include "trace.hpp"

namespace nnp::core::onnx {

namespace {

std::string cast_to(nnp_onnx_graph& g, const Tensor& t, nnp_dtype dtype) {
  std::string name = g.name(t);
  if (t.dtype == dtype) return name;
  std::string out = g.fresh(name + "_cast");
  set_attr(g.node("Cast", {name}, {out}), "to", static_cast<int64_t>(onnx_elem_type(dtype)));
  return out;
}

// Where in out (a broadcast of in) the batch axis of in lands.
int32_t broadcast_axis(const TracedValue& v, const Tensor& in, const Tensor& out) {
  if (v.batch_axis < 0) return -1;
  const int32_t axis = v.batch_axis + (out.shape.ndim - in.shape.ndim);
  return out.shape[axis] == in.shape[v.batch_axis] ? axis : -1;
}

std::vector<int64_t> dims_of(const Dims& d) { return std::vector<int64_t>(d.d, d.d + d.ndim); }

int64_t product(const Dims& d, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; ++i) p *= d[i];
  return p;
}

}  // namespace

void refuse_op(const char* op) {
  fail(NNP_UNIMPLEMENTED, "onnx export: ", op,
       " has no ONNX form in this exporter; export the model without it, or wrap it in a plugin layer that "
       "writes its own nodes (nnp_layer_type.to_onnx)");
}

// The ONNX node a unary op is by itself, or nullptr (RSQRT, SILU and GELU
// are several).
const char* single_node_type(int32_t op) {
  switch (op) {
    case NNP_UNARY_NEG: return "Neg";
    case NNP_UNARY_ABS: return "Abs";
    case NNP_UNARY_EXP: return "Exp";
    case NNP_UNARY_LOG: return "Log";
    case NNP_UNARY_SQRT: return "Sqrt";
    case NNP_UNARY_SIN: return "Sin";
    case NNP_UNARY_COS: return "Cos";
    case NNP_UNARY_TANH: return "Tanh";
    case NNP_UNARY_SIGMOID: return "Sigmoid";
    case NNP_UNARY_RELU: return "Relu";
    case NNP_UNARY_SIGN: return "Sign";
    case NNP_UNARY_ERF: return "Erf";
    case NNP_UNARY_ROUND: return "Round";  // ties to even, as torch.round
    default: return nullptr;
  }
}

void record_unary(nnp_onnx_graph& g, nnp_unary_op op, const Tensor& x, const Tensor& out) {
  TracedValue v = g.value(x);
  const std::string& in = v.name;
  std::string result;
  auto single = [&](const char* type) { return g.node1(type, {in}); };
  if (const char* type = single_node_type(op)) {
    result = single(type);
  } else if (op == NNP_UNARY_RSQRT) {
    result = g.node1("Reciprocal", {single("Sqrt")});
  } else if (op == NNP_UNARY_SILU) {
    result = g.node1("Mul", {in, single("Sigmoid")}, "Silu");
  } else if (op == NNP_UNARY_GELU) {  // opset 17 has no Gelu: x * 0.5 * (1 + erf(x / sqrt(2)))
    std::string scaled = g.node1("Div", {in, g.scalar(std::sqrt(2.0), x.dtype, "sqrt2")});
    std::string plus = g.node1("Add", {g.node1("Erf", {scaled}), g.scalar(1.0, x.dtype, "one")});
    result = g.node1("Mul", {g.node1("Mul", {in, g.scalar(0.5, x.dtype, "half")}), plus}, "Gelu");
  } else {
    refuse_op("this unary op");
  }
  g.bind(out, result, v.batch_axis, v.batch_lead);
}

// The ONNX node of a binary op (NE is Equal, then Not).
const char* binary_node_type(int32_t op) {
  static const char* const kTypes[] = {"Add",   "Sub",   "Mul",  "Div",         "Pow",     "Max",           "Min",
                                       "Equal", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"};
  static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == NNP_BINARY_COUNT, "one ONNX node type per binary op");
  if (op < 0 || op >= NNP_BINARY_COUNT) refuse_op("this binary op");
  return kTypes[op];
}

void record_binary(nnp_onnx_graph& g, nnp_binary_op op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* type = binary_node_type(op);
  const bool comparison = op >= NNP_BINARY_EQ;
  const nnp_dtype compute = comparison ? a.dtype : out.dtype;
  TracedValue va = g.value(a), vb = g.value(b);
  std::string result = g.node1(type, {cast_to(g, a, compute), cast_to(g, b, compute)});
  if (op == NNP_BINARY_NE) result = g.node1("Not", {result});
  int32_t axis = broadcast_axis(va, a, out);
  int64_t lead = va.batch_lead;
  if (axis < 0) std::tie(axis, lead) = std::make_pair(broadcast_axis(vb, b, out), vb.batch_lead);
  g.bind(out, result, axis, lead);
}

void record_elementwise_chain(nnp_onnx_graph& g, const std::vector<const Tensor*>& inputs,
                              const std::vector<nnp_elementwise_step>& steps, const Tensor& out) {
  std::vector<std::string> names;
  int32_t axis = -1;
  int64_t lead = 0;
  for (const Tensor* t : inputs) {
    TracedValue v = g.value(*t);
    names.push_back(v.name);
    if (axis < 0) std::tie(axis, lead) = std::make_pair(broadcast_axis(v, *t, out), v.batch_lead);
  }
  for (const nnp_elementwise_step& st : steps) {
    const std::string& a = names[static_cast<size_t>(st.a)];
    if (st.kind == NNP_STEP_BINARY) {
      const bool arithmetic = st.op >= NNP_BINARY_ADD && st.op <= NNP_BINARY_DIV;
      if (!arithmetic && st.op != NNP_BINARY_MAXIMUM && st.op != NNP_BINARY_MINIMUM)
        refuse_op("this step of an elementwise chain");
      names.push_back(g.node1(binary_node_type(st.op), {a, names[static_cast<size_t>(st.b)]}));
      continue;
    }
    const char* type = single_node_type(st.op);
    if (!type) refuse_op("this step of an elementwise chain");
    names.push_back(g.node1(type, {a}));
  }
  g.bind(out, names.back(), axis, lead);
}

void record_where(nnp_onnx_graph& g, const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  TracedValue vc = g.value(cond), va = g.value(a), vb = g.value(b);
  // ONNX Runtime has no Where over bools: those choose between uint8s.
  const nnp_dtype chosen = out.dtype == NNP_BOOL ? NNP_U8 : out.dtype;
  std::string result = g.node1("Where", {cast_to(g, cond, NNP_BOOL), cast_to(g, a, chosen), cast_to(g, b, chosen)});
  if (chosen != out.dtype) {
    const std::string back = g.fresh(result + "_cast");
    set_attr(g.node("Cast", {result}, {back}), "to", static_cast<int64_t>(onnx_elem_type(out.dtype)));
    result = back;
  }
  int32_t axis = broadcast_axis(va, a, out);
  int64_t lead = va.batch_lead;
  if (axis < 0) std::tie(axis, lead) = std::make_pair(broadcast_axis(vb, b, out), vb.batch_lead);
  if (axis < 0) std::tie(axis, lead) = std::make_pair(broadcast_axis(vc, cond, out), vc.batch_lead);
  g.bind(out, result, axis, lead);
}

void record_reduce(nnp_onnx_graph& g, nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims,
                   bool keepdim, double correction, const Tensor& out) {
  TracedValue v = g.value(x);
  std::vector<int64_t> axes;
  if (ndims == 0)
    for (int32_t i = 0; i < x.shape.ndim; ++i) axes.push_back(i);
  else
    for (int32_t i = 0; i < ndims; ++i) axes.push_back(wrap_dim("reduce", dims[i], x.shape.ndim));
  std::sort(axes.begin(), axes.end());
  int32_t axis = v.batch_axis;
  if (axis >= 0) {
    if (std::count(axes.begin(), axes.end(), axis)) {
      axis = -1;
      if (op == NNP_REDUCE_VAR) g.lose_batch("a variance over the batch axis divides by the traced batch size");
    } else if (!keepdim) {
      axis -= static_cast<int32_t>(std::count_if(axes.begin(), axes.end(), [&](int64_t a) { return a < axis; }));
    }
  }
  const int64_t keep = keepdim ? 1 : 0;
  auto reduce_attr = [&](const char* type, const std::string& in, int64_t keepdims) {
    std::string r = g.fresh(type);
    ::onnx::NodeProto& n = g.node(type, {in}, {r});
    set_attr(n, "axes", axes);
    set_attr(n, "keepdims", keepdims);
    return r;
  };
  auto reduce_sum = [&](const std::string& in, int64_t keepdims) {
    std::string r = g.fresh("ReduceSum");
    set_attr(g.node("ReduceSum", {in, g.int64s(axes, "axes")}, {r}), "keepdims", keepdims);
    return r;
  };
  std::string result;
  // A 0-d input has no axes to name (an empty "axes" attribute fails
  // onnx::checker): its sum, mean, largest and smallest are itself.
  if (axes.empty() && (op == NNP_REDUCE_SUM || op == NNP_REDUCE_MEAN || op == NNP_REDUCE_MAX || op == NNP_REDUCE_MIN)) {
    result = g.fresh("Identity");
    g.node("Identity", {v.name}, {result});
    g.bind(out, result, axis, v.batch_lead);
    return;
  }
  switch (op) {
    case NNP_REDUCE_SUM: result = reduce_sum(v.name, keep); break;
    case NNP_REDUCE_MEAN: result = reduce_attr("ReduceMean", v.name, keep); break;
    case NNP_REDUCE_MAX: result = reduce_attr("ReduceMax", v.name, keep); break;
    case NNP_REDUCE_MIN: result = reduce_attr("ReduceMin", v.name, keep); break;
    case NNP_REDUCE_ARGMAX:
    case NNP_REDUCE_ARGMIN: {
      const char* type = op == NNP_REDUCE_ARGMAX ? "ArgMax" : "ArgMin";
      if (axes.size() == 1 && ndims != 0) {
        result = g.fresh(type);
        ::onnx::NodeProto& n = g.node(type, {v.name}, {result});
        set_attr(n, "axis", axes[0]);
        set_attr(n, "keepdims", keep);
      } else {  // over every element: of the flattened tensor, shaped as the result
        std::string flat = g.node1("Reshape", {v.name, g.int64s({-1}, "flat")});
        std::string r = g.fresh(type);
        ::onnx::NodeProto& n = g.node(type, {flat}, {r});
        set_attr(n, "axis", int64_t{0});
        set_attr(n, "keepdims", int64_t{0});
        result = g.node1("Reshape", {r, g.int64s(dims_of(out.shape), "shape")});
      }
      break;
    }
    case NNP_REDUCE_VAR: {
      std::string mean = reduce_attr("ReduceMean", v.name, 1);
      std::string diff = g.node1("Sub", {v.name, mean});
      std::string sum = reduce_sum(g.node1("Mul", {diff, diff}), keep);
      int64_t n = 1;
      for (int64_t a : axes) n *= x.shape[static_cast<int32_t>(a)];
      result = g.node1("Div", {sum, g.scalar(std::max(0.0, static_cast<double>(n) - correction), x.dtype, "dof")});
      break;
    }
    default: refuse_op("this reduction");
  }
  g.bind(out, result, axis, v.batch_lead);
}

void record_softmax(nnp_onnx_graph& g, const Tensor& x, int64_t dim, bool log, const Tensor& out) {
  TracedValue v = g.value(x);
  const char* type = log ? "LogSoftmax" : "Softmax";
  std::string result = g.fresh(type);
  set_attr(g.node(type, {v.name}, {result}), "axis", static_cast<int64_t>(wrap_dim(type, dim, x.shape.ndim)));
  g.bind(out, result, v.batch_axis, v.batch_lead);
}

// MatMul, Add of the bias, Relu: the nodes graph mode fused.
void record_gemm_epilogue(nnp_onnx_graph& g, const Tensor& x, const Tensor& w, const Tensor* bias, int32_t activation,
                          const Tensor& out) {
  TracedValue v = g.value(x);
  std::string result = g.node1("MatMul", {v.name, g.value(w).name});
  if (bias) result = g.node1("Add", {result, g.value(*bias).name});
  if (activation == NNP_ACTIVATION_RELU) result = g.node1("Relu", {result});
  // Rows keep their place: a batch axis other than the last stays where it is.
  g.bind(out, result, v.batch_axis == x.shape.ndim - 1 ? -1 : v.batch_axis, v.batch_lead);
}

// Written only at opset 17 and later (the fused op is not taken otherwise).
void record_attention(nnp_onnx_graph& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                      double scale, const Tensor& out) {
  TracedValue vq = g.value(q);
  const int32_t rank = q.shape.ndim;
  std::vector<int64_t> perm;
  for (int32_t d = 0; d < rank; ++d) perm.push_back(d < rank - 2 ? d : (d == rank - 2 ? rank - 1 : rank - 2));
  std::string kt = g.fresh("Transpose");
  set_attr(g.node("Transpose", {g.value(k).name}, {kt}), "perm", perm);
  std::string scores = g.node1("MatMul", {g.node1("Mul", {vq.name, g.scalar(scale, q.dtype, "scale")}), kt});
  if (mask) scores = g.node1("Add", {scores, g.value(*mask).name});
  std::string weights = g.fresh("Softmax");
  set_attr(g.node("Softmax", {scores}, {weights}), "axis", static_cast<int64_t>(rank - 1));
  g.bind(out, g.node1("MatMul", {weights, g.value(v).name}), vq.batch_axis, vq.batch_lead);
}

namespace {

// A LayerNormalization of the value named x (of x_shape) over its last
// normalized_ndim axes; returns its result's name.
std::string layer_norm_node(nnp_onnx_graph& g, const std::string& x, const Tensor& like, const Tensor* weight,
                            const Tensor* bias, int32_t normalized_ndim, double eps) {
  std::vector<std::string> in{x};
  if (weight) {
    in.push_back(g.value(*weight).name);
  } else {  // ONNX's Scale is required
    Dims dims;
    dims.ndim = normalized_ndim;
    for (int32_t i = 0; i < normalized_ndim; ++i) dims.d[i] = like.shape.d[like.shape.ndim - normalized_ndim + i];
    in.push_back(g.constant(*full(dims, 1.0, like.dtype, like.device), "ln_scale"));
  }
  if (bias) in.push_back(g.value(*bias).name);
  std::string result = g.fresh("LayerNormalization");
  ::onnx::NodeProto& n = g.node("LayerNormalization", in, {result});
  set_attr(n, "axis", -static_cast<int64_t>(normalized_ndim));
  set_attr(n, "epsilon", static_cast<float>(eps));
  return result;
}

}  // namespace

void record_layer_norm(nnp_onnx_graph& g, const Tensor& x, const Tensor* weight, const Tensor* bias,
                       int32_t normalized_ndim, double eps, const Tensor& out) {
  TracedValue v = g.value(x);
  g.bind(out, layer_norm_node(g, v.name, x, weight, bias, normalized_ndim, eps), v.batch_axis, v.batch_lead);
}

void record_add_layer_norm(nnp_onnx_graph& g, const Tensor& a, const Tensor& b, const Tensor* weight,
                           const Tensor* bias, double eps, const Tensor& out) {
  TracedValue va = g.value(a), vb = g.value(b);
  const std::string sum = g.node1("Add", {va.name, vb.name});
  int32_t axis = broadcast_axis(va, a, out);
  int64_t lead = va.batch_lead;
  if (axis < 0) std::tie(axis, lead) = std::make_pair(broadcast_axis(vb, b, out), vb.batch_lead);
  g.bind(out, layer_norm_node(g, sum, a, weight, bias, 1, eps), axis, lead);
}

void record_matmul(nnp_onnx_graph& g, const Tensor& a, const Tensor& b, const Tensor& out) {
  TracedValue va = g.value(a), vb = g.value(b);
  std::string result = g.node1("MatMul", {va.name, vb.name});
  const int32_t o = out.shape.ndim;
  int32_t axis = -1;
  int64_t lead = va.batch_lead;
  if (va.batch_axis >= 0 && a.shape.ndim >= 2) {
    const int32_t ba = va.batch_axis;
    if (ba == a.shape.ndim - 2)
      axis = b.shape.ndim >= 2 ? o - 2 : o - 1;
    else if (ba < a.shape.ndim - 2)
      axis = ba + (o - a.shape.ndim);
  }
  if (axis < 0 && vb.batch_axis >= 0 && b.shape.ndim >= 2) {
    const int32_t bb = vb.batch_axis;
    lead = vb.batch_lead;
    if (bb == b.shape.ndim - 1)
      axis = o - 1;
    else if (bb < b.shape.ndim - 2)
      axis = bb + (o - b.shape.ndim);
  }
  g.bind(out, result, axis, lead);
}

void record_reshape(nnp_onnx_graph& g, const Tensor& x, const Tensor& out) {
  TracedValue v = g.value(x);
  std::vector<int64_t> target = dims_of(out.shape);
  int32_t axis = -1;
  int64_t lead = 1;
  if (v.batch_axis >= 0) {
    // Elements before the batch's first factor, in row-major order; the
    // output axis whose span covers [before, before * batch) holds the
    // whole batch, and -1 there lets ONNX size it for any batch.
    const int64_t before = product(x.shape, 0, v.batch_axis) * v.batch_lead;
    for (int32_t p = 0; p < out.shape.ndim && axis < 0; ++p) {
      const int64_t outer = product(out.shape, 0, p), through = outer * out.shape[p];
      if (outer > 0 && before % outer == 0 && through % (before * g.batch) == 0) {
        axis = p;
        lead = before / outer;
      }
    }
    if (axis >= 0)
      target[static_cast<size_t>(axis)] = -1;
    else
      g.lose_batch("a reshape from " + format_dims(x.shape) + " to " + format_dims(out.shape) +
                   " splits the batch across dimensions");
  }
  g.bind(out, g.node1("Reshape", {v.name, g.int64s(target, "shape")}), axis, lead);
}

void record_permute(nnp_onnx_graph& g, const Tensor& x, const std::vector<int32_t>& perm, const Tensor& out) {
  TracedValue v = g.value(x);
  std::string result = g.fresh("Transpose");
  set_attr(g.node("Transpose", {v.name}, {result}), "perm", std::vector<int64_t>(perm.begin(), perm.end()));
  int32_t axis = -1;
  for (size_t p = 0; p < perm.size(); ++p)
    if (perm[p] == v.batch_axis) axis = static_cast<int32_t>(p);
  g.bind(out, result, axis, v.batch_lead);
}

void record_slice(nnp_onnx_graph& g, const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step,
                  const Tensor& out) {
  TracedValue v = g.value(x);
  const int32_t d = wrap_dim("slice", dim, x.shape.ndim);
  const int64_t size = x.shape[d];
  auto clamp = [&](int64_t i) { return std::min(std::max(i < 0 ? i + size : i, int64_t{0}), size); };
  int64_t s = clamp(start), e = clamp(end);
  int32_t axis = v.batch_axis;
  if (d == axis) {
    if (s == 0 && e == size && step == 1)
      e = std::numeric_limits<int64_t>::max();  // the whole batch, whatever it is
    else
      axis = -1;
  }
  std::string result = g.node1("Slice", {v.name, g.int64s({s}, "starts"), g.int64s({e}, "ends"), g.int64s({d}, "axes"),
                                         g.int64s({step}, "steps")});
  g.bind(out, result, axis, v.batch_lead);
}

void record_expand(nnp_onnx_graph& g, const Tensor& x, const Tensor& out) {
  TracedValue v = g.value(x);
  std::vector<int64_t> target = dims_of(out.shape);
  const int32_t axis = broadcast_axis(v, x, out);
  if (axis >= 0) target[static_cast<size_t>(axis)] = 1;  // Expand keeps the input's size there
  g.bind(out, g.node1("Expand", {v.name, g.int64s(target, "shape")}), axis, v.batch_lead);
}

void record_copy(nnp_onnx_graph& g, const Tensor& x, const Tensor& out) {
  TracedValue v = g.value(x);
  // An Identity where nothing changes, so the call still shows in the graph.
  std::string result = x.dtype == out.dtype ? g.node1("Identity", {v.name}) : cast_to(g, x, out.dtype);
  g.bind(out, result, v.batch_axis, v.batch_lead);
}

void record_cat(nnp_onnx_graph& g, const Tensor* const* tensors, int32_t count, int64_t dim, const Tensor& out) {
  const int32_t d = wrap_dim("cat", dim, out.shape.ndim);
  std::vector<std::string> names;
  int32_t axis = -2;
  int64_t lead = 1;
  for (int32_t i = 0; i < count; ++i) {
    if (tensors[i]->numel == 0 && tensors[i]->shape.ndim == 1) continue;  // cat skips legacy empty tensors
    TracedValue v = g.value(*tensors[i]);
    names.push_back(v.name);
    axis = (axis == -2 || (axis == v.batch_axis && lead == v.batch_lead)) ? v.batch_axis : -1;
    lead = v.batch_lead;
  }
  if (axis == d || axis == -2) axis = -1;
  std::string result = g.fresh("Concat");
  set_attr(g.node("Concat", names, {result}), "axis", static_cast<int64_t>(d));
  g.bind(out, result, axis, lead);
}

void record_index_select(nnp_onnx_graph& g, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  TracedValue v = g.value(x);
  const int32_t d = wrap_dim("index_select", dim, x.shape.ndim);
  std::string result = g.fresh("Gather");
  set_attr(g.node("Gather", {v.name, g.name(index)}, {result}), "axis", static_cast<int64_t>(d));
  g.bind(out, result, v.batch_axis == d ? -1 : v.batch_axis, v.batch_lead);
}

void record_gather(nnp_onnx_graph& g, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  TracedValue v = g.value(x), vi = g.value(index);
  const int32_t d = wrap_dim("gather", dim, x.shape.ndim);
  std::string result = g.fresh("GatherElements");
  set_attr(g.node("GatherElements", {v.name, vi.name}, {result}), "axis", static_cast<int64_t>(d));
  g.bind(out, result, vi.batch_axis == d ? -1 : vi.batch_axis, vi.batch_lead);
}

void record_scatter_add(nnp_onnx_graph& g, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                        const Tensor& out) {
  if (g.opset < 16) refuse_op("scatter_add (ScatterElements with reduction 'add' needs opset 16)");
  TracedValue v = g.value(x);
  const int32_t d = wrap_dim("scatter_add", dim, x.shape.ndim);
  std::string result = g.fresh("ScatterElements");
  ::onnx::NodeProto& n = g.node("ScatterElements", {v.name, g.name(index), g.name(src)}, {result});
  set_attr(n, "axis", static_cast<int64_t>(d));
  set_attr(n, "reduction", std::string("add"));
  g.bind(out, result, v.batch_axis == d ? -1 : v.batch_axis, v.batch_lead);
}

namespace {

// The Conv node (and the Relu of p.activation) on input name x; returns
// the result's name.
std::string conv2d_nodes(nnp_onnx_graph& g, const std::string& x, const Tensor& w, const Tensor* bias,
                         const nnp_conv2d_params& p) {
  std::vector<std::string> inputs{x, g.name(w)};
  if (bias) inputs.push_back(g.name(*bias));
  std::string result = g.fresh("Conv");
  ::onnx::NodeProto& n = g.node("Conv", inputs, {result});
  set_attr(n, "kernel_shape", std::vector<int64_t>{w.shape[2], w.shape[3]});
  set_attr(n, "strides", std::vector<int64_t>{p.stride[0], p.stride[1]});
  set_attr(n, "pads", std::vector<int64_t>{p.padding[0], p.padding[1], p.padding[0], p.padding[1]});
  set_attr(n, "dilations", std::vector<int64_t>{p.dilation[0], p.dilation[1]});
  set_attr(n, "group", p.groups);
  if (p.activation == NNP_ACTIVATION_RELU) result = g.node1("Relu", {result});
  return result;
}

::onnx::NodeProto& max_pool_node(nnp_onnx_graph& g, const std::string& x, const nnp_pool2d_params& p, bool ceil_mode,
                                 const std::vector<std::string>& outputs) {
  ::onnx::NodeProto& n = g.node("MaxPool", {x}, outputs);
  set_attr(n, "kernel_shape", std::vector<int64_t>{p.kernel[0], p.kernel[1]});
  set_attr(n, "strides", std::vector<int64_t>{p.stride[0], p.stride[1]});
  set_attr(n, "pads", std::vector<int64_t>{p.padding[0], p.padding[1], p.padding[0], p.padding[1]});
  set_attr(n, "dilations", std::vector<int64_t>{p.dilation[0], p.dilation[1]});
  set_attr(n, "ceil_mode", static_cast<int64_t>(ceil_mode));
  return n;
}

}  // namespace

void record_conv2d(nnp_onnx_graph& g, const Tensor& x, const Tensor& w, const Tensor* bias, const nnp_conv2d_params& p,
                   const Tensor& out) {
  TracedValue v = g.value(x);
  g.bind(out, conv2d_nodes(g, v.name, w, bias, p), v.batch_axis == 0 ? 0 : -1,
         v.batch_lead);  // channels and spatial sizes change
}

namespace {

// MaxPool of window-sized tiles after `input`; its output's name.
std::string tiling_max_pool(nnp_onnx_graph& g, const std::string& input, const int64_t (&window)[2]) {
  nnp_pool2d_params windows{};
  windows.struct_size = sizeof windows;
  for (int i = 0; i < 2; ++i) {
    windows.kernel[i] = windows.stride[i] = window[i];
    windows.dilation[i] = 1;
  }
  const std::string result = g.fresh("MaxPool");
  max_pool_node(g, input, windows, false, {result});
  return result;
}

}  // namespace

void record_conv2d_pooled(nnp_onnx_graph& g, const Tensor& x, const Tensor& w, const Tensor* bias,
                          const nnp_conv2d_params& p, const int64_t (&pool)[2], const Tensor& out) {
  TracedValue v = g.value(x);
  std::string result = conv2d_nodes(g, v.name, w, bias, p);
  if (pool[0] > 0) result = tiling_max_pool(g, result, pool);
  g.bind(out, result, v.batch_axis == 0 ? 0 : -1, v.batch_lead);
}

void record_dynamic_quantize_linear(nnp_onnx_graph& g, const Tensor& x, const Tensor& y, const Tensor& scale,
                                    const Tensor& zero) {
  TracedValue v = g.value(x);
  const std::string names[3] = {g.fresh("DynamicQuantizeLinear"), g.fresh("DynamicQuantizeLinear_scale"),
                                g.fresh("DynamicQuantizeLinear_zero_point")};
  g.node("DynamicQuantizeLinear", {v.name}, {names[0], names[1], names[2]});
  g.bind(y, names[0], v.batch_axis, v.batch_lead);  // x's shape
  g.bind(scale, names[1], -1);
  g.bind(zero, names[2], -1);
}

void record_conv_integer(nnp_onnx_graph& g, const Tensor& x, const Tensor* x_zero, const Tensor& w,
                         const Tensor* w_zero, const nnp_conv2d_params& p, const Tensor& out) {
  TracedValue v = g.value(x);
  std::vector<std::string> inputs{v.name, g.name(w)};
  if (x_zero || w_zero) inputs.push_back(x_zero ? g.name(*x_zero) : "");
  if (w_zero) inputs.push_back(g.name(*w_zero));
  const std::string result = g.fresh("ConvInteger");
  ::onnx::NodeProto& n = g.node("ConvInteger", inputs, {result});
  set_attr(n, "kernel_shape", std::vector<int64_t>{w.shape[2], w.shape[3]});
  set_attr(n, "strides", std::vector<int64_t>{p.stride[0], p.stride[1]});
  set_attr(n, "pads", std::vector<int64_t>{p.padding[0], p.padding[1], p.padding[0], p.padding[1]});
  set_attr(n, "dilations", std::vector<int64_t>{p.dilation[0], p.dilation[1]});
  set_attr(n, "group", p.groups);
  g.bind(out, result, v.batch_axis == 0 ? 0 : -1, v.batch_lead);
}

void record_quantized_layer_pooled(nnp_onnx_graph& g, const Tensor& x, nnp_module& layer, const int64_t (&pool)[2],
                                   const Tensor& out) {
  TracedValue v = g.value(x);
  std::string result = g.fresh("Quantized");
  write_vendor_node(g, LayerCall{layer, *layer.layer_attrs, {}, {}, {v.name}, {result}});
  if (pool[0] > 0) result = tiling_max_pool(g, result, pool);
  g.bind(out, result, v.batch_axis == 0 ? 0 : -1, v.batch_lead);
}

void record_max_pool2d(nnp_onnx_graph& g, const Tensor& x, const nnp_pool2d_params& p, const Tensor& out,
                       const Tensor* indices) {
  TracedValue v = g.value(x);
  bool ceil_mode = false;
  for (int i = 0; i < 2; ++i) {  // the caller chose the output size: ceil_mode where it exceeds the floor
    const int64_t span = x.shape[2 + i] + 2 * p.padding[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
    ceil_mode = ceil_mode || out.shape[2 + i] > span / p.stride[i] + 1;
  }
  std::string result = g.fresh("MaxPool");
  std::vector<std::string> outputs{result};
  if (indices) outputs.push_back(g.fresh("MaxPool_indices"));
  max_pool_node(g, v.name, p, ceil_mode, outputs);
  const int32_t axis = v.batch_axis == 0 || v.batch_axis == 1 ? v.batch_axis : -1;
  g.bind(out, result, axis, v.batch_lead);
  if (indices) {  // ONNX counts over the whole tensor, PyTorch within each [H, W] plane
    std::string plane = g.scalar(static_cast<double>(x.shape[2] * x.shape[3]), NNP_I64, "plane_size");
    g.bind(*indices, g.node1("Mod", {outputs[1], plane}), axis, v.batch_lead);
  }
}

}  // namespace nnp::core::onnx
