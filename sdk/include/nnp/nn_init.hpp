// nn_init.hpp - PyTorch's torch.nn.init, drawing from nnplug's Philox
// generator (included by nnp.hpp). Each function fills its tensor in place
// without recording autograd history and returns it.
#pragma once

#include <cmath>
#include <nnp/tensor.hpp>
#include <string>
#include <utility>

namespace nnp::nn::init {

inline std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  if (t.ndim() < 2)
    throw Error(NNP_INVALID_ARGUMENT,
                "fan in and fan out can not be computed for a tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int32_t d = 2; d < t.ndim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

inline double calculate_gain(const std::string& nonlinearity, double param = 0.01) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity.rfind("conv", 0) == 0) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw Error(NNP_INVALID_ARGUMENT, "calculate_gain: unsupported nonlinearity '" + nonlinearity + "'");
}

inline Tensor& uniform_(Tensor& t, double a = 0, double b = 1) {
  NoGradGuard no_grad;
  t.copy_(Tensor::call(api().random, NNP_RANDOM_UNIFORM, a, b, t.shape().data(), t.ndim(),
                       static_cast<nnp_dtype>(t.dtype()), t.device().raw()));
  return t;
}
inline Tensor& normal_(Tensor& t, double mean = 0, double std = 1) {
  NoGradGuard no_grad;
  t.copy_(Tensor::call(api().random, NNP_RANDOM_NORMAL, mean, std, t.shape().data(), t.ndim(),
                       static_cast<nnp_dtype>(t.dtype()), t.device().raw()));
  return t;
}
inline Tensor& constant_(Tensor& t, double value) {
  NoGradGuard no_grad;
  t.copy_(t.scalar_like(value));
  return t;
}
inline Tensor& zeros_(Tensor& t) { return constant_(t, 0); }
inline Tensor& ones_(Tensor& t) { return constant_(t, 1); }

inline Tensor& xavier_uniform_(Tensor& t, double gain = 1) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(t, -bound, bound);
}
inline Tensor& xavier_normal_(Tensor& t, double gain = 1) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(t, 0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

inline int64_t kaiming_fan(const Tensor& t, const std::string& mode) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  if (mode == "fan_in") return fan_in;
  if (mode == "fan_out") return fan_out;
  throw Error(NNP_INVALID_ARGUMENT, "mode " + mode + " not supported, please use fan_in or fan_out");
}
inline Tensor& kaiming_uniform_(Tensor& t, double a = 0, const std::string& mode = "fan_in",
                                const std::string& nonlinearity = "leaky_relu") {
  double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(kaiming_fan(t, mode)));
  double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound);
}
inline Tensor& kaiming_normal_(Tensor& t, double a = 0, const std::string& mode = "fan_in",
                               const std::string& nonlinearity = "leaky_relu") {
  return normal_(t, 0, calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(kaiming_fan(t, mode))));
}

}  // namespace nnp::nn::init
