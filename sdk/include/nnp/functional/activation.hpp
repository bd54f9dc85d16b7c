// nnp/functional/activation.hpp - activations as functions (PyTorch's
// torch.nn.functional), each composed of the op table's differentiable ops.
// The activation layers call these.
#pragma once

#include <cmath>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <string>

namespace nnp::nn::functional {

inline Tensor relu(const Tensor& x) { return x.relu(); }
inline Tensor silu(const Tensor& x) { return x.silu(); }
inline Tensor sigmoid(const Tensor& x) { return x.sigmoid(); }
inline Tensor tanh(const Tensor& x) { return x.tanh(); }

struct LeakyReLUFuncOptions {
  NNP_ARG(double, negative_slope) = 0.01;
};
inline Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options = {}) {
  return where(x.gt(x.scalar_like(0)), x, x * options.negative_slope());
}

struct GELUFuncOptions {
  NNP_ARG(std::string, approximate) = "none";  // or "tanh"
};
inline Tensor gelu(const Tensor& x, const GELUFuncOptions& options = {}) {
  if (options.approximate() == "none") return x.gelu();
  if (options.approximate() != "tanh")
    throw Error(NNP_INVALID_ARGUMENT,
                "gelu: approximate must be 'none' or 'tanh', got '" + options.approximate() + "'");
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  Tensor inner = (x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI);
  return x * 0.5 * (inner.tanh() + 1.0);
}

// softmax and log_softmax take the dimension as libtorch's do: an int or
// SoftmaxFuncOptions(dim), optionally converting the input first.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, dim);
  NNP_ARG(int32_t, dtype) = -1;  // an nnp::Dtype to convert to first; -1 keeps the input's

 public:
  SoftmaxFuncOptions& dtype(Dtype d) { return dtype(static_cast<int32_t>(d)); }
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

namespace detail {
inline Tensor softmax_of(const Tensor& x, const SoftmaxFuncOptions& options, bool log) {
  const int64_t dim = options.dim();
  if (dim < -NNP_MAX_DIMS || dim >= NNP_MAX_DIMS)
    throw Error(NNP_INVALID_ARGUMENT, std::string(log ? "log_softmax" : "softmax") + ": dim " + std::to_string(dim) +
                                          " is out of range (a tensor has at most " + std::to_string(NNP_MAX_DIMS) +
                                          " dimensions)");
  const Tensor input = options.dtype() >= 0 ? x.to(static_cast<Dtype>(options.dtype())) : x;
  return log ? input.log_softmax(static_cast<int32_t>(dim)) : input.softmax(static_cast<int32_t>(dim));
}
}  // namespace detail

inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options) {
  return detail::softmax_of(x, options, false);
}
inline Tensor log_softmax(const Tensor& x, const SoftmaxFuncOptions& options) {
  return detail::softmax_of(x, options, true);
}

}  // namespace nnp::nn::functional
