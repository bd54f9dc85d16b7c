// nn.Embedding and nn.EmbeddingBag (padding_idx, max_norm, norm_type,
// scale_grad_by_freq; EmbeddingBag's sum, mean and max over bags given by
// rows or offsets, per-sample weights): the functions of
// nnp/functional/{linear,embedding_bag}.hpp with PyTorch's initialisation
// (N(0, 1), the padding row zeroed) and reprs.
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::Value;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// What Embedding and EmbeddingBag share: the table and how rows are read.
struct EmbeddingTable : nnp::nn::Module {
  int64_t count, dim;
  std::optional<int64_t> padding_idx;
  std::optional<double> max_norm;
  double norm_type;
  bool scale_grad_by_freq, sparse;
  Tensor weight;
  EmbeddingTable(const char* name, const Attrs& a)
      : Module(name),
        count(a.integer("num_embeddings")),
        dim(a.integer("embedding_dim")),
        norm_type(a.real("norm_type")),
        scale_grad_by_freq(a.boolean("scale_grad_by_freq")),
        sparse(a.boolean("sparse")) {
    if (count < 1 || dim < 0)
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": num_embeddings must be >= 1 and embedding_dim >= 0");
    if (a.has("padding_idx")) padding_idx = F::detail::padding_row(name, a.integer("padding_idx"), count);
    if (a.has("max_norm")) max_norm = a.real("max_norm");
    if (sparse)
      throw Error(NNP_UNIMPLEMENTED, std::string(name) + ": sparse gradients are not supported; use sparse=false");
    weight = register_parameter("weight", nnp::empty({count, dim}));
    nnp::nn::init::normal_(weight);
    if (padding_idx) {
      NoGradGuard no_grad;
      weight.slice(0, *padding_idx, *padding_idx + 1).copy_(weight.scalar_like(0));
    }
  }
  // PyTorch's extra_repr from max_norm to scale_grad_by_freq.
  std::string norms_text() const {
    std::string text;
    if (max_norm) text += ", max_norm=" + nnp::nn::format_float(*max_norm);
    if (norm_type != 2) text += ", norm_type=" + nnp::nn::format_float(norm_type);
    if (scale_grad_by_freq) text += ", scale_grad_by_freq=True";
    return text;
  }
};

struct Embedding : EmbeddingTable {
  explicit Embedding(const Attrs& a) : EmbeddingTable("Embedding", a) {}
  Tensor forward(const Tensor& indices) override {
    return F::embedding(indices, weight,
                        F::EmbeddingFuncOptions()
                            .padding_idx(padding_idx)
                            .max_norm(max_norm)
                            .norm_type(norm_type)
                            .scale_grad_by_freq(scale_grad_by_freq));
  }
  std::string extra_repr() const override {
    std::string text = std::to_string(count) + ", " + std::to_string(dim);
    if (padding_idx) text += ", padding_idx=" + std::to_string(*padding_idx);
    return text + norms_text();
  }
};

// forward(input, offsets=None, per_sample_weights=None).
struct EmbeddingBag : EmbeddingTable {
  std::string mode;
  bool include_last_offset;
  explicit EmbeddingBag(const Attrs& a)
      : EmbeddingTable("EmbeddingBag", a),
        mode(a.string("mode")),
        include_last_offset(a.boolean("include_last_offset")) {
    if (mode != nnp::kSum && mode != nnp::kMean && mode != F::kMax)
      throw Error(NNP_INVALID_ARGUMENT, "EmbeddingBag: mode has to be one of sum, mean or max, got '" + mode + "'");
  }
  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    return {bag(CallArgs(type_name(), args, {"input", "offsets", "per_sample_weights"}, 1))};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return bag(CallArgs(type_name(), tensor_args(inputs), {"input", "offsets", "per_sample_weights"}, 1));
  }
  Tensor bag(const CallArgs& call) {
    return F::embedding_bag(call.tensor(0), weight,
                            F::EmbeddingBagFuncOptions()
                                .offsets(call.tensor(1))
                                .per_sample_weights(call.tensor(2))
                                .mode(mode)
                                .include_last_offset(include_last_offset)
                                .padding_idx(padding_idx)
                                .max_norm(max_norm)
                                .norm_type(norm_type)
                                .scale_grad_by_freq(scale_grad_by_freq));
  }
  std::string extra_repr() const override {
    std::string text = std::to_string(count) + ", " + std::to_string(dim) + norms_text() + ", mode=" + mode;
    if (padding_idx) text += ", padding_idx=" + std::to_string(*padding_idx);
    return text;
  }
};

void register_embedding_layers(nnp_plugin_host* host) {
  const std::vector<AttrDecl> table{
      {"num_embeddings", NNP_ATTR_INT, true, nullptr, "size of the table"},
      {"embedding_dim", NNP_ATTR_INT, true, nullptr, "size of each vector"},
      {"padding_idx", NNP_ATTR_INT, false, nullptr, "an index whose vector stays zero and gets no gradient"},
      {"max_norm", NNP_ATTR_FLOAT, false, nullptr, "rows looked up are renormalised to at most this norm"},
      {"norm_type", NNP_ATTR_FLOAT, false, "2.0", "p of the norm for max_norm"},
      {"scale_grad_by_freq", NNP_ATTR_BOOL, false, "false", "divide gradients by the index's batch frequency"},
      {"sparse", NNP_ATTR_BOOL, false, "false", "sparse gradients (not supported)"}};
  add_builtin<Embedding>(host, "nn.Embedding", "a lookup table of num_embeddings vectors", table);
  std::vector<AttrDecl> bag = table;
  bag.push_back({"mode", NNP_ATTR_STRING, false, "\"mean\"", "'sum', 'mean' or 'max' over each bag"});
  bag.push_back({"include_last_offset", NNP_ATTR_BOOL, false, "false", "offsets ends with the end of the last bag"});
  add_builtin<EmbeddingBag>(host, "nn.EmbeddingBag", "sums, means or maxima of bags of embeddings", bag);
}

}  // namespace nnp::library::layers
