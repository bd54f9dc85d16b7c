// nnp/modules/upsampling.hpp - typed Upsample, UpsamplingNearest2d and
// UpsamplingBilinear2d (libtorch's holders over the registry's layers).
#pragma once

#include <nnp/functional/upsampling.hpp>
#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <optional>
#include <vector>

namespace nnp::nn {

struct UpsampleOptions {
  NNP_ARG(std::optional<std::vector<int64_t>>, size);
  NNP_ARG(std::optional<double>, scale_factor);  // one factor for every dimension
  NNP_ARG(std::string, mode) = functional::kNearest;
  NNP_ARG(std::optional<bool>, align_corners);
  NNP_ARG(std::optional<bool>, recompute_scale_factor);
};

namespace detail {
inline Attrs upsample_attrs(const UpsampleOptions& o, bool with_mode) {
  Attrs a;
  if (o.size()) a.set("size", *o.size());
  if (o.scale_factor()) a.set("scale_factor", *o.scale_factor());
  if (!with_mode) return a;
  a.set("mode", o.mode());
  if (o.align_corners()) a.set("align_corners", *o.align_corners());
  if (o.recompute_scale_factor()) a.set("recompute_scale_factor", *o.recompute_scale_factor());
  return a;
}
}  // namespace detail

struct UpsampleImpl : Layer {
  explicit UpsampleImpl(const UpsampleOptions& o = {})
      : Layer("nn.Upsample", detail::upsample_attrs(o, true)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  UpsampleOptions options;
};
NNP_MODULE(Upsample);

// Size or scale factor only: the mode is nearest, or bilinear with aligned corners.
struct UpsamplingNearest2dImpl : Layer {
  explicit UpsamplingNearest2dImpl(const UpsampleOptions& o)
      : Layer("nn.UpsamplingNearest2d", detail::upsample_attrs(o, false)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  UpsampleOptions options;
};
NNP_MODULE(UpsamplingNearest2d);
struct UpsamplingBilinear2dImpl : Layer {
  explicit UpsamplingBilinear2dImpl(const UpsampleOptions& o)
      : Layer("nn.UpsamplingBilinear2d", detail::upsample_attrs(o, false)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  UpsampleOptions options;
};
NNP_MODULE(UpsamplingBilinear2d);

}  // namespace nnp::nn
