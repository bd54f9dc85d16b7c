// nn.MultiheadAttention as PyTorch 1.13 defines it: in_proj_weight (or
// q/k/v_proj_weight when kdim or vdim differ from embed_dim), in_proj_bias,
// bias_k and bias_v, and out_proj, a NonDynamicallyQuantizableLinear; the
// same initialisation; forward(query, key, value, key_padding_mask=None,
// need_weights=True, attn_mask=None, average_attn_weights=True) gives
// (attn_output, attn_output_weights or None). It calls
// F::multi_head_attention_forward.
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::Value;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct MultiheadAttention : nnp::nn::Module {
  int64_t embed_dim, num_heads, kdim, vdim;
  double dropout;
  bool batch_first, add_zero_attn, same_embed_dim;
  Tensor in_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias, bias_k, bias_v;
  nnp::nn::ModuleHandle out_proj;
  Tensor out_weight, out_bias;

  explicit MultiheadAttention(const Attrs& a)
      : Module("MultiheadAttention"),
        embed_dim(a.integer("embed_dim")),
        num_heads(a.integer("num_heads")),
        kdim(a.has("kdim") ? a.integer("kdim") : embed_dim),
        vdim(a.has("vdim") ? a.integer("vdim") : embed_dim),
        dropout(a.real("dropout")),
        batch_first(a.boolean("batch_first")),
        add_zero_attn(a.boolean("add_zero_attn")),
        same_embed_dim(kdim == embed_dim && vdim == embed_dim) {
    if (embed_dim <= 0 || num_heads <= 0)
      throw Error(NNP_INVALID_ARGUMENT, "MultiheadAttention: embed_dim and num_heads must be greater than 0, got " +
                                            std::to_string(embed_dim) + " and " + std::to_string(num_heads));
    if (embed_dim % num_heads != 0)
      throw Error(NNP_INVALID_ARGUMENT, "MultiheadAttention: embed_dim must be divisible by num_heads (" +
                                            std::to_string(embed_dim) + " and " + std::to_string(num_heads) + ")");
    if (kdim <= 0 || vdim <= 0) throw Error(NNP_INVALID_ARGUMENT, "MultiheadAttention: kdim and vdim must be > 0");
    if (!(dropout >= 0 && dropout <= 1))
      throw Error(NNP_INVALID_ARGUMENT,
                  "MultiheadAttention: dropout must be between 0 and 1, got " + nnp::nn::format_float(dropout));
    // PyTorch's registration order and _reset_parameters.
    if (same_embed_dim) {
      in_proj_weight = register_parameter("in_proj_weight", nnp::empty({3 * embed_dim, embed_dim}));
      nnp::nn::init::xavier_uniform_(in_proj_weight);
      for (const char* name : {"q_proj_weight", "k_proj_weight", "v_proj_weight"}) register_parameter(name, Tensor());
    } else {
      q_proj_weight = register_parameter("q_proj_weight", nnp::empty({embed_dim, embed_dim}));
      k_proj_weight = register_parameter("k_proj_weight", nnp::empty({embed_dim, kdim}));
      v_proj_weight = register_parameter("v_proj_weight", nnp::empty({embed_dim, vdim}));
      for (Tensor* w : {&q_proj_weight, &k_proj_weight, &v_proj_weight}) nnp::nn::init::xavier_uniform_(*w);
      register_parameter("in_proj_weight", Tensor());
    }
    const bool bias = a.boolean("bias");
    in_proj_bias = register_parameter("in_proj_bias", bias ? nnp::zeros({3 * embed_dim}) : Tensor());
    out_proj = register_module(
        "out_proj",
        nnp::nn::create_layer("nn.NonDynamicallyQuantizableLinear",
                              Attrs().set("in_features", embed_dim).set("out_features", embed_dim).set("bias", bias)));
    out_weight = out_proj.get_parameter("weight");
    if (bias) {
      out_bias = out_proj.get_parameter("bias");
      nnp::nn::init::zeros_(out_bias);
    }
    if (a.boolean("add_bias_kv")) {
      bias_k = register_parameter("bias_k", nnp::empty({1, 1, embed_dim}));
      bias_v = register_parameter("bias_v", nnp::empty({1, 1, embed_dim}));
      nnp::nn::init::xavier_normal_(bias_k);
      nnp::nn::init::xavier_normal_(bias_v);
    } else {
      register_parameter("bias_k", Tensor());
      register_parameter("bias_v", Tensor());
    }
  }

  // (attn_output, attn_output_weights or None)
  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const CallArgs call(
        type_name(), args,
        {"query", "key", "value", "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights"}, 3);
    auto [output, weights] = attend(call.tensor(0), call.tensor(1), call.tensor(2), call.tensor(3),
                                    call.boolean(4, true), call.tensor(5), call.boolean(6, true));
    return {output, weights};
  }
  // A call for one tensor gets attn_output alone, without the weights.
  Tensor forward(const std::vector<Tensor>& inputs) override {
    const CallArgs call(type_name(), tensor_args(inputs), {"query", "key", "value", "key_padding_mask"}, 3);
    return std::get<0>(attend(inputs[0], inputs[1], inputs[2], call.tensor(3), false, Tensor(), true));
  }

  std::tuple<Tensor, Tensor> attend(Tensor query, Tensor key, Tensor value, const Tensor& key_padding_mask,
                                    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) {
    const bool transpose = batch_first && query.ndim() == 3;
    if (transpose) {
      query = query.transpose(0, 1);
      key = key.transpose(0, 1);
      value = value.transpose(0, 1);
    }
    // Read as PyTorch reads self.out_proj.weight: a parametrized one is
    // computed now (out_proj itself is never called).
    const bool out_parametrized = nnp::api().is_parametrized(out_proj.handle(), nullptr) != 0;
    const Tensor out_w = out_parametrized ? out_proj.get_tensor("weight") : out_weight;
    const Tensor out_b = out_parametrized && out_bias.defined() ? out_proj.get_tensor("bias") : out_bias;
    auto result = F::multi_head_attention_forward(
        query, key, value,
        F::MultiheadAttentionForwardFuncOptions(embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                                                add_zero_attn, dropout, out_w, out_b)
            .training(is_training())
            .key_padding_mask(key_padding_mask)
            .need_weights(need_weights)
            .attn_mask(attn_mask)
            .use_separate_proj_weight(!same_embed_dim)
            .q_proj_weight(q_proj_weight)
            .k_proj_weight(k_proj_weight)
            .v_proj_weight(v_proj_weight)
            .average_attn_weights(average_attn_weights));
    if (transpose) std::get<0>(result) = std::get<0>(result).transpose(0, 1);
    return result;
  }
};

void register_attention_layers(nnp_plugin_host* host) {
  add_builtin<MultiheadAttention>(
      host, "nn.MultiheadAttention", "attention over num_heads subspaces (Attention Is All You Need)",
      {{"embed_dim", NNP_ATTR_INT, true, nullptr, "model dimension (the query's features)"},
       {"num_heads", NNP_ATTR_INT, true, nullptr, "parallel heads; embed_dim / num_heads features each"},
       {"dropout", NNP_ATTR_FLOAT, false, "0.0", "dropout on the attention weights while training"},
       {"bias", NNP_ATTR_BOOL, false, "true", "biases in the input and output projections"},
       {"add_bias_kv", NNP_ATTR_BOOL, false, "false", "a learnt bias appended to key and value"},
       {"add_zero_attn", NNP_ATTR_BOOL, false, "false", "a batch of zeros appended to key and value"},
       {"kdim", NNP_ATTR_INT, false, nullptr, "the key's features (default embed_dim)"},
       {"vdim", NNP_ATTR_INT, false, nullptr, "the value's features (default embed_dim)"},
       {"batch_first", NNP_ATTR_BOOL, false, "false", "inputs and output are [N, L, E] rather than [L, N, E]"}});
}

}  // namespace nnp::library::layers
