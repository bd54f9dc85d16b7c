// nnp/modules/transformer.hpp - typed MultiheadAttention,
// TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder,
// TransformerDecoder and Transformer (libtorch's holders over the
// registry's nn.* layers), called as libtorch's are:
//
//   nnp::nn::TransformerEncoderLayer layer(
//       nnp::nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(512).batch_first(true));
//   nnp::Tensor y = layer(x, mask);
//   auto [out, weights] = mha(q, k, v);
#pragma once

#include <cmath>
#include <limits>
#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <string>
#include <tuple>

namespace nnp::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  NNP_ARG(int64_t, embed_dim);
  NNP_ARG(int64_t, num_heads);
  NNP_ARG(double, dropout) = 0.0;
  NNP_ARG(bool, bias) = true;
  NNP_ARG(bool, add_bias_kv) = false;
  NNP_ARG(bool, add_zero_attn) = false;
  NNP_ARG(std::optional<int64_t>, kdim);  // default embed_dim
  NNP_ARG(std::optional<int64_t>, vdim);
  NNP_ARG(bool, batch_first) = false;
};
struct MultiheadAttentionImpl : Layer {
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
      : Layer("nn.MultiheadAttention", attrs_of(o)),
        options(o),
        in_proj_weight(tensor_named("in_proj_weight")),
        in_proj_bias(tensor_named("in_proj_bias")),
        bias_k(tensor_named("bias_k")),
        bias_v(tensor_named("bias_v")),
        q_proj_weight(tensor_named("q_proj_weight")),
        k_proj_weight(tensor_named("k_proj_weight")),
        v_proj_weight(tensor_named("v_proj_weight")) {}
  // (attn_output, attn_output_weights); the weights are undefined without need_weights.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true) {
    Outputs out = call_values({query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights});
    return {out.tensor(0), out[1].isTensor() ? out.tensor(1) : Tensor()};
  }
  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v, q_proj_weight, k_proj_weight, v_proj_weight;

 private:
  static Attrs attrs_of(const MultiheadAttentionOptions& o) {
    Attrs a;
    a.set("embed_dim", o.embed_dim()).set("num_heads", o.num_heads()).set("dropout", o.dropout());
    a.set("bias", o.bias()).set("add_bias_kv", o.add_bias_kv()).set("add_zero_attn", o.add_zero_attn());
    a.set("batch_first", o.batch_first());
    if (o.kdim()) a.set("kdim", *o.kdim());
    if (o.vdim()) a.set("vdim", *o.vdim());
    return a;
  }
};
NNP_MODULE(MultiheadAttention);

// What an encoder or decoder layer is made of.
struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  NNP_ARG(int64_t, d_model);
  NNP_ARG(int64_t, nhead);
  NNP_ARG(int64_t, dim_feedforward) = 2048;
  NNP_ARG(double, dropout) = 0.1;
  NNP_ARG(std::string, activation) = kReLU;  // kReLU or kGELU
  NNP_ARG(double, layer_norm_eps) = 1e-5;
  NNP_ARG(bool, batch_first) = false;
  NNP_ARG(bool, norm_first) = false;
};
namespace detail {
inline Attrs layer_attrs(const TransformerLayerOptions& o) {
  Attrs a;
  a.set("d_model", o.d_model()).set("nhead", o.nhead()).set("dim_feedforward", o.dim_feedforward());
  a.set("dropout", o.dropout()).set("activation", o.activation()).set("layer_norm_eps", o.layer_norm_eps());
  a.set("batch_first", o.batch_first()).set("norm_first", o.norm_first());
  return a;
}
}  // namespace detail
using TransformerEncoderLayerOptions = TransformerLayerOptions;
using TransformerDecoderLayerOptions = TransformerLayerOptions;

struct TransformerEncoderLayerImpl : Layer {
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o)
      : Layer("nn.TransformerEncoderLayer", detail::layer_attrs(o)), options(o) {}
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {}) {
    return call_values({src, src_mask, src_key_padding_mask});
  }
  TransformerEncoderLayerOptions options;
};
NNP_MODULE(TransformerEncoderLayer);

