// nnp/modules/loss.hpp - typed MSELoss, L1Loss, CrossEntropyLoss, NLLLoss,
// BCELoss and BCEWithLogitsLoss (libtorch's holders over the registry's
// nn.* layers); forward(input, target).
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <string>

namespace nnp::nn {

// A loss whose only option is its reduction.
#define NNP_REDUCTION_LOSS(Name)                                                                \
  struct Name##Options {                                                                        \
    Name##Options() = default;                                                                  \
    Name##Options(const char* reduction) : reduction_(reduction) {}            /* NOLINT */     \
    Name##Options(std::string reduction) : reduction_(std::move(reduction)) {} /* NOLINT */     \
    NNP_ARG(std::string, reduction) = kMean;                                                    \
  };                                                                                            \
  struct Name##Impl : Layer {                                                                   \
    explicit Name##Impl(const Name##Options& o = {})                                            \
        : Layer("nn." #Name, Attrs().set("reduction", o.reduction())), options(o) {}            \
    Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); } \
    Name##Options options;                                                                      \
  };                                                                                            \
  NNP_MODULE(Name)

NNP_REDUCTION_LOSS(MSELoss);
NNP_REDUCTION_LOSS(L1Loss);
NNP_REDUCTION_LOSS(BCELoss);
NNP_REDUCTION_LOSS(BCEWithLogitsLoss);
#undef NNP_REDUCTION_LOSS

struct CrossEntropyLossOptions {
  NNP_ARG(int64_t, ignore_index) = -100;
  NNP_ARG(std::string, reduction) = kMean;
  NNP_ARG(double, label_smoothing) = 0.0;
};
struct CrossEntropyLossImpl : Layer {
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& o = {})
      : Layer("nn.CrossEntropyLoss", Attrs()
                                         .set("ignore_index", o.ignore_index())
                                         .set("reduction", o.reduction())
                                         .set("label_smoothing", o.label_smoothing())),
        options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  CrossEntropyLossOptions options;
};
NNP_MODULE(CrossEntropyLoss);

struct NLLLossOptions {
  NNP_ARG(int64_t, ignore_index) = -100;
  NNP_ARG(std::string, reduction) = kMean;
};
struct NLLLossImpl : Layer {
  explicit NLLLossImpl(const NLLLossOptions& o = {})
      : Layer("nn.NLLLoss", Attrs().set("ignore_index", o.ignore_index()).set("reduction", o.reduction())),
        options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  NLLLossOptions options;
};
NNP_MODULE(NLLLoss);

}  // namespace nnp::nn
