// nnp/functional/vision.hpp - pixel_shuffle, pixel_unshuffle and
// channel_shuffle (PyTorch's torch.nn.functional): rearrangements by
// reshape and permute, differentiable; the layers call these.
#pragma once

#include <nnp/detail/format.hpp>
#include <nnp/tensor.hpp>
#include <string>

namespace nnp::nn::functional {

namespace detail {
inline Shape leading(const Tensor& x, int32_t keep_from_end) {
  Shape shape = x.shape();
  return Shape(shape.begin(), shape.end() - keep_from_end);
}
inline std::vector<int32_t> identity_dims(int32_t n) {
  std::vector<int32_t> dims;
  for (int32_t i = 0; i < n; ++i) dims.push_back(i);
  return dims;
}
}  // namespace detail

// [*, C * r^2, H, W] -> [*, C, H * r, W * r].
inline Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor) {
  const int64_t r = upscale_factor;
  if (x.ndim() < 3 || r <= 0 || x.size(-3) % (r * r) != 0)
    throw Error(NNP_SHAPE_MISMATCH, "pixel_shuffle: expected [*, C * r^2, H, W] with r = " + std::to_string(r) +
                                        " > 0 and channels divisible by r^2, got " +
                                        nnp::detail::shape_text(x.shape()));
  const int64_t c = x.size(-3) / (r * r), h = x.size(-2), w = x.size(-1);
  const int32_t lead = x.ndim() - 3;
  Shape split = detail::leading(x, 3), out = split;
  for (int64_t s : {c, r, r, h, w}) split.push_back(s);
  for (int64_t s : {c, h * r, w * r}) out.push_back(s);
  std::vector<int32_t> order = detail::identity_dims(lead);
  for (int32_t d : {0, 3, 1, 4, 2}) order.push_back(lead + d);  // C, H, r, W, r
  return x.reshape(split).permute(order).reshape(out);
}

// [*, C, H * r, W * r] -> [*, C * r^2, H, W].
inline Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor) {
  const int64_t r = downscale_factor;
  if (x.ndim() < 3 || r <= 0 || x.size(-2) % r != 0 || x.size(-1) % r != 0)
    throw Error(NNP_SHAPE_MISMATCH, "pixel_unshuffle: expected [*, C, H * r, W * r] with r = " + std::to_string(r) +
                                        " > 0 dividing height and width, got " + nnp::detail::shape_text(x.shape()));
  const int64_t c = x.size(-3), h = x.size(-2) / r, w = x.size(-1) / r;
  const int32_t lead = x.ndim() - 3;
  Shape split = detail::leading(x, 3), out = split;
  for (int64_t s : {c, h, r, w, r}) split.push_back(s);
  for (int64_t s : {c * r * r, h, w}) out.push_back(s);
  std::vector<int32_t> order = detail::identity_dims(lead);
  for (int32_t d : {0, 2, 4, 1, 3}) order.push_back(lead + d);  // C, r, r, H, W
  return x.reshape(split).permute(order).reshape(out);
}

// [N, C, *]: the channels in `groups` groups, interleaved.
inline Tensor channel_shuffle(const Tensor& x, int64_t groups) {
  if (x.ndim() < 3 || groups <= 0 || x.size(1) % groups != 0)
    throw Error(NNP_SHAPE_MISMATCH,
                "channel_shuffle: expected [N, C, *] with at least 3 dimensions and C divisible "
                "by groups = " +
                    std::to_string(groups) + ", got " + nnp::detail::shape_text(x.shape()));
  Shape shape = x.shape(), split{x.size(0), groups, x.size(1) / groups};
  split.insert(split.end(), shape.begin() + 2, shape.end());
  return x.reshape(split).transpose(1, 2).reshape(shape);
}

}  // namespace nnp::nn::functional
