// nn.CosineSimilarity and nn.PairwiseDistance, called with (x1, x2): the
// functions of nnp/functional/distance.hpp.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// Both take two tensors.
struct Distance : nnp::nn::Module {
  using Module::Module;
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  type_name() + ": expects (x1, x2), got " + std::to_string(inputs.size()) + " tensors");
    return between(inputs[0], inputs[1]);
  }
  virtual Tensor between(const Tensor& x1, const Tensor& x2) = 0;
};

struct CosineSimilarity : Distance {
  F::CosineSimilarityFuncOptions options;
  explicit CosineSimilarity(const Attrs& a) : Distance("CosineSimilarity") {
    options.dim(a.integer("dim")).eps(a.real("eps"));
  }
  Tensor between(const Tensor& x1, const Tensor& x2) override { return F::cosine_similarity(x1, x2, options); }
};

struct PairwiseDistance : Distance {
  F::PairwiseDistanceFuncOptions options;
  explicit PairwiseDistance(const Attrs& a) : Distance("PairwiseDistance") {
    options.p(a.real("p")).eps(a.real("eps")).keepdim(a.boolean("keepdim"));
  }
  Tensor between(const Tensor& x1, const Tensor& x2) override { return F::pairwise_distance(x1, x2, options); }
};

void register_distance_layers(nnp_plugin_host* host) {
  add_builtin<CosineSimilarity>(host, "nn.CosineSimilarity", "cosine of the angle between x1 and x2 along dim",
                                {{"dim", NNP_ATTR_INT, false, "1", "dimension of the vectors"},
                                 {"eps", NNP_ATTR_FLOAT, false, "1e-08", "bound of the norms' product"}});
  add_builtin<PairwiseDistance>(host, "nn.PairwiseDistance", "p-norm of x1 - x2 along the last dimension",
                                {{"p", NNP_ATTR_FLOAT, false, "2.0", "the norm's degree"},
                                 {"eps", NNP_ATTR_FLOAT, false, "1e-06", "added to the difference"},
                                 {"keepdim", NNP_ATTR_BOOL, false, "false", "keep the reduced dimension"}});
}

}  // namespace nnp::library::layers
