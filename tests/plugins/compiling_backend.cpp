// Backends that compile graphs (issue 45, nnp_backend 1.24's capability,
// compile, execute and release), written as an outside vendor would, on the
// SDK alone. Built twice (NNP_COMPILER):
//   1 claimant    claims only MatMul, Gemm, Add and Relu (and Identity; f32, the shapes
//                 its loops handle) and has no kernels at all: every eager
//                 op, and every node it does not claim, runs on cpu
//   2 wholegraph  claims every node it can run (those, Conv, MaxPool,
//                 Flatten, Reshape), so a model of only those compiles into
//                 one executable run in one call; its kernels are the
//                 reference backend's
//   3 boaster     claimant's, but claims every node (its compile refuses
//                 what it cannot run): the core must say so, naming it
//   4 halfcompiler  three of the four slots: refused at registration
// Both keep device memory the core may not read directly (no
// NNP_BACKEND_HOST_MEMORY). An executable is the subgraph's nodes and value
// shapes; execute interprets it over buffers of its own.
#include <nnp/host_backend.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "../../backends/reference/reference_kernels.hpp"  // wholegraph's kernels
#include "test_backend_memory.hpp"

#ifndef NNP_COMPILER
#error "NNP_COMPILER must be set"
#endif

namespace {

const nnp_api* g_api = nullptr;

nnp_status fail(const std::string& message) {
  g_api->set_error(NNP_INVALID_ARGUMENT, message.c_str());
  return NNP_INVALID_ARGUMENT;
}

int64_t int_attr(const nnp_attrs* attrs, const char* name, int64_t fallback) {
  int64_t v = fallback;
  if (g_api->attrs_has(attrs, name)) g_api->attrs_get_int(attrs, name, &v);
  return v;
}
double float_attr(const nnp_attrs* attrs, const char* name, double fallback) {
  double v = fallback;
  if (g_api->attrs_has(attrs, name)) g_api->attrs_get_float(attrs, name, &v);
  return v;
}
std::vector<int64_t> ints_attr(const nnp_attrs* attrs, const char* name, std::vector<int64_t> fallback) {
  int32_t count = 0;
  if (!g_api->attrs_has(attrs, name) || g_api->attrs_get_ints(attrs, name, nullptr, 0, &count) != NNP_OK)
    return fallback;
  std::vector<int64_t> v(static_cast<size_t>(count));
  g_api->attrs_get_ints(attrs, name, v.data(), count, &count);
  return v;
}

struct Value {
  std::vector<int64_t> shape;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct Node {
  std::string op;
  std::vector<int32_t> in, out;
  // Gemm: alpha, beta, transA, transB; Conv and MaxPool: their geometry.
  double alpha = 1, beta = 1;
  bool trans_a = false, trans_b = false;
  std::vector<int64_t> kernel, strides, pads, dilations;
};

struct Executable {
  std::vector<Value> values;  // by the graph's value index
  std::vector<Node> nodes;
  std::vector<int32_t> inputs, outputs;
};

// What this backend's loops run: f32 throughout, and for each op the shapes
// its loop handles (anything else is left to cpu, as an honest claim must).
bool runs(const nnp_graph& g, const nnp_graph_node& n) {
  const std::string op = n.op_type;
  if (*n.domain != '\0' || n.n_outputs != 1 || n.outputs[0] < 0) return false;
  for (int32_t i = 0; i < n.n_inputs; ++i)
    if (n.inputs[i] >= 0 && g.values[n.inputs[i]].dtype != NNP_F32 && !(op == "Reshape" && i == 1)) return false;
  if (g.values[n.outputs[0]].dtype != NNP_F32) return false;
  auto rank = [&](int32_t i) { return n.inputs[i] < 0 ? -1 : g.values[n.inputs[i]].ndim; };
  auto dim = [&](int32_t i, int32_t d) { return g.values[n.inputs[i]].shape[d]; };
  if (op == "Relu" || op == "Identity") return n.n_inputs == 1;
  if (op == "MatMul") return n.n_inputs == 2 && rank(0) == 2 && rank(1) == 2;
  if (op == "Gemm") {
    if ((n.n_inputs != 2 && n.n_inputs != 3) || rank(0) != 2 || rank(1) != 2) return false;
    if (n.n_inputs == 2 || n.inputs[2] < 0) return true;
    const nnp_graph_value& c = g.values[n.inputs[2]];
    const nnp_graph_value& y = g.values[n.outputs[0]];
    int64_t count = 1;
    for (int32_t d = 0; d < c.ndim; ++d) count *= c.shape[d];
    const bool row = c.ndim >= 1 && c.shape[c.ndim - 1] == y.shape[1] && count == y.shape[1];
    const bool whole = c.ndim == 2 && c.shape[0] == y.shape[0] && c.shape[1] == y.shape[1];
    return count == 1 || row || whole;  // the bias forms its loop reads
  }
  if (op == "Add") {
    if (n.n_inputs != 2) return false;
    const nnp_graph_value& a = g.values[n.inputs[0]];
    const nnp_graph_value& b = g.values[n.inputs[1]];
    int64_t na = 1, nb = 1;
    for (int32_t d = 0; d < a.ndim; ++d) na *= a.shape[d];
    for (int32_t d = 0; d < b.ndim; ++d) nb *= b.shape[d];
    const bool same = a.ndim == b.ndim && std::equal(a.shape, a.shape + a.ndim, b.shape);
    const bool row = a.ndim >= 1 && b.ndim == 1 && b.shape[0] == a.shape[a.ndim - 1];
    return same || row || (nb == 1 && b.ndim <= a.ndim);
  }
#if NNP_COMPILER == 2
  if (op == "Conv")
    return (n.n_inputs == 2 || n.n_inputs == 3) && rank(0) == 4 && rank(1) == 4 && int_attr(n.attrs, "group", 1) == 1 &&
           !g_api->attrs_has(n.attrs, "auto_pad") && dim(0, 1) == dim(1, 1);
  if (op == "MaxPool")
    return n.n_inputs == 1 && rank(0) == 4 && int_attr(n.attrs, "ceil_mode", 0) == 0 &&
           !g_api->attrs_has(n.attrs, "auto_pad") &&
           ints_attr(n.attrs, "dilations", {1, 1}) == std::vector<int64_t>{1, 1} &&
           ints_attr(n.attrs, "kernel_shape", {}).size() == 2;
  if (op == "Flatten") return n.n_inputs == 1;
  if (op == "Reshape") return n.n_inputs == 2;  // the data keeps its order: only the shape changes
#else
  (void)dim;
#endif
  return false;
}

nnp_status capability(void*, int32_t, const nnp_graph* graph, uint8_t* claimed) {
  for (int32_t i = 0; i < graph->n_nodes; ++i) claimed[i] = runs(*graph, graph->nodes[i]) ? 1 : 0;
  return NNP_OK;
}

nnp_status compile(void*, int32_t, const nnp_graph* graph, void** out) {
  auto exe = new Executable;
  exe->values.resize(static_cast<size_t>(graph->n_values));
  for (int32_t v = 0; v < graph->n_values; ++v)
    exe->values[v].shape.assign(graph->values[v].shape, graph->values[v].shape + graph->values[v].ndim);
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    const nnp_graph_node& g = graph->nodes[i];
    if (!runs(*graph, g)) {
      delete exe;
      return fail(std::string("compile: asked to run a ") + g.op_type + " node it did not claim");
    }
    Node n;
    n.op = g.op_type;
    n.in.assign(g.inputs, g.inputs + g.n_inputs);
    n.out.assign(g.outputs, g.outputs + g.n_outputs);
    n.alpha = float_attr(g.attrs, "alpha", 1);
    n.beta = float_attr(g.attrs, "beta", 1);
    n.trans_a = int_attr(g.attrs, "transA", 0) != 0;
    n.trans_b = int_attr(g.attrs, "transB", 0) != 0;
    if (n.op == "Conv") n.kernel = {exe->values[n.in[1]].shape[2], exe->values[n.in[1]].shape[3]};
    if (n.op == "MaxPool") n.kernel = ints_attr(g.attrs, "kernel_shape", {});
    n.strides = ints_attr(g.attrs, "strides", {1, 1});
    n.pads = ints_attr(g.attrs, "pads", {0, 0, 0, 0});
    n.dilations = ints_attr(g.attrs, "dilations", {1, 1});
    exe->nodes.push_back(std::move(n));
  }
  exe->inputs.assign(graph->inputs, graph->inputs + graph->n_inputs);
  exe->outputs.assign(graph->outputs, graph->outputs + graph->n_outputs);
  *out = exe;
  return NNP_OK;
}

using Buffers = std::map<int32_t, std::vector<float>>;

void run_node(const Executable& e, const Node& n, Buffers& b) {
  const std::vector<int64_t>& os = e.values[n.out[0]].shape;
  std::vector<float>& out = b[n.out[0]];
  out.assign(static_cast<size_t>(e.values[n.out[0]].numel()), 0.0f);
  const std::vector<float>& x = b[n.in[0]];
  if (n.op == "Relu") {
    for (size_t i = 0; i < out.size(); ++i) out[i] = x[i] > 0 || std::isnan(x[i]) ? x[i] : 0.0f;  // NaN stays
  } else if (n.op == "Add") {
    const std::vector<float>& y = b[n.in[1]];
    for (size_t i = 0; i < out.size(); ++i) out[i] = x[i] + y[y.size() == out.size() ? i : i % y.size()];
  } else if (n.op == "MatMul" || n.op == "Gemm") {
    const std::vector<int64_t>& as = e.values[n.in[0]].shape;
    const std::vector<int64_t>& bs = e.values[n.in[1]].shape;
    const std::vector<float>& w = b[n.in[1]];
    const int64_t m = os[0], cols = os[1], k = n.trans_a ? as[0] : as[1];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(x[n.trans_a ? p * as[1] + i : i * as[1] + p]) * w[n.trans_b ? j * bs[1] + p : p * bs[1] + j];
        double v = n.op == "Gemm" ? n.alpha * acc : acc;
        if (n.op == "Gemm" && n.in.size() == 3 && n.in[2] >= 0) {
          const std::vector<float>& c = b[n.in[2]];
          v += n.beta * c[c.size() == 1 ? 0 : c.size() == size_t(cols) ? j : i * cols + j];
        }
        out[i * cols + j] = float(v);
      }
  } else if (n.op == "Conv" || n.op == "MaxPool") {
    const std::vector<int64_t>& xs = e.values[n.in[0]].shape;
    const bool conv = n.op == "Conv";
    const std::vector<float>* w = conv ? &b[n.in[1]] : nullptr;
    const std::vector<float>* bias = conv && n.in.size() == 3 && n.in[2] >= 0 ? &b[n.in[2]] : nullptr;
    const int64_t channels_in = xs[1];
    for (int64_t nb = 0; nb < os[0]; ++nb)
      for (int64_t c = 0; c < os[1]; ++c)
        for (int64_t oy = 0; oy < os[2]; ++oy)
          for (int64_t ox = 0; ox < os[3]; ++ox) {
            double acc = conv ? (bias ? (*bias)[c] : 0.0) : -std::numeric_limits<double>::infinity();
            for (int64_t ci = conv ? 0 : c; ci < (conv ? channels_in : c + 1); ++ci)
              for (int64_t ky = 0; ky < n.kernel[0]; ++ky)
                for (int64_t kx = 0; kx < n.kernel[1]; ++kx) {
                  const int64_t iy = oy * n.strides[0] - n.pads[0] + ky * n.dilations[0];
                  const int64_t ix = ox * n.strides[1] - n.pads[1] + kx * n.dilations[1];
                  if (iy < 0 || ix < 0 || iy >= xs[2] || ix >= xs[3]) continue;
                  const float v = x[((nb * xs[1] + ci) * xs[2] + iy) * xs[3] + ix];
                  if (conv)
                    acc += double(v) * (*w)[((c * channels_in + ci) * n.kernel[0] + ky) * n.kernel[1] + kx];
                  else
                    acc = std::isnan(acc) || v > acc || std::isnan(v) ? (std::isnan(acc) ? acc : double(v)) : acc;
                }
            out[((nb * os[1] + c) * os[2] + oy) * os[3] + ox] = float(acc);
          }
  } else {  // Identity, Flatten, Reshape: the same elements in the same order
    std::copy(x.begin(), x.end(), out.begin());
  }
}