struct TransformerDecoderLayerImpl : Layer {
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o)
      : Layer("nn.TransformerDecoderLayer", detail::layer_attrs(o)), options(o) {}
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {}) {
    return call_values({tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask});
  }
  TransformerDecoderLayerOptions options;
};
NNP_MODULE(TransformerDecoderLayer);

// num_layers copies of one layer, then a LayerNorm(d_model) with norm(true).
struct TransformerStackOptions {
  TransformerStackOptions(TransformerLayerOptions layer, int64_t num_layers)
      : layer_(std::move(layer)), num_layers_(num_layers) {}
  NNP_ARG(TransformerLayerOptions, layer);
  NNP_ARG(int64_t, num_layers);
  NNP_ARG(bool, norm) = false;
};
namespace detail {
inline Attrs stack_attrs(const TransformerStackOptions& o) {
  return std::move(layer_attrs(o.layer()).set("num_layers", o.num_layers()).set("norm", o.norm()));
}
}  // namespace detail
using TransformerEncoderOptions = TransformerStackOptions;
using TransformerDecoderOptions = TransformerStackOptions;

struct TransformerEncoderImpl : Layer {
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& o)
      : Layer("nn.TransformerEncoder", detail::stack_attrs(o)), options(o) {}
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {}) {
    return call_values({src, src_mask, src_key_padding_mask});
  }
  TransformerEncoderOptions options;
};
NNP_MODULE(TransformerEncoder);

struct TransformerDecoderImpl : Layer {
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& o)
      : Layer("nn.TransformerDecoder", detail::stack_attrs(o)), options(o) {}
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {}) {
    return call_values({tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask});
  }
  TransformerDecoderOptions options;
};
NNP_MODULE(TransformerDecoder);

struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8, int64_t num_encoder_layers = 6,
                     int64_t num_decoder_layers = 6)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  NNP_ARG(int64_t, d_model);
  NNP_ARG(int64_t, nhead);
  NNP_ARG(int64_t, num_encoder_layers);
  NNP_ARG(int64_t, num_decoder_layers);
  NNP_ARG(int64_t, dim_feedforward) = 2048;
  NNP_ARG(double, dropout) = 0.1;
  NNP_ARG(std::string, activation) = kReLU;
  NNP_ARG(double, layer_norm_eps) = 1e-5;
  NNP_ARG(bool, batch_first) = false;
  NNP_ARG(bool, norm_first) = false;
};
struct TransformerImpl : Layer {
  explicit TransformerImpl(const TransformerOptions& o = {}) : Layer("nn.Transformer", attrs_of(o)), options(o) {}
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {}) {
    return call_values({src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
                        memory_key_padding_mask});
  }
  // [sz, sz]: 0 on and below the diagonal, -inf above (a causal mask).
  static Tensor generate_square_subsequent_mask(int64_t sz, Dtype dtype = Dtype::f32,
                                                const Device& device = Device::cpu()) {
    Tensor rows = arange(0, static_cast<double>(sz), 1, Dtype::i64, device).unsqueeze(1);
    Tensor cols = arange(0, static_cast<double>(sz), 1, Dtype::i64, device).unsqueeze(0);
    return where(cols.gt(rows), full({}, -std::numeric_limits<double>::infinity(), dtype, device),
                 zeros({}, dtype, device));
  }
  TransformerOptions options;

 private:
  static Attrs attrs_of(const TransformerOptions& o) {
    Attrs a = detail::layer_attrs(TransformerLayerOptions(o.d_model(), o.nhead())
                                      .dim_feedforward(o.dim_feedforward())
                                      .dropout(o.dropout())
                                      .activation(o.activation())
                                      .layer_norm_eps(o.layer_norm_eps())
                                      .batch_first(o.batch_first())
                                      .norm_first(o.norm_first()));
    a.set("num_encoder_layers", o.num_encoder_layers()).set("num_decoder_layers", o.num_decoder_layers());
    return a;
  }
};
NNP_MODULE(Transformer);

}  // namespace nnp::nn
