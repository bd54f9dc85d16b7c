// Scaled dot-product attention through the backend's optional attention
// kernel (ABI 1.20): the scores, their softmax and the weighted sum of the
// values in one pass, the scores never written out, taken only where
// nothing needs the ops' history (graph mode's plans without gradients).
// Where it does not apply the caller runs the MatMul, Softmax and MatMul
// itself, which also gives every error its usual message.
#include <algorithm>
#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../onnx/trace.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

// Largest E and Ev the kernel takes (its per-row scratch).
constexpr int64_t kMaxWidth = 1024;

struct AttentionOp {
  const Tensor* in[4];  // q, k, v, and the mask when there is one
  int32_t count;
  double scale;
  Dims out_shape;
  dispatch::OpId id() const { return dispatch::OpId::ATTENTION; }
  dispatch::Inputs inputs() const { return {in, count}; }
  TensorRef compute() const;
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_attention(g, *in[0], *in[1], *in[2], count > 3 ? in[3] : nullptr, scale, *out);
  }
};

// A view's leading axes (all but the last two) merged into one, or false
// where its strides do not allow it (a transposed batch).
bool merge_leading(nnp_view& v) {
  const int32_t lead = v.ndim - 2;
  if (lead < 0) return false;
  int64_t size = 1, stride = 0;
  bool first = true;
  for (int32_t d = lead - 1; d >= 0; --d) {
    if (v.shape[d] == 1) continue;
    if (!first && v.strides[d] != stride * size) return false;
    if (first) stride = v.strides[d];
    first = false;
    size *= v.shape[d];
  }
  nnp_view merged = v;
  merged.ndim = 3;
  merged.shape[0] = size;
  merged.strides[0] = first ? 0 : stride;
  for (int32_t i = 0; i < 2; ++i) {
    merged.shape[1 + i] = v.shape[lead + i];
    merged.strides[1 + i] = v.strides[lead + i];
  }
  v = merged;
  return true;
}

// The output laid out in q's memory order (dense), as PyTorch's empty_like
// keeps a permuted input's layout. In a seq-first model (PyTorch's
// MultiheadAttention as exported) q is a [B*H, L, E] view of an [L, B*H, E]
// projection; an output laid out [L, B*H, Ev] is what the Transpose and
// Reshape that merge the heads after it read as a view, where a contiguous
// one had to be copied. Contiguous where q is, where its last axis is not
// its innermost, or where the order would not let the kernel merge the
// leading axes.
TensorRef output_in_order_of(const Tensor& q, const Dims& out_shape) {
  const int32_t rank = out_shape.ndim;
  int32_t order[NNP_MAX_DIMS];  // q's axes from outermost to innermost in memory
  for (int32_t i = 0; i < rank; ++i) order[i] = i;
  std::stable_sort(order, order + rank, [&](int32_t a, int32_t b) {
    const bool a_one = q.shape.d[a] == 1, b_one = q.shape.d[b] == 1;  // size-1 axes keep their place
    return !a_one && !b_one && q.strides.d[a] > q.strides.d[b];
  });
  bool identity = true;
  for (int32_t i = 0; i < rank; ++i) identity = identity && order[i] == i;
  if (identity || order[rank - 1] != rank - 1) return make_tensor_like(out_shape, NNP_F32, q);
  Dims stored = out_shape, strides = out_shape;
  for (int32_t i = 0; i < rank; ++i) stored.d[i] = out_shape.d[order[i]];
  int64_t step = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides.d[order[i]] = step;
    step *= stored.d[i];
  }
  TensorRef out = make_view(*make_tensor_like(stored, NNP_F32, q), out_shape, strides, 0);
  nnp_view check = kernel_view(*out);
  return merge_leading(check) ? out : make_tensor_like(out_shape, NNP_F32, q);
}

TensorRef AttentionOp::compute() const {
  const Tensor& q = *in[0];
  TensorRef out = output_in_order_of(q, out_shape);
  const int32_t rank = out_shape.ndim;
  Dims scores = out_shape;
  scores.d[rank - 1] = in[1]->shape.d[rank - 2];
  nnp_view views[5] = {kernel_view(q), kernel_view(*in[1]), kernel_view(*in[2]), {}, kernel_view(*out)};
  if (count > 3) views[3] = broadcast_view(*in[3], scores);
  for (int32_t i = 0; i < 5; ++i)
    if ((i != 3 || count > 3) && !merge_leading(views[i]))
      fail(NNP_INTERNAL, "attention: the leading axes of input ", i, " do not merge");
  run_kernel(q, "attention",
             q.backend().attention()(&kernel_ctx(q), &views[0], &views[1], &views[2], count > 3 ? &views[3] : nullptr,
                                     static_cast<float>(scale), &views[4]));
  return out;
}

}  // namespace

TensorRef attention_kernel(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, double scale) {
  if (!q.backend().attention() || !std::isfinite(scale)) return {};
  const int32_t rank = q.shape.ndim;
  if (rank < 2 || k.shape.ndim != rank || v.shape.ndim != rank || (mask && mask->shape.ndim > rank)) return {};
  for (const Tensor* t : {&q, &k, &v, mask})
    if (t && (t->dtype != NNP_F32 || !same_device(*t, q))) return {};
  for (int32_t d = 0; d < rank - 2; ++d)
    if (k.shape.d[d] != q.shape.d[d] || v.shape.d[d] != q.shape.d[d]) return {};
  const int64_t L = q.shape.d[rank - 2], E = q.shape.d[rank - 1], S = k.shape.d[rank - 2], Ev = v.shape.d[rank - 1];
  if (k.shape.d[rank - 1] != E || v.shape.d[rank - 2] != S || L < 1 || E < 1 || S < 1 || Ev < 1 || E > kMaxWidth ||
      Ev > kMaxWidth)
    return {};
  for (int32_t d = 0; d < rank - 2; ++d)
    if (q.shape.d[d] < 1) return {};
  if (mask)  // broadcasts to [..., L, S]
    for (int32_t i = 0; i < mask->shape.ndim; ++i) {
      const int64_t m = mask->shape.d[mask->shape.ndim - 1 - i];
      const int64_t want = i == 0 ? S : (i == 1 ? L : q.shape.d[rank - 1 - i]);
      if (m != 1 && m != want) return {};
    }
  if (autograd::grad_enabled())
    for (const Tensor* t : {&q, &k, &v, mask})
      if (t && autograd::requires_grad(*t)) return {};
  AttentionOp op{};
  op.in[0] = &q;
  op.in[1] = &k;
  op.in[2] = &v;
  op.count = 3;
  if (mask) op.in[op.count++] = mask;
  op.scale = scale;
  op.out_shape = q.shape;
  op.out_shape.d[rank - 1] = Ev;
  // Leading axes that cannot be one (a transposed batch) are the caller's.
  for (int32_t i = 0; i < op.count; ++i) {
    nnp_view view = i == 3 ? nnp_view{} : kernel_view(*op.in[i]);
    if (i == 3) {
      Dims scores = op.out_shape;
      scores.d[rank - 1] = S;
      view = broadcast_view(*mask, scores);
    }
    if (!merge_leading(view)) return {};
  }
  return dispatch::dispatch(op, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