nnp_status execute(void*, int32_t, void* executable, const nnp_view* inputs, int32_t n_inputs, const nnp_view* outputs,
                   int32_t n_outputs) {
  const auto& e = *static_cast<const Executable*>(executable);
  if (n_inputs != static_cast<int32_t>(e.inputs.size()) || n_outputs != static_cast<int32_t>(e.outputs.size()))
    return fail("execute: given other inputs or outputs than compiled");
  Buffers b;
  for (int32_t i = 0; i < n_inputs; ++i) {
    const int64_t count = e.values[e.inputs[i]].numel();
    std::vector<float>& v = b[e.inputs[i]];
    if (inputs[i].dtype == NNP_F32) {
      v.assign(static_cast<const float*>(inputs[i].data), static_cast<const float*>(inputs[i].data) + count);
    } else {  // Reshape's shape: read by compile already, not needed here
      v.clear();
    }
  }
  for (const Node& n : e.nodes) run_node(e, n, b);
  for (int32_t i = 0; i < n_outputs; ++i) {
    const std::vector<float>& v = b[e.outputs[i]];
    std::memcpy(outputs[i].data, v.data(), v.size() * sizeof(float));
  }
  return NNP_OK;
}

void release(void*, int32_t, void* executable) { delete static_cast<Executable*>(executable); }

