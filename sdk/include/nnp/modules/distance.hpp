// nnp/modules/distance.hpp - typed CosineSimilarity and PairwiseDistance
// (libtorch's holders over the registry's nn.* layers), called with (x1, x2).
#pragma once

#include <nnp/functional/distance.hpp>
#include <nnp/module_holder.hpp>

namespace nnp::nn {

using CosineSimilarityOptions = functional::CosineSimilarityFuncOptions;
struct CosineSimilarityImpl : Layer {
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& o = {})
      : Layer("nn.CosineSimilarity", Attrs().set("dim", o.dim()).set("eps", o.eps())), options(o) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return call({x1, x2}); }
  CosineSimilarityOptions options;
};
NNP_MODULE(CosineSimilarity);

using PairwiseDistanceOptions = functional::PairwiseDistanceFuncOptions;
struct PairwiseDistanceImpl : Layer {
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& o = {})
      : Layer("nn.PairwiseDistance", Attrs().set("p", o.p()).set("eps", o.eps()).set("keepdim", o.keepdim())),
        options(o) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return call({x1, x2}); }
  PairwiseDistanceOptions options;
};
NNP_MODULE(PairwiseDistance);

}  // namespace nnp::nn
