// nn.AdaptiveLogSoftmaxWithLoss as PyTorch 1.13 defines it (Grave et al.'s
// efficient softmax approximation): a head Linear over the shortlist
// classes and one entry per cluster, and per cluster a tail Sequential of
// two bias-free Linears (in_features -> in_features // div_value^(i+1) ->
// cluster size), so state dicts load strictly (head.weight,
// tail.0.0.weight, tail.0.1.weight, ...). forward(input, target) gives
// (output, loss): each target's log-probability and the mean negative of
// them. The holder adds log_prob and predict.
#include <algorithm>
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
using nnp::nn::ModuleHandle;

namespace {

std::vector<int64_t> checked_cutoffs(const Attrs& a, int64_t n_classes) {
  std::vector<int64_t> cutoffs = a.integers("cutoffs");
  bool ok = !cutoffs.empty();
  for (size_t i = 0; ok && i < cutoffs.size(); ++i)
    ok = cutoffs[i] > 0 && cutoffs[i] <= n_classes - 1 && (i == 0 || cutoffs[i] > cutoffs[i - 1]);
  if (!ok)
    throw Error(NNP_INVALID_ARGUMENT,
                "AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1");
  cutoffs.push_back(n_classes);
  return cutoffs;
}

}  // namespace

struct AdaptiveLogSoftmaxWithLoss : nnp::nn::Module {
  int64_t in_features, n_classes;
  std::vector<int64_t> cutoffs;  // the given ones and n_classes
  double div_value;
  bool head_bias;
  int64_t shortlist_size, n_clusters;
  ModuleHandle head, tail;
  std::vector<ModuleHandle> clusters;

  explicit AdaptiveLogSoftmaxWithLoss(const Attrs& a)
      : Module("AdaptiveLogSoftmaxWithLoss"),
        in_features(a.integer("in_features")),
        n_classes(a.integer("n_classes")),
        cutoffs(checked_cutoffs(a, n_classes)),
        div_value(a.real("div_value")),
        head_bias(a.boolean("head_bias")),
        shortlist_size(cutoffs[0]),
        n_clusters(static_cast<int64_t>(cutoffs.size()) - 1) {
    if (in_features < 1) throw Error(NNP_INVALID_ARGUMENT, "AdaptiveLogSoftmaxWithLoss: in_features must be >= 1");
    if (!(div_value > 0)) throw Error(NNP_INVALID_ARGUMENT, "AdaptiveLogSoftmaxWithLoss: div_value must be > 0");
    head = register_module("head", linear(in_features, shortlist_size + n_clusters, head_bias));
    nnp::nn::ModuleList list;
    for (int64_t i = 0; i < n_clusters; ++i) {
      // Python's in_features // div_value ** (i + 1), a floored float.
      const int64_t hidden = static_cast<int64_t>(
          std::floor(static_cast<double>(in_features) / std::pow(div_value, static_cast<double>(i + 1))));
      const int64_t size = cutoffs[static_cast<size_t>(i) + 1] - cutoffs[static_cast<size_t>(i)];
      nnp::nn::Sequential projection{linear(in_features, hidden, false), linear(hidden, size, false)};
      list.push_back(projection);
      clusters.push_back(projection);
    }
    tail = register_module("tail", list);
  }
  static ModuleHandle linear(int64_t in, int64_t out, bool bias) {
    return nnp::nn::create_layer("nn.Linear",
                                 Attrs().set("in_features", in).set("out_features", out).set("bias", bias));
  }

