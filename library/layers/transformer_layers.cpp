// nn.TransformerEncoderLayer, nn.TransformerDecoderLayer,
// nn.TransformerEncoder, nn.TransformerDecoder and nn.Transformer as
// PyTorch 1.13 defines them: the same children under the same names
// (self_attn, multihead_attn, linear1, dropout, linear2, norm1..3,
// dropout1..3; layers.N; encoder, decoder, norm), so state dicts load
// strictly; post-norm or norm_first; relu or gelu. The children are called
// as modules, so their hooks run as in PyTorch.
//
// Arguments, by position as PyTorch's forward takes them:
//   encoder layer / encoder: (src, src_mask, src_key_padding_mask)
//   decoder layer / decoder: (tgt, memory, tgt_mask, memory_mask,
//                             tgt_key_padding_mask, memory_key_padding_mask)
//   Transformer: (src, tgt, src_mask, tgt_mask, memory_mask,
//                 src_key_padding_mask, tgt_key_padding_mask,
//                 memory_key_padding_mask)
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::Value;
using nnp::nn::Attrs;
using nnp::nn::ModuleHandle;
namespace F = nnp::nn::functional;

namespace {

// What every encoder and decoder layer is made of.
struct LayerSettings {
  int64_t d_model, nhead, dim_feedforward;
  double dropout, layer_norm_eps;
  std::string activation;
  bool batch_first, norm_first;

  LayerSettings(const std::string& type, const Attrs& a)
      : d_model(a.integer("d_model")),
        nhead(a.integer("nhead")),
        dim_feedforward(a.integer("dim_feedforward")),
        dropout(a.real("dropout")),
        layer_norm_eps(a.real("layer_norm_eps")),
        activation(a.string("activation")),
        batch_first(a.boolean("batch_first")),
        norm_first(a.boolean("norm_first")) {
    if (activation != "relu" && activation != "gelu")
      throw Error(NNP_INVALID_ARGUMENT, type + ": activation should be relu/gelu, not " + activation);
    if (d_model <= 0 || nhead <= 0 || dim_feedforward <= 0)
      throw Error(NNP_INVALID_ARGUMENT, type + ": d_model, nhead and dim_feedforward must be greater than 0");
  }
  Attrs attrs() const {
    Attrs a;
    a.set("d_model", d_model).set("nhead", nhead).set("dim_feedforward", dim_feedforward).set("dropout", dropout);
    a.set("activation", activation).set("layer_norm_eps", layer_norm_eps).set("batch_first", batch_first);
    a.set("norm_first", norm_first);
    return a;
  }
  ModuleHandle norm() const {
    return nnp::nn::create_layer(
        "nn.LayerNorm", Attrs().set("normalized_shape", std::vector<int64_t>{d_model}).set("eps", layer_norm_eps));
  }
  ModuleHandle attention() const {
    return nnp::nn::create_layer("nn.MultiheadAttention", Attrs()
                                                              .set("embed_dim", d_model)
                                                              .set("num_heads", nhead)
                                                              .set("dropout", dropout)
                                                              .set("batch_first", batch_first));
  }
  ModuleHandle linear(int64_t in, int64_t out) const {
    return nnp::nn::create_layer("nn.Linear", Attrs().set("in_features", in).set("out_features", out));
  }
  ModuleHandle drop() const { return nnp::nn::create_layer("nn.Dropout", Attrs().set("p", dropout)); }
};

std::vector<AttrDecl> layer_attrs(const char* defaults_d_model = nullptr, const char* defaults_nhead = nullptr) {
  return {{"d_model", NNP_ATTR_INT, defaults_d_model == nullptr, defaults_d_model, "the model's features"},
          {"nhead", NNP_ATTR_INT, defaults_nhead == nullptr, defaults_nhead, "attention heads"},
          {"dim_feedforward", NNP_ATTR_INT, false, "2048", "width of the feed-forward block"},
          {"dropout", NNP_ATTR_FLOAT, false, "0.1", "dropout probability"},
          {"activation", NNP_ATTR_STRING, false, "\"relu\"", "the feed-forward block's activation: relu or gelu"},
          {"layer_norm_eps", NNP_ATTR_FLOAT, false, "1e-05", "the layer norms' eps"},
          {"batch_first", NNP_ATTR_BOOL, false, "false", "[N, L, E] rather than [L, N, E]"},
          {"norm_first", NNP_ATTR_BOOL, false, "false", "layer norm before attention and feed-forward (pre-norm)"}};
}

// The parts both layer kinds share: the feed-forward block and its norms.
struct TransformerLayerBase : nnp::nn::Module {
  LayerSettings settings;
  ModuleHandle self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3, dropout1, dropout2, dropout3;

