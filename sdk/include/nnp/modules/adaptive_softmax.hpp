// nnp/modules/adaptive_softmax.hpp - typed AdaptiveLogSoftmaxWithLoss
// (libtorch's holder over the registry's nn.AdaptiveLogSoftmaxWithLoss):
// forward(input, target) gives ASMoutput {output, loss}; log_prob(input)
// every class's log-probability; predict(input) the most likely class.
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnp::nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  NNP_ARG(int64_t, in_features);
  NNP_ARG(int64_t, n_classes);
  NNP_ARG(std::vector<int64_t>, cutoffs);
  NNP_ARG(double, div_value) = 4.0;
  NNP_ARG(bool, head_bias) = false;
};

// Each target's log-probability, and the mean of their negatives.
struct ASMoutput {
  Tensor output;
  Tensor loss;
};

struct AdaptiveLogSoftmaxWithLossImpl : Layer {
  explicit AdaptiveLogSoftmaxWithLossImpl(const AdaptiveLogSoftmaxWithLossOptions& o)
      : Layer("nn.AdaptiveLogSoftmaxWithLoss", std::move(Attrs()
                                                             .set("in_features", o.in_features())
                                                             .set("n_classes", o.n_classes())
                                                             .set("cutoffs", o.cutoffs())
                                                             .set("div_value", o.div_value())
                                                             .set("head_bias", o.head_bias()))),
        options(o) {}
  ASMoutput forward(const Tensor& input, const Tensor& target) {
    Outputs out = call_values({input, target});
    return {out.tensor(0), out.tensor(1)};
  }
  // [N, n_classes] (or [n_classes] for one sample): the shortlist's
  // log-probabilities from the head, each cluster's from its tail plus the
  // head's log-probability of the cluster.
  Tensor log_prob(const Tensor& input) {
    const bool batched = input.ndim() == 2;
    const Tensor x = batched ? input : input.unsqueeze(0);
    const int64_t shortlist = options.cutoffs().front();
    const Tensor head = get_submodule("head")(x).log_softmax(1);
    std::vector<Tensor> parts{head.slice(1, 0, shortlist)};
    for (size_t i = 0; i < options.cutoffs().size(); ++i) {
      const int64_t cluster = shortlist + static_cast<int64_t>(i);
      parts.push_back(get_submodule("tail." + std::to_string(i))(x).log_softmax(1) +
                      head.slice(1, cluster, cluster + 1));
    }
    const Tensor all = cat(parts, 1);
    return batched ? all : all.squeeze(0);
  }
  // The class of highest probability per sample (PyTorch's predict).
  Tensor predict(const Tensor& input) { return log_prob(input).argmax(input.ndim() == 2 ? 1 : 0); }
  AdaptiveLogSoftmaxWithLossOptions options;
};
NNP_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace nnp::nn
