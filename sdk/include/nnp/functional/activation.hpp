// nnp/functional/activation.hpp - activations as functions (PyTorch's
// torch.nn.functional), each composed of the op table's differentiable ops.
// The activation layers call these.
#pragma once

#include <cmath>
#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <vector>

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

namespace detail {
// F.elu(x, inplace=True) and its kin: the result written into x, x returned.
inline Tensor maybe_inplace(const Tensor& x, const Tensor& result, bool inplace) {
  if (!inplace) return result;
  Tensor target = x;
  return target.copy_(result);
}
inline Tensor scalar(const Tensor& like, double v) { return like.scalar_like(v); }
// log(1 + exp(z)) for z <= 20 (callers clamp first, so the branch where()
// does not take stays finite and its gradient zero).
inline Tensor log1p_exp(const Tensor& z) { return (z.exp() + 1.0).log(); }
}  // namespace detail

struct ELUFuncOptions {
  NNP_ARG(double, alpha) = 1.0;
  NNP_ARG(bool, inplace) = false;
};
// x if x > 0, else alpha * (exp(x) - 1).
inline Tensor elu(const Tensor& x, const ELUFuncOptions& options = {}) {
  Tensor negative = (x.clamp(std::nullopt, 0.0).exp() - 1.0) * options.alpha();
  return detail::maybe_inplace(x, where(x.gt(detail::scalar(x, 0)), x, negative), options.inplace());
}

struct SELUFuncOptions {
  NNP_ARG(bool, inplace) = false;
};
inline Tensor selu(const Tensor& x, const SELUFuncOptions& options = {}) {
  constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return detail::maybe_inplace(x, elu(x, ELUFuncOptions().alpha(alpha)) * scale, options.inplace());
}

struct CELUFuncOptions {
  NNP_ARG(double, alpha) = 1.0;
  NNP_ARG(bool, inplace) = false;
};
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
inline Tensor celu(const Tensor& x, const CELUFuncOptions& options = {}) {
  if (options.alpha() == 0) throw Error(NNP_INVALID_ARGUMENT, "celu: alpha must not be 0 (it divides x)");
  Tensor negative = ((x.clamp(std::nullopt, 0.0) / options.alpha()).exp() - 1.0) * options.alpha();
  return detail::maybe_inplace(x, where(x.gt(detail::scalar(x, 0)), x, negative), options.inplace());
}

struct GLUFuncOptions {
  NNP_ARG(int64_t, dim) = -1;
};
// The first half of x along dim times the sigmoid of the second.
inline Tensor glu(const Tensor& x, const GLUFuncOptions& options = {}) {
  const int64_t ndim = x.ndim();
  if (ndim == 0) throw Error(NNP_INVALID_ARGUMENT, "glu does not support scalars because halving size must be even");
  const int64_t dim = options.dim() < 0 ? options.dim() + ndim : options.dim();
  if (dim < 0 || dim >= ndim)
    throw Error(NNP_INVALID_ARGUMENT, "glu: dim " + std::to_string(options.dim()) + " is out of range for a " +
                                          std::to_string(ndim) + "-d input");
  const int64_t size = x.shape()[static_cast<size_t>(dim)];
  if (size % 2 != 0)
    throw Error(NNP_INVALID_ARGUMENT, "Halving dimension must be even, but dimension " + std::to_string(dim) +
                                          " is size " + std::to_string(size));
  const int32_t d = static_cast<int32_t>(dim);
  return x.narrow(d, 0, size / 2) * x.narrow(d, size / 2, size / 2).sigmoid();
}

struct HardtanhFuncOptions {
  NNP_ARG(double, min_val) = -1.0;
  NNP_ARG(double, max_val) = 1.0;
  NNP_ARG(bool, inplace) = false;
};
// x clamped to [min_val, max_val]; the gradient passes strictly inside only,
// as PyTorch's.
inline Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& options = {}) {
  if (options.max_val() < options.min_val())
    throw Error(NNP_INVALID_ARGUMENT, "hardtanh: max_val must be larger than min_val");
  const Tensor lo = detail::scalar(x, options.min_val()), hi = detail::scalar(x, options.max_val());
  return detail::maybe_inplace(x, where(x.le(lo), lo, where(x.ge(hi), hi, x)), options.inplace());
}

struct ReLU6FuncOptions {
  NNP_ARG(bool, inplace) = false;
};
inline Tensor relu6(const Tensor& x, const ReLU6FuncOptions& options = {}) {
  return hardtanh(x, HardtanhFuncOptions().min_val(0).max_val(6).inplace(options.inplace()));
}

struct HardswishFuncOptions {
  NNP_ARG(bool, inplace) = false;
};
// x * relu6(x + 3) / 6, with PyTorch's gradient at -3 and 3.
inline Tensor hardswish(const Tensor& x, const HardswishFuncOptions& options = {}) {
  Tensor middle = where(x.le(detail::scalar(x, 3)), x * (x + 3.0) / 6.0, x);
  return detail::maybe_inplace(x, where(x.lt(detail::scalar(x, -3)), detail::scalar(x, 0), middle), options.inplace());
}