  std::vector<nnp::Value> forward_values(const std::vector<nnp::Value>& args) override {
    const CallArgs call(type_name(), args, {"input", "target"}, 2);
    const Tensor input_ = call.tensor(0), target_ = call.tensor(1);
    const bool batched = target_.ndim() == 1;
    if (target_.ndim() == 1) {
      if (input_.ndim() != 2)
        throw Error(NNP_SHAPE_MISMATCH, type_name() +
                                            ": 1D target tensor expects 2D input tensors, but found inputs "
                                            "with size " +
                                            shape_text(input_.shape()));
      if (input_.size(0) != target_.size(0))
        throw Error(NNP_SHAPE_MISMATCH,
                    type_name() + ": Input and target should have the same size in the batch dimension.");
    } else if (target_.ndim() == 0) {
      if (input_.ndim() != 1)
        throw Error(NNP_SHAPE_MISMATCH, type_name() +
                                            ": 0D target tensor expects 1D input tensors, but found inputs "
                                            "with size " +
                                            shape_text(input_.shape()));
    } else {
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": 0D or 1D target tensor expected, multi-target not supported");
    }
    if (is_floating(target_.dtype()))
      throw Error(NNP_DTYPE_MISMATCH, type_name() + ": target must hold class indices (an integer tensor)");
    const Tensor input = batched ? input_ : input_.unsqueeze(0);
    const std::vector<int64_t> target =
        (batched ? target_ : target_.unsqueeze(0)).to(nnp::Dtype::i64).to(nnp::Device::cpu()).to_vector<int64_t>();
    const int64_t batch = static_cast<int64_t>(target.size());
    if (input.size(input.ndim() - 1) != in_features)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected " + std::to_string(in_features) +
                                          " input features, got " + shape_text(input_.shape()));

    // Rows by cluster (0: the shortlist), each row's column of the head.
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(n_clusters) + 1), relative(rows.size());
    std::vector<int64_t> head_column(static_cast<size_t>(batch));
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t t = target[static_cast<size_t>(r)];
      if (t < 0 || t >= n_classes) {
        const auto [lo, hi] = std::minmax_element(target.begin(), target.end());
        throw Error(NNP_INVALID_ARGUMENT, type_name() + ": Target values should be in [0, " +
                                              std::to_string(n_classes - 1) + "], but values in range [" +
                                              std::to_string(*lo) + ", " + std::to_string(*hi) + "] were found.");
      }
      const size_t cluster =
          static_cast<size_t>(std::upper_bound(cutoffs.begin(), cutoffs.end(), t) - cutoffs.begin());  // 0: shortlist
      rows[cluster].push_back(r);
      relative[cluster].push_back(cluster == 0 ? t : t - cutoffs[cluster - 1]);
      head_column[static_cast<size_t>(r)] = cluster == 0 ? t : shortlist_size + static_cast<int64_t>(cluster) - 1;
    }
    // Each tail row's log-probability within its cluster, put back in row
    // order (shortlist rows add nothing there).
    std::vector<Tensor> parts{nnp::zeros({static_cast<int64_t>(rows[0].size())}, input.dtype(), input.device())};
    std::vector<int64_t> order = rows[0];
    for (size_t c = 1; c < rows.size(); ++c) {
      if (rows[c].empty()) continue;
      const Tensor subset = input.index_select(0, nnp::from_vector(rows[c], input.device()));
      const Tensor logprob = clusters[c - 1](subset).log_softmax(1);
      const Tensor within =
          nnp::from_vector(relative[c], {static_cast<int64_t>(relative[c].size()), 1}, input.device());
      parts.push_back(logprob.gather(1, within).squeeze(1));
      order.insert(order.end(), rows[c].begin(), rows[c].end());
    }
    std::vector<int64_t> position(static_cast<size_t>(batch));
    for (size_t k = 0; k < order.size(); ++k) position[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
    const Tensor tail_part = nnp::cat(parts, 0).index_select(0, nnp::from_vector(position, input.device()));
    const Tensor head_logprob = head(input).log_softmax(1);
    const Tensor columns = nnp::from_vector(head_column, {batch, 1}, input.device());
    const Tensor output = tail_part + head_logprob.gather(1, columns).squeeze(1);
    const Tensor loss = output.neg().mean();
    return {batched ? output : output.squeeze(0), loss};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
};

void register_adaptive_softmax_layers(nnp_plugin_host* host) {
  add_builtin<AdaptiveLogSoftmaxWithLoss>(
      host, "nn.AdaptiveLogSoftmaxWithLoss",
      "efficient softmax over many classes: a head and per-cluster tails; (input, target) -> (output, loss)",
      {{"in_features", NNP_ATTR_INT, true, nullptr, "features of the input"},
       {"n_classes", NNP_ATTR_INT, true, nullptr, "number of classes"},
       {"cutoffs", NNP_ATTR_INTS, true, nullptr, "increasing class indices where clusters start"},
       {"div_value", NNP_ATTR_FLOAT, false, "4.0", "each cluster's hidden size shrinks by this factor"},
       {"head_bias", NNP_ATTR_BOOL, false, "false", "the head Linear has a bias"}});
}

}  // namespace nnp::library::layers
