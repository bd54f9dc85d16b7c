// A matrix product with its bias and activation through the backend's
// optional gemm_epilogue kernel (ABI 1.18): x [..., K] @ w [K, N] + bias [N],
// then ReLU, in one call where the composed path makes three tensors (the
// product, the sum, the activation). Taken only where nothing needs the
// ops' history (graph mode's plans fuse MatMul, Add and Relu into it).
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

// x [..., K] @ w [K, N] + bias, then the activation: from w itself
// (gemm_epilogue), or from w packed once by the backend (ABI 1.21's
// gemm_packed; w is still what an ONNX export writes).
struct GemmEpilogueOp {
  const Tensor* in[3];  // x, the packed w or w itself, bias (or null)
  const Tensor& w;
  bool packed;
  int32_t activation;
  dispatch::OpId id() const { return packed ? dispatch::OpId::GEMM_PACKED : dispatch::OpId::GEMM_EPILOGUE; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    const int64_t k = w.shape[0], n = w.shape[1], m = x.numel / k;
    // The kernel sees x as [M, K]: its leading dimensions as one.
    TensorRef xc = contiguous(x), bc = in[2] ? contiguous(*in[2]) : TensorRef();
    Dims out_shape = x.shape;
    out_shape.d[out_shape.ndim - 1] = n;
    TensorRef out = make_tensor_like(out_shape, NNP_F32, x);
    nnp_view va = kernel_view(*xc), vw = kernel_view(*in[1]), vo = kernel_view(*out), vb{};
    va.ndim = vo.ndim = 2;
    va.shape[0] = vo.shape[0] = m;
    va.shape[1] = k;
    va.strides[0] = k;
    va.strides[1] = vo.strides[1] = 1;
    vo.shape[1] = n;
    vo.strides[0] = n;
    if (bc) vb = kernel_view(*bc);
    const nnp_view* bias = bc ? &vb : nullptr;
    const BackendRecord& backend = x.backend();
    if (packed)
      run_kernel(x, "gemm_packed", backend.gemm_packed()(&kernel_ctx(x), &va, &vw, bias, activation, &vo));
    else
      run_kernel(x, "gemm_epilogue", backend.gemm_epilogue()(&kernel_ctx(x), &va, &vw, bias, activation, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_gemm_epilogue(g, *in[0], w, in[2], activation, *out);
  }
};

bool on_device_of(const Tensor& t, const Tensor& x) {
  return t.dtype == NNP_F32 && t.device.backend == x.device.backend && t.device.index == x.device.index;
}

// Shapes, dtypes and devices the fused product takes, and no history wanted.
bool gemm_epilogue_applies(const Tensor& x, const Tensor& w, const Tensor* bias, int32_t activation) {
  if (activation != NNP_ACTIVATION_NONE && activation != NNP_ACTIVATION_RELU) return false;
  if (x.dtype != NNP_F32 || !on_device_of(w, x) || (bias && !on_device_of(*bias, x))) return false;
  if (x.shape.ndim < 2 || w.shape.ndim != 2 || x.shape.d[x.shape.ndim - 1] != w.shape[0]) return false;
  if (bias && (bias->shape.ndim != 1 || bias->shape[0] != w.shape[1])) return false;
  if (x.numel == 0 || w.numel == 0) return false;
  return !autograd::should_record({&x, &w, bias});
}

}  // namespace

TensorRef gemm_epilogue_kernel(const Tensor& x, const Tensor& w, const Tensor* bias, int32_t activation) {
  if (!x.backend().gemm_epilogue() || !gemm_epilogue_applies(x, w, bias, activation)) return {};
  return dispatch::dispatch(GemmEpilogueOp{{&x, &w, bias}, w, false, activation}, dispatch::Face::PUBLIC);
}

TensorRef gemm_pack_weight(const Tensor& w) {
  if (!w.backend().gemm_pack() || w.dtype != NNP_F32 || w.shape.ndim != 2 || w.numel == 0) return {};
  const nnp_view vw = kernel_view(w);
  return packed_by_backend(w, "gemm_pack", [&](const nnp_view* packed, int64_t* bytes) {
    return w.backend().gemm_pack()(&kernel_ctx(w), &vw, packed, bytes);
  });
}

TensorRef gemm_packed_kernel(const Tensor& x, const Tensor& w, const Tensor& packed, const Tensor* bias,
                             int32_t activation) {
  if (!x.backend().gemm_packed() || packed.dtype != NNP_U8 || !same_device(x, packed)) return {};
  if (!gemm_epilogue_applies(x, w, bias, activation)) return {};
  return dispatch::dispatch(GemmEpilogueOp{{&x, &packed, bias}, w, true, activation}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
