// Tracing for ONNX export: while an export runs on a thread, the outermost
// op of each call (and each call of a layer that has an ONNX lowering) is
// written into the graph. Off, every probe is one relaxed atomic load.
#pragma once

#include <nnp/nnp.h>

#include <atomic>
#include <vector>

#include "../tensor.hpp"

struct nnp_onnx_graph;
struct nnp_list;
struct nnp_module;

namespace nnp::core::onnx {

extern std::atomic<int32_t> g_traces;  // exports running in the process
inline bool tracing() { return __builtin_expect(g_traces.load(std::memory_order_relaxed) != 0, 0); }

// Makes graph the calling thread's trace for the scope's lifetime.
class TraceSession {
 public:
  explicit TraceSession(nnp_onnx_graph& graph);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;
};

// One op call, entered and left by the dispatcher's tracer layer: returns
// the graph when the call is the outermost of the thread's trace (the one to
// write), nullptr otherwise.
// The opset of the export running on this thread, 0 when none runs.
int64_t traced_opset();
nnp_onnx_graph* enter_op();
void leave_op();

// One module call: when the module's layer has a lowering (its own, the
// core's, or a vendor-domain node), the ops of its forward are not recorded
// and finish() writes the lowering instead.
class ModuleScope {
 public:
  ModuleScope(nnp_module& m, const nnp_list& args) {
    if (tracing()) enter(m, args);
  }
  ~ModuleScope();
  void finish(const nnp_list& outputs);
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  void enter(nnp_module& m, const nnp_list& args);
  nnp_onnx_graph* graph_ = nullptr;
  nnp_module* module_ = nullptr;
  std::vector<TensorRef> inputs_;
  int kind_ = 0;  // how the call is written (trace.cpp)
  bool done_ = false;
};

// The ops' ONNX forms (trace_ops.cpp); out is the op's result.
void record_unary(nnp_onnx_graph& g, nnp_unary_op op, const Tensor& x, const Tensor& out);
void record_binary(nnp_onnx_graph& g, nnp_binary_op op, const Tensor& a, const Tensor& b, const Tensor& out);
// The steps of a fused elementwise chain, one node each (the single-node
// unary ops, Add, Sub, Mul, Div).
void record_elementwise_chain(nnp_onnx_graph& g, const std::vector<const Tensor*>& inputs,
                              const std::vector<nnp_elementwise_step>& steps, const Tensor& out);
void record_where(nnp_onnx_graph& g, const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
void record_reduce(nnp_onnx_graph& g, nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims,
                   bool keepdim, double correction, const Tensor& out);
void record_softmax(nnp_onnx_graph& g, const Tensor& x, int64_t dim, bool log, const Tensor& out);
// Mul by the scale, Transpose of k, MatMul, Add of the mask, Softmax, MatMul:
// the nodes graph mode fused into one attention.
void record_attention(nnp_onnx_graph& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                      double scale, const Tensor& out);
void record_gemm_epilogue(nnp_onnx_graph& g, const Tensor& x, const Tensor& w, const Tensor* bias, int32_t activation,
                          const Tensor& out);
void record_layer_norm(nnp_onnx_graph& g, const Tensor& x, const Tensor* weight, const Tensor* bias,
                       int32_t normalized_ndim, double eps, const Tensor& out);
// Add, then LayerNormalization over the last axis: the residual sum graph
// mode fused with its normalization.
void record_add_layer_norm(nnp_onnx_graph& g, const Tensor& a, const Tensor& b, const Tensor* weight,
                           const Tensor* bias, double eps, const Tensor& out);
void record_matmul(nnp_onnx_graph& g, const Tensor& a, const Tensor& b, const Tensor& out);
// view, reshape, squeeze, unsqueeze: the result's shape says it all.
void record_reshape(nnp_onnx_graph& g, const Tensor& x, const Tensor& out);
void record_permute(nnp_onnx_graph& g, const Tensor& x, const std::vector<int32_t>& perm, const Tensor& out);
void record_slice(nnp_onnx_graph& g, const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step,
                  const Tensor& out);
void record_expand(nnp_onnx_graph& g, const Tensor& x, const Tensor& out);
// contiguous, clone, detach, to(): an Identity (a Cast when the dtype changes).
void record_copy(nnp_onnx_graph& g, const Tensor& x, const Tensor& out);
void record_cat(nnp_onnx_graph& g, const Tensor* const* tensors, int32_t count, int64_t dim, const Tensor& out);
void record_index_select(nnp_onnx_graph& g, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out);
void record_gather(nnp_onnx_graph& g, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out);
void record_scatter_add(nnp_onnx_graph& g, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                        const Tensor& out);
void record_conv2d(nnp_onnx_graph& g, const Tensor& x, const Tensor& w, const Tensor* bias, const nnp_conv2d_params& p,
                   const Tensor& out);
// The Conv (and Relu) and, where pool[0] > 0, a MaxPool of pool-sized
// windows: the nodes graph mode fused into one packed convolution.
void record_conv2d_pooled(nnp_onnx_graph& g, const Tensor& x, const Tensor& w, const Tensor* bias,
                          const nnp_conv2d_params& p, const int64_t (&pool)[2], const Tensor& out);
// A static int8 layer's own node (nn.quantized.Conv2d or Linear with its
// tensors, as its call writes it) and, where pool[0] > 0, the MaxPool after
// it: what graph mode fused into one packed int8 convolution.
// ONNX's DynamicQuantizeLinear (ABI 1.29's kernel): y, its scale and zero point.
void record_dynamic_quantize_linear(nnp_onnx_graph& g, const Tensor& x, const Tensor& y, const Tensor& scale,
                                    const Tensor& zero);
// ONNX's ConvInteger (a packed integer convolution, ABI 1.29).
void record_conv_integer(nnp_onnx_graph& g, const Tensor& x, const Tensor* x_zero, const Tensor& w,
                         const Tensor* w_zero, const nnp_conv2d_params& p, const Tensor& out);
void record_quantized_layer_pooled(nnp_onnx_graph& g, const Tensor& x, nnp_module& layer, const int64_t (&pool)[2],
                                   const Tensor& out);
// indices (may be null): PyTorch's, within each [H, W] plane.
void record_max_pool2d(nnp_onnx_graph& g, const Tensor& x, const nnp_pool2d_params& p, const Tensor& out,
                       const Tensor* indices);
// An op with no ONNX form here: refuses the export naming it.
[[noreturn]] void refuse_op(const char* op);

}  // namespace nnp::core::onnx