  TransformerLayerBase(const char* name, const Attrs& a, bool decoder) : Module(name), settings(name, a) {
    self_attn = register_module("self_attn", settings.attention());
    if (decoder) multihead_attn = register_module("multihead_attn", settings.attention());
    linear1 = register_module("linear1", settings.linear(settings.d_model, settings.dim_feedforward));
    dropout = register_module("dropout", settings.drop());
    linear2 = register_module("linear2", settings.linear(settings.dim_feedforward, settings.d_model));
    norm1 = register_module("norm1", settings.norm());
    norm2 = register_module("norm2", settings.norm());
    if (decoder) norm3 = register_module("norm3", settings.norm());
    dropout1 = register_module("dropout1", settings.drop());
    dropout2 = register_module("dropout2", settings.drop());
    if (decoder) dropout3 = register_module("dropout3", settings.drop());
  }

  // Attention of x over memory (x itself for self-attention), then dropout.
  Tensor attention_block(ModuleHandle& attention, ModuleHandle& after, const Tensor& x, const Tensor& memory,
                         const Tensor& mask, const Tensor& key_padding_mask) {
    return after(attention.call_values({x, memory, memory, key_padding_mask, false, mask}).tensor(0));
  }
  Tensor feed_forward_block(ModuleHandle& after, const Tensor& x) {
    Tensor hidden = linear1(x);
    hidden = settings.activation == "gelu" ? hidden.gelu() : hidden.relu();
    return after(linear2(dropout(hidden)));
  }
};

}  // namespace

struct TransformerEncoderLayer : TransformerLayerBase {
  explicit TransformerEncoderLayer(const Attrs& a) : TransformerLayerBase("TransformerEncoderLayer", a, false) {}

  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const CallArgs call(type_name(), args, {"src", "src_mask", "src_key_padding_mask"}, 1);
    return {encode(call.tensor(0), call.tensor(1), call.tensor(2))};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
  Tensor encode(const Tensor& src, const Tensor& mask, const Tensor& key_padding_mask) {
    Tensor x = src;
    if (settings.norm_first) {
      Tensor normed = norm1(x);
      x = x + attention_block(self_attn, dropout1, normed, normed, mask, key_padding_mask);
      x = x + feed_forward_block(dropout2, norm2(x));
    } else {
      x = norm1(x + attention_block(self_attn, dropout1, x, x, mask, key_padding_mask));
      x = norm2(x + feed_forward_block(dropout2, x));
    }
    return x;
  }
};

struct TransformerDecoderLayer : TransformerLayerBase {
  explicit TransformerDecoderLayer(const Attrs& a) : TransformerLayerBase("TransformerDecoderLayer", a, true) {}

  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const CallArgs call(type_name(), args,
                        {"tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"},
                        2);
    return {decode(call.tensor(0), call.tensor(1), call.tensor(2), call.tensor(3), call.tensor(4), call.tensor(5))};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
  Tensor decode(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask, const Tensor& memory_mask,
                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask) {
    Tensor x = tgt;
    if (settings.norm_first) {
      Tensor normed = norm1(x);
      x = x + attention_block(self_attn, dropout1, normed, normed, tgt_mask, tgt_key_padding_mask);
      x = x + attention_block(multihead_attn, dropout2, norm2(x), memory, memory_mask, memory_key_padding_mask);
      x = x + feed_forward_block(dropout3, norm3(x));
    } else {
      x = norm1(x + attention_block(self_attn, dropout1, x, x, tgt_mask, tgt_key_padding_mask));
      x = norm2(x + attention_block(multihead_attn, dropout2, x, memory, memory_mask, memory_key_padding_mask));
      x = norm3(x + feed_forward_block(dropout3, x));
    }
    return x;
  }
};

namespace {

// TransformerEncoder and TransformerDecoder: num_layers copies of one layer
// (PyTorch deep-copies it, so every layer starts with the same weights),
// then an optional final LayerNorm.
struct TransformerStack : nnp::nn::Module {
  LayerSettings settings;
  int64_t num_layers;
  bool final_norm;
  ModuleHandle layers, norm;
  std::vector<ModuleHandle> each;

  TransformerStack(const char* name, const char* layer_type, const Attrs& a)
      : Module(name), settings(name, a), num_layers(a.integer("num_layers")), final_norm(a.boolean("norm")) {
    if (num_layers < 0) throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": num_layers must be >= 0");
    nnp::nn::ModuleList list;
    for (int64_t i = 0; i < num_layers; ++i) {
      ModuleHandle layer = nnp::nn::create_layer(layer_type, settings.attrs());
      if (i > 0) layer.load_state_dict(each[0].state_dict());
      list.push_back(layer);
      each.push_back(layer);
    }
    layers = register_module("layers", list);
    if (final_norm) norm = register_module("norm", settings.norm());
  }
  Tensor finish(const Tensor& x) { return final_norm ? norm(x) : x; }
};

}  // namespace

