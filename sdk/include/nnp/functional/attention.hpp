// nnp/functional/attention.hpp - scaled_dot_product_attention and
// multi_head_attention_forward as functions (PyTorch's
// torch.nn.functional); nn.MultiheadAttention and the Transformer layers
// call these.
#pragma once

#include <cmath>
#include <limits>
#include <nnp/detail/format.hpp>
#include <nnp/functional/linear.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <tuple>

namespace nnp::nn::functional {

namespace detail {
using nnp::detail::shape_text;

// true where position (i, j) of an [L, S] score matrix may be attended:
// j <= i.
inline Tensor causal_allowed(int64_t target, int64_t source, const Device& device) {
  Tensor rows = arange(0, static_cast<double>(target), 1, Dtype::i64, device).unsqueeze(1);
  Tensor cols = arange(0, static_cast<double>(source), 1, Dtype::i64, device).unsqueeze(0);
  return cols.le(rows);
}
inline Tensor minus_infinity_like(const Tensor& t) { return t.scalar_like(-std::numeric_limits<double>::infinity()); }
}  // namespace detail

struct ScaledDotProductAttentionFuncOptions {
  // Boolean: true where attention is allowed; floating: added to the scores.
  NNP_ARG(Tensor, attn_mask);
  NNP_ARG(double, dropout_p) = 0.0;
  NNP_ARG(bool, is_causal) = false;
  NNP_ARG(std::optional<double>, scale);  // default 1 / sqrt(E)
};

// softmax(Q K^T * scale + mask) V over the last two dimensions: query
// [..., L, E], key [..., S, E], value [..., S, Ev] give [..., L, Ev]
// (PyTorch 2's scaled_dot_product_attention; dropout always applies when
// dropout_p > 0, as there).
inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const ScaledDotProductAttentionFuncOptions& options = {}) {
  if (query.ndim() < 2 || key.ndim() < 2 || value.ndim() < 2)
    throw Error(NNP_SHAPE_MISMATCH,
                "scaled_dot_product_attention: query, key and value need at least 2 dimensions, "
                "got " +
                    detail::shape_text(query.shape()) + ", " + detail::shape_text(key.shape()) + " and " +
                    detail::shape_text(value.shape()));
  if (query.size(-1) != key.size(-1) || key.size(-2) != value.size(-2))
    throw Error(NNP_SHAPE_MISMATCH, "scaled_dot_product_attention: query " + detail::shape_text(query.shape()) +
                                        ", key " + detail::shape_text(key.shape()) + " and value " +
                                        detail::shape_text(value.shape()) +
                                        " must share the embedding (query and key) and the source length (key and "
                                        "value)");
  const Tensor& mask = options.attn_mask();
  if (options.is_causal() && mask.defined())
    throw Error(NNP_INVALID_ARGUMENT,
                "scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True");
  const double scale = options.scale() ? *options.scale() : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  Tensor scores = query.matmul(key.transpose(-2, -1)) * scale;
  if (options.is_causal())
    scores = where(detail::causal_allowed(query.size(-2), key.size(-2), query.device()), scores,
                   detail::minus_infinity_like(scores));
  if (mask.defined())
    scores = mask.dtype() == Dtype::boolean ? where(mask, scores, detail::minus_infinity_like(scores))
                                            : scores + mask.to(scores.dtype());
  Tensor weights = scores.softmax(-1);
  if (options.dropout_p() > 0) weights = dropout(weights, DropoutFuncOptions().p(options.dropout_p()));
  return weights.matmul(value);
}

struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads, Tensor in_proj_weight,
                                       Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn,
                                       double dropout_p, Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  NNP_ARG(int64_t, embed_dim_to_check);
  NNP_ARG(int64_t, num_heads);
  NNP_ARG(Tensor, in_proj_weight);  // [3E, E], or undefined with use_separate_proj_weight
  NNP_ARG(Tensor, in_proj_bias);    // [3E] or undefined
  NNP_ARG(Tensor, bias_k);          // [1, 1, E] or undefined
  NNP_ARG(Tensor, bias_v);
  NNP_ARG(bool, add_zero_attn);
  NNP_ARG(double, dropout_p);
  NNP_ARG(Tensor, out_proj_weight);
  NNP_ARG(Tensor, out_proj_bias);
  NNP_ARG(bool, training) = true;
  // [N, S] (or [S] unbatched): true, or -inf when floating, masks a key out.
  NNP_ARG(Tensor, key_padding_mask);
  NNP_ARG(bool, need_weights) = true;
  // [L, S] or [N * num_heads, L, S]: true masks out; floating is added.
  NNP_ARG(Tensor, attn_mask);
  NNP_ARG(bool, use_separate_proj_weight) = false;
  NNP_ARG(Tensor, q_proj_weight);
  NNP_ARG(Tensor, k_proj_weight);
  NNP_ARG(Tensor, v_proj_weight);
  NNP_ARG(bool, average_attn_weights) = true;
};