struct HardsigmoidFuncOptions {
  NNP_ARG(bool, inplace) = false;
};
// relu6(x + 3) / 6; the gradient is 1/6 strictly inside (-3, 3).
inline Tensor hardsigmoid(const Tensor& x, const HardsigmoidFuncOptions& options = {}) {
  Tensor upper = where(x.ge(detail::scalar(x, 3)), detail::scalar(x, 1), (x + 3.0) / 6.0);
  return detail::maybe_inplace(x, where(x.le(detail::scalar(x, -3)), detail::scalar(x, 0), upper), options.inplace());
}

struct HardshrinkFuncOptions {
  NNP_ARG(double, lambda) = 0.5;
};
inline Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& options = {}) {
  return where(x.abs().gt(detail::scalar(x, options.lambda())), x, detail::scalar(x, 0));
}

struct SoftshrinkFuncOptions {
  NNP_ARG(double, lambda) = 0.5;
};
inline Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& options = {}) {
  const double l = options.lambda();
  if (!(l >= 0))
    throw Error(NNP_INVALID_ARGUMENT,
                "lambda must be greater or equal to 0, but found to be " + nn::format_float(l) + ".");
  Tensor below = where(x.lt(detail::scalar(x, -l)), x + l, detail::scalar(x, 0));
  return where(x.gt(detail::scalar(x, l)), x - l, below);
}

inline Tensor tanhshrink(const Tensor& x) { return x - x.tanh(); }
inline Tensor softsign(const Tensor& x) { return x / (x.abs() + 1.0); }

struct SoftplusFuncOptions {
  NNP_ARG(double, beta) = 1.0;
  NNP_ARG(double, threshold) = 20.0;
};
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
inline Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options = {}) {
  if (options.beta() == 0) throw Error(NNP_INVALID_ARGUMENT, "softplus: beta must not be 0 (it divides)");
  Tensor scaled = x * options.beta();
  Tensor soft = detail::log1p_exp(scaled.clamp(std::nullopt, options.threshold())) / options.beta();
  return where(scaled.gt(detail::scalar(x, options.threshold())), x, soft);
}

// log(sigmoid(x)), computed without overflow on either side.
inline Tensor logsigmoid(const Tensor& x) {
  Tensor negative = x - detail::log1p_exp(x.clamp(std::nullopt, 0.0));
  Tensor positive = -detail::log1p_exp(-x.clamp(0.0, std::nullopt));
  return where(x.lt(detail::scalar(x, 0)), negative, positive);
}

struct MishFuncOptions {
  NNP_ARG(bool, inplace) = false;
};
inline Tensor mish(const Tensor& x, const MishFuncOptions& options = {}) {
  return detail::maybe_inplace(x, x * softplus(x).tanh(), options.inplace());
}

struct ThresholdFuncOptions {
  ThresholdFuncOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  NNP_ARG(double, threshold);
  NNP_ARG(double, value);
  NNP_ARG(bool, inplace) = false;
};
// x where x > threshold, else value.
inline Tensor threshold(const Tensor& x, const ThresholdFuncOptions& options) {
  return detail::maybe_inplace(
      x, where(x.gt(detail::scalar(x, options.threshold())), x, detail::scalar(x, options.value())), options.inplace());
}

// x if x > 0, else weight * x, with weight's entries along dimension 1 (the
// channels), or one weight for every element.
inline Tensor prelu(const Tensor& x, const Tensor& weight) {
  const int64_t n = weight.numel();
  Tensor w = weight;
  if (n != 1) {
    const int64_t channels = x.ndim() >= 2 ? x.shape()[1] : 1;
    if (weight.ndim() != 1 || n != channels)
      throw Error(NNP_INVALID_ARGUMENT,
                  "prelu: mismatch of parameter numbers and input channel size. Found "
                  "parameter numbers = " +
                      std::to_string(n) + " and channel size = " + std::to_string(channels) + ".");
    std::vector<int64_t> shape(static_cast<size_t>(x.ndim()), 1);
    shape[1] = n;
    w = weight.reshape(shape);
  } else {
    w = weight.reshape({});
  }
  return where(x.gt(detail::scalar(x, 0)), x, w * x);
}

struct RReLUFuncOptions {
  NNP_ARG(double, lower) = 1.0 / 8.0;
  NNP_ARG(double, upper) = 1.0 / 3.0;
  NNP_ARG(bool, training) = false;
  NNP_ARG(bool, inplace) = false;
};
// Training: negative inputs times a slope drawn uniformly from [lower,
// upper] per element (from the device's generator); evaluation: times the
// middle of the range.
inline Tensor rrelu(const Tensor& x, const RReLUFuncOptions& options = {}) {
  if (options.upper() < options.lower())
    throw Error(NNP_INVALID_ARGUMENT, "rrelu: lower bound " + nn::format_float(options.lower()) +
                                          " must be less than or equal to the upper bound " +
                                          nn::format_float(options.upper()));
  if (!options.training())
    return detail::maybe_inplace(
        x, leaky_relu(x, LeakyReLUFuncOptions().negative_slope((options.lower() + options.upper()) / 2)),
        options.inplace());
  Tensor slope = rand(x.shape(), x.dtype(), x.device()) * (options.upper() - options.lower()) + options.lower();
  return detail::maybe_inplace(x, where(x.ge(detail::scalar(x, 0)), x, x * slope), options.inplace());
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
using SoftminFuncOptions = SoftmaxFuncOptions;
inline Tensor softmin(const Tensor& x, const SoftminFuncOptions& options) { return softmax(-x, options); }

}  // namespace nnp::nn::functional