nnp_kernels g_kernels;

// A backend whose claims are not honest: it claims every node, and its
// compile refuses those it cannot run.
[[maybe_unused]] nnp_status claims_everything(void*, int32_t, const nnp_graph* graph, uint8_t* claimed) {
  for (int32_t i = 0; i < graph->n_nodes; ++i) claimed[i] = 1;
  return NNP_OK;
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static nnp_backend backend;
#if NNP_COMPILER != 2
  g_kernels.struct_size = NNP_KERNELS_SIZE_1_0;  // every required slot NULL, and declared so
  nnp_host_backend_init(&backend,
                        NNP_COMPILER == 1   ? "claimant"
                        : NNP_COMPILER == 3 ? "boaster"
                                            : "halfcompiler",
                        1, &g_kernels);
  backend.missing_kernels = NNP_KERNEL_SLOT_BIT(NNP_KERNEL_REQUIRED_COUNT) - 1;
  nnp::test_backend::use_host_heap(backend, "claims MatMul, Gemm, Add and Relu; cpu runs everything else (tests only)");
#else
  nnp::reference::g_api = api;
  g_kernels = *nnp::reference::kernel_table();
  nnp_host_backend_init(&backend, "wholegraph", 1, &g_kernels);
  nnp::test_backend::use_host_heap(backend, "compiles whole graphs into one call; reference kernels (tests only)");
#endif
  backend.flags = 0;  // its memory is the device's: the core copies, never reads it in place
  backend.dtypes = NNP_DTYPES_1_7;
  backend.unary_ops = NNP_UNARY_OPS_1_7;
  backend.capability = NNP_COMPILER == 3 ? claims_everything : capability;
  backend.compile = compile;
  backend.execute = execute;
  backend.release = NNP_COMPILER == 4 ? nullptr : release;  // 4: three of the four slots, refused
  return api->register_backend(host, &backend);
}

}  // namespace

NNP_PLUGIN(NNP_COMPILER == 1   ? "test.claimant"
           : NNP_COMPILER == 2 ? "test.wholegraph"
           : NNP_COMPILER == 3 ? "test.boaster"
                               : "test.halfcompiler",
           "0", "a backend that compiles graphs (tests only)", init)
