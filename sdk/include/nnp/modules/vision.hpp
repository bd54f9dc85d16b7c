// nnp/modules/vision.hpp - typed PixelShuffle, PixelUnshuffle and
// ChannelShuffle (libtorch's holders over the registry's nn.* layers).
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>

namespace nnp::nn {

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT: implicit
  NNP_ARG(int64_t, upscale_factor);
};
struct PixelShuffleImpl : Layer {
  explicit PixelShuffleImpl(const PixelShuffleOptions& o)
      : Layer("nn.PixelShuffle", Attrs().set("upscale_factor", o.upscale_factor())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  PixelShuffleOptions options;
};
NNP_MODULE(PixelShuffle);

struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT: implicit
  NNP_ARG(int64_t, downscale_factor);
};
struct PixelUnshuffleImpl : Layer {
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& o)
      : Layer("nn.PixelUnshuffle", Attrs().set("downscale_factor", o.downscale_factor())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  PixelUnshuffleOptions options;
};
NNP_MODULE(PixelUnshuffle);

struct ChannelShuffleOptions {
  ChannelShuffleOptions(int64_t groups) : groups_(groups) {}  // NOLINT: implicit
  NNP_ARG(int64_t, groups);
};
struct ChannelShuffleImpl : Layer {
  explicit ChannelShuffleImpl(const ChannelShuffleOptions& o)
      : Layer("nn.ChannelShuffle", Attrs().set("groups", o.groups())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  ChannelShuffleOptions options;
};
NNP_MODULE(ChannelShuffle);

}  // namespace nnp::nn