struct TransformerEncoder : TransformerStack {
  explicit TransformerEncoder(const Attrs& a)
      : TransformerStack("TransformerEncoder", "nn.TransformerEncoderLayer", a) {}
  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const CallArgs call(type_name(), args, {"src", "mask", "src_key_padding_mask"}, 1);
    Tensor x = call.tensor(0);
    for (ModuleHandle& layer : each) x = layer.call_values({x, call.tensor(1), call.tensor(2)}).tensor(0);
    return {finish(x)};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
};

struct TransformerDecoder : TransformerStack {
  explicit TransformerDecoder(const Attrs& a)
      : TransformerStack("TransformerDecoder", "nn.TransformerDecoderLayer", a) {}
  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const CallArgs call(type_name(), args,
                        {"tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"},
                        2);
    Tensor x = call.tensor(0);
    for (ModuleHandle& layer : each)
      x = layer.call_values({x, call.tensor(1), call.tensor(2), call.tensor(3), call.tensor(4), call.tensor(5)})
              .tensor(0);
    return {finish(x)};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
};

// The whole model of Attention Is All You Need: an encoder and a decoder,
// each ending in a LayerNorm; every weight matrix re-drawn Xavier-uniform.
struct Transformer : nnp::nn::Module {
  LayerSettings settings;
  ModuleHandle encoder, decoder;

  explicit Transformer(const Attrs& a) : Module("Transformer"), settings("Transformer", a) {
    auto stack = [&](const char* type, const char* layers) {
      return nnp::nn::create_layer(type,
                                   std::move(settings.attrs().set("num_layers", a.integer(layers)).set("norm", true)));
    };
    encoder = register_module("encoder", stack("nn.TransformerEncoder", "num_encoder_layers"));
    decoder = register_module("decoder", stack("nn.TransformerDecoder", "num_decoder_layers"));
    for (auto& [name, p] : named_parameters())
      if (p.ndim() > 1) nnp::nn::init::xavier_uniform_(p);
  }

  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const CallArgs call(type_name(), args,
                        {"src", "tgt", "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
                         "tgt_key_padding_mask", "memory_key_padding_mask"},
                        2);
    const Tensor src = call.tensor(0), tgt = call.tensor(1);
    const bool batched = src.ndim() == 3;
    const int32_t batch_dim = settings.batch_first ? 0 : 1;
    if (batched && (tgt.ndim() != 3 || src.size(batch_dim) != tgt.size(batch_dim)))
      throw Error(NNP_SHAPE_MISMATCH, "Transformer: the batch number of src and tgt must be equal, got " +
                                          shape_text(src.shape()) + " and " + shape_text(tgt.shape()));
    if (src.size(-1) != settings.d_model || tgt.size(-1) != settings.d_model)
      throw Error(NNP_SHAPE_MISMATCH, "Transformer: the feature number of src and tgt must be equal to d_model (" +
                                          std::to_string(settings.d_model) + "), got " + shape_text(src.shape()) +
                                          " and " + shape_text(tgt.shape()));
    Tensor memory = encoder.call_values({src, call.tensor(2), call.tensor(5)}).tensor(0);
    return {
        decoder.call_values({tgt, memory, call.tensor(3), call.tensor(4), call.tensor(6), call.tensor(7)}).tensor(0)};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
};

void register_transformer_layers(nnp_plugin_host* host) {
  add_builtin<TransformerEncoderLayer>(host, "nn.TransformerEncoderLayer",
                                       "self-attention and feed-forward blocks, each with a residual and a LayerNorm",
                                       layer_attrs());
  add_builtin<TransformerDecoderLayer>(
      host, "nn.TransformerDecoderLayer",
      "self-attention, attention over the memory and feed-forward blocks, each with a residual and a LayerNorm",
      layer_attrs());
  std::vector<AttrDecl> stack = layer_attrs();
  stack.push_back({"num_layers", NNP_ATTR_INT, true, nullptr, "layers stacked (copies of one layer)"});
  stack.push_back({"norm", NNP_ATTR_BOOL, false, "false", "a final LayerNorm(d_model)"});
  add_builtin<TransformerEncoder>(host, "nn.TransformerEncoder", "a stack of TransformerEncoderLayer", stack);
  add_builtin<TransformerDecoder>(host, "nn.TransformerDecoder", "a stack of TransformerDecoderLayer", stack);
  std::vector<AttrDecl> whole = layer_attrs("512", "8");
  whole.insert(whole.begin() + 2, {"num_encoder_layers", NNP_ATTR_INT, false, "6", "encoder layers"});
  whole.insert(whole.begin() + 3, {"num_decoder_layers", NNP_ATTR_INT, false, "6", "decoder layers"});
  add_builtin<Transformer>(host, "nn.Transformer", "an encoder-decoder Transformer (Vaswani et al., 2017)", whole);
}

}  // namespace nnp::library::layers
