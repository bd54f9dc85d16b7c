// nnp/inplace.hpp - in-place ops as PyTorch's (included by nnp/tensor.hpp):
// add_, sub_, mul_, div_, pow_, the unary ones, clamp_, zero_, fill_,
// copy_, uniform_, normal_, masked_fill_.
//
// Each computes its value with the out-of-place op and hands it to the
// core's assign (nnp.h): the tensor's data is overwritten and its version
// goes up, so a backward that saved the old values fails naming itself;
// while autograd records, the tensor's history continues from the new
// values (for a view, its base's history becomes CopySlices, as PyTorch's).
// A leaf that requires grad, or a view of one, is refused (write under
// NoGradGuard, as optimizers do).
#pragma once

#include <nnp/tensor.hpp>
#include <optional>

namespace nnp {

namespace detail {
inline Tensor& assign(Tensor& dst, const Tensor& value) {
  check(api().assign(dst.get(), value.get()));
  return dst;
}
// What an op whose backward needs the old values computes from: while
// autograd records, a copy of them (PyTorch's original self), since the
// write that follows changes the tensor's own data.
inline Tensor original(const Tensor& self) {
  return self.requires_grad() && api().is_grad_enabled() ? self.clone() : self;
}
}  // namespace detail

inline Tensor& Tensor::copy_(const Tensor& src) { return detail::assign(*this, src); }
inline Tensor& Tensor::add_(const Tensor& other) { return detail::assign(*this, add(other)); }
inline Tensor& Tensor::add_(double other) { return detail::assign(*this, *this + other); }
inline Tensor& Tensor::sub_(const Tensor& other) { return detail::assign(*this, sub(other)); }
inline Tensor& Tensor::sub_(double other) { return detail::assign(*this, *this - other); }
inline Tensor& Tensor::mul_(const Tensor& other) { return detail::assign(*this, detail::original(*this).mul(other)); }
inline Tensor& Tensor::mul_(double other) { return detail::assign(*this, *this * other); }
inline Tensor& Tensor::div_(const Tensor& other) { return detail::assign(*this, detail::original(*this).div(other)); }
inline Tensor& Tensor::div_(double other) { return detail::assign(*this, *this / other); }
inline Tensor& Tensor::pow_(double exponent) { return detail::assign(*this, detail::original(*this).pow(exponent)); }
inline Tensor& Tensor::neg_() { return detail::assign(*this, neg()); }
inline Tensor& Tensor::abs_() { return detail::assign(*this, detail::original(*this).abs()); }
inline Tensor& Tensor::exp_() { return detail::assign(*this, exp()); }
inline Tensor& Tensor::log_() { return detail::assign(*this, detail::original(*this).log()); }
inline Tensor& Tensor::sqrt_() { return detail::assign(*this, sqrt()); }
inline Tensor& Tensor::sigmoid_() { return detail::assign(*this, sigmoid()); }
inline Tensor& Tensor::tanh_() { return detail::assign(*this, tanh()); }
inline Tensor& Tensor::relu_() { return detail::assign(*this, detail::original(*this).relu()); }
inline Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  return detail::assign(*this, detail::original(*this).clamp(min, max));
}
inline Tensor& Tensor::zero_() { return detail::assign(*this, scalar_like(0)); }
inline Tensor& Tensor::fill_(double value) { return detail::assign(*this, scalar_like(value)); }
inline Tensor& Tensor::fill_(const Tensor& value) {
  if (value.ndim() != 0)
    throw Error(NNP_INVALID_ARGUMENT, "fill_ only supports 0-dimension value tensor but got tensor with " +
                                          std::to_string(value.ndim()) + " dimensions.");
  return detail::assign(*this, value);
}
inline Tensor& Tensor::uniform_(double from, double to) {
  if (!(from <= to))
    throw Error(NNP_INVALID_ARGUMENT, "uniform_ expects to return a [from, to) range, but found from=" +
                                          std::to_string(from) + " > to=" + std::to_string(to));
  return detail::assign(*this, call(api().random, NNP_RANDOM_UNIFORM, from, to, shape().data(), ndim(),
                                    static_cast<nnp_dtype>(dtype()), device().raw()));
}
inline Tensor& Tensor::normal_(double mean, double std) {
  return detail::assign(*this, call(api().random, NNP_RANDOM_NORMAL, mean, std, shape().data(), ndim(),
                                    static_cast<nnp_dtype>(dtype()), device().raw()));
}
inline Tensor& Tensor::masked_fill_(const Tensor& mask, double value) {
  return detail::assign(*this, masked_fill(mask, value));
}

// where() passes the gradient to x only where min <= x <= max, as PyTorch's
// clamp does (a bound equal to x lets it through).
inline Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max) const {
  if (!min && !max) throw Error(NNP_INVALID_ARGUMENT, "clamp: at least one of 'min' or 'max' must not be None");
  Tensor out = *this;
  if (min) out = where(out.lt(scalar_like(*min)), scalar_like(*min), out);
  if (max) out = where(out.gt(scalar_like(*max)), scalar_like(*max), out);
  return out;
}

}  // namespace nnp