// Multi-head attention over sequence-first inputs, as PyTorch's
// F.multi_head_attention_forward: query [L, N, E] (or [L, E]), key [S, N,
// kdim], value [S, N, vdim]. Gives (output [L, N, E], weights [N, L, S]
// averaged over heads, or [N, heads, L, S], or undefined without
// need_weights).
inline std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key,
                                                               const Tensor& value,
                                                               const MultiheadAttentionForwardFuncOptions& o) {
  const char* op = "multi_head_attention_forward";
  const bool batched = query.ndim() == 3;
  if ((query.ndim() != 2 && query.ndim() != 3) || key.ndim() != query.ndim() || value.ndim() != query.ndim())
    throw Error(NNP_SHAPE_MISMATCH, std::string(op) +
                                        ": query, key and value must all be 3-D (batched) or all 2-D (unbatched), "
                                        "got " +
                                        detail::shape_text(query.shape()) + ", " + detail::shape_text(key.shape()) +
                                        " and " + detail::shape_text(value.shape()));
  Tensor q = batched ? query : query.unsqueeze(1), k = batched ? key : key.unsqueeze(1),
         v = batched ? value : value.unsqueeze(1);
  Tensor padding = o.key_padding_mask(), mask = o.attn_mask();
  if (padding.defined() && !batched) padding = padding.unsqueeze(0);
  const int64_t target = q.size(0), batch = q.size(1), embed = q.size(2), heads = o.num_heads();
  if (embed != o.embed_dim_to_check())
    throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": was expecting embedding dimension of " +
                                        std::to_string(o.embed_dim_to_check()) + ", but got " + std::to_string(embed));
  if (heads <= 0 || embed % heads != 0)
    throw Error(NNP_INVALID_ARGUMENT, std::string(op) + ": embed_dim " + std::to_string(embed) +
                                          " not divisible by num_heads " + std::to_string(heads));
  if (k.size(0) != v.size(0) || k.size(1) != batch || v.size(1) != batch)
    throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": key " + detail::shape_text(key.shape()) + " and value " +
                                        detail::shape_text(value.shape()) +
                                        " must have the same source length and the query's batch size");
  const int64_t head_dim = embed / heads;

  // In-projection.
  auto project = [&](const Tensor& x, int64_t i, const Tensor& separate) {
    Tensor b = o.in_proj_bias().defined() ? o.in_proj_bias().narrow(0, i * embed, embed) : Tensor();
    Tensor w = o.use_separate_proj_weight() ? separate : o.in_proj_weight().narrow(0, i * embed, embed);
    if (!w.defined())
      throw Error(NNP_INVALID_ARGUMENT, std::string(op) +
                                            ": no projection weight (in_proj_weight, or q/k/v_proj_weight "
                                            "with use_separate_proj_weight)");
    return linear(x, w, b);
  };
  q = project(q, 0, o.q_proj_weight());
  k = project(k, 1, o.k_proj_weight());
  v = project(v, 2, o.v_proj_weight());

  // Masks as PyTorch 1.13 shapes them: attn_mask to [1 or N*heads, L, S].
  if (mask.defined()) {
    if (mask.ndim() == 2) {
      if (mask.shape() != Shape{target, k.size(0)})
        throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": the shape of the 2D attn_mask is " +
                                            detail::shape_text(mask.shape()) + ", but should be " +
                                            detail::shape_text({target, k.size(0)}));
      mask = mask.unsqueeze(0);
    } else if (mask.ndim() == 3) {
      if (mask.shape() != Shape{batch * heads, target, k.size(0)})
        throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": the shape of the 3D attn_mask is " +
                                            detail::shape_text(mask.shape()) + ", but should be " +
                                            detail::shape_text({batch * heads, target, k.size(0)}));
    } else {
      throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": attn_mask's dimension " + std::to_string(mask.ndim()) +
                                          " is not supported (2 or 3)");
    }
  }
  auto pad_last = [](const Tensor& m) {  // one more source position, never masked
    Shape shape = m.shape();
    shape.back() = 1;
    return cat({m, zeros(shape, m.dtype(), m.device())}, -1);
  };
  if (o.bias_k().defined() != o.bias_v().defined())
    throw Error(NNP_INVALID_ARGUMENT, std::string(op) + ": give both bias_k and bias_v, or neither");
  if (o.bias_k().defined()) {
    k = cat({k, o.bias_k().expand({1, batch, embed})}, 0);
    v = cat({v, o.bias_v().expand({1, batch, embed})}, 0);
    if (mask.defined()) mask = pad_last(mask);
    if (padding.defined()) padding = pad_last(padding);
  }
  // [L, N, E] -> [N * heads, L, head_dim]
  auto split_heads = [&](const Tensor& x) { return x.reshape({x.size(0), batch * heads, head_dim}).transpose(0, 1); };
  q = split_heads(q);
  k = split_heads(k);
  v = split_heads(v);
  if (o.add_zero_attn()) {
    k = cat({k, zeros({batch * heads, 1, head_dim}, k.dtype(), k.device())}, 1);
    v = cat({v, zeros({batch * heads, 1, head_dim}, v.dtype(), v.device())}, 1);
    if (mask.defined()) mask = pad_last(mask);
    if (padding.defined()) padding = pad_last(padding);
  }
  const int64_t source = k.size(1);

  // One additive float mask of [1 or N*heads, L, S].
  Tensor additive;
  if (mask.defined())
    additive = mask.dtype() == Dtype::boolean
                   ? where(mask, detail::minus_infinity_like(q), zeros({}, q.dtype(), q.device()))
                   : mask.to(q.dtype());
  if (padding.defined()) {
    if (padding.shape() != Shape{batch, source})
      throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": expecting key_padding_mask shape of " +
                                          detail::shape_text({batch, source}) + ", but got " +
                                          detail::shape_text(padding.shape()));
    Tensor pad_scores = padding.dtype() == Dtype::boolean
                            ? where(padding, detail::minus_infinity_like(q), zeros({}, q.dtype(), q.device()))
                            : padding.to(q.dtype());
    pad_scores =
        pad_scores.reshape({batch, 1, 1, source}).expand({batch, heads, 1, source}).reshape({batch * heads, 1, source});
    additive = additive.defined() ? additive + pad_scores : pad_scores;
  }

  Tensor scores = (q * (1.0 / std::sqrt(static_cast<double>(head_dim)))).matmul(k.transpose(1, 2));
  if (additive.defined()) scores = scores + additive;
  Tensor weights = scores.softmax(-1);
  if (o.dropout_p() > 0 && o.training())
    weights = dropout(weights, DropoutFuncOptions().p(o.dropout_p()).training(true));
  Tensor out = weights.matmul(v).transpose(0, 1).reshape({target * batch, embed});
  out = linear(out, o.out_proj_weight(), o.out_proj_bias()).reshape({target, batch, embed});
  if (!batched) out = out.squeeze(1);
  if (!o.need_weights()) return {out, Tensor()};
  weights = weights.reshape({batch, heads, target, source});
  if (o.average_attn_weights()) weights = weights.mean({1});
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace nnp::nn::functional
