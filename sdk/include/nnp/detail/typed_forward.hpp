// A module's forward with its own C++ parameters (forward(x, act)) called
// with a list of values: each value converted to its parameter's type, the
// result spread into values. nnp::nn::make installs it for a module whose
// one `forward` is not one of Module's two tensor overloads.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nnp/value.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nnp::detail {

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_tuple : std::false_type {};
template <typename... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};
template <typename A, typename B>
struct is_tuple<std::pair<A, B>> : std::true_type {};
template <typename>
inline constexpr bool always_false = false;

// Parameter `index` of forward from a value; errors name the parameter.
template <typename T>
T forward_argument(const Value& v, const std::string& where) {
  try {
    if constexpr (std::is_same_v<T, Value>) {
      return v;
    } else if constexpr (is_optional<T>::value) {
      if (v.isNone()) return std::nullopt;
      return T(forward_argument<typename T::value_type>(v, where));
    } else if constexpr (std::is_same_v<T, Tensor>) {
      return v.toTensor();
    } else if constexpr (std::is_same_v<T, bool>) {
      return v.toBool();
    } else if constexpr (std::is_integral_v<T>) {
      const int64_t i = v.toInt();
      if constexpr (sizeof(T) < sizeof(int64_t) || std::is_unsigned_v<T>)
        if (i < 0 ? (std::is_unsigned_v<T> || i < static_cast<int64_t>(std::numeric_limits<T>::min()))
                  : static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))
          throw Error(NNP_INVALID_ARGUMENT, std::to_string(i) + " is out of the parameter's range");
      return static_cast<T>(i);
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(v.toDouble());
    } else if constexpr (std::is_same_v<T, std::string>) {
      return v.toStringRef();
    } else {
      static_assert(always_false<T>,
                    "a forward parameter is an nnp::Tensor, an integer, a floating-point number, bool, "
                    "std::string, nnp::Value or a std::optional of one of them");
    }
  } catch (const Error& e) {
    throw Error(e.status(), where + ": " + e.what());
  }
}

// What forward returned, as values: a tuple, pair or vector spread out, a
// vector of values as it is, anything else as one value.
template <typename R>
void append_results(std::vector<Value>& out, R&& result) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, std::vector<Value>>) {
    out.insert(out.end(), result.begin(), result.end());
  } else if constexpr (is_vector<D>::value) {
    for (const auto& each : result) out.emplace_back(each);
  } else if constexpr (is_tuple<D>::value) {
    std::apply([&](const auto&... each) { (out.emplace_back(each), ...); }, result);
  } else {
    out.emplace_back(std::forward<R>(result));
  }
}

template <typename Self, typename Fn, typename R, typename... P, size_t... I>
std::vector<Value> call_typed(Self* self, Fn fn, const std::string& type, const std::vector<Value>& args,
                              std::index_sequence<I...>) {
  constexpr size_t arity = sizeof...(P);
  // Trailing std::optional parameters may be left out, as Python defaults.
  constexpr bool optional[] = {is_optional<std::decay_t<P>>::value..., true};
  size_t required = arity;
  while (required > 0 && optional[required - 1]) --required;
  if (args.size() > arity || args.size() < required)
    throw Error(
        NNP_INVALID_ARGUMENT,
        type + ".forward takes " +
            (required == arity ? std::to_string(arity) : std::to_string(required) + " to " + std::to_string(arity)) +
            " arguments, got " + std::to_string(args.size()));
  auto at = [&](size_t i) { return i < args.size() ? args[i] : Value(); };
  // Converted in order (a braced list is evaluated left to right), so an
  // error names the first argument that is wrong.
  std::tuple<std::decay_t<P>...> converted{
      forward_argument<std::decay_t<P>>(at(I), type + ".forward argument " + std::to_string(I))...};
  std::vector<Value> out;
  if constexpr (std::is_void_v<R>) {
    (self->*fn)(std::get<I>(converted)...);
  } else {
    append_results(out, (self->*fn)(std::get<I>(converted)...));
  }
  return out;
}

using TypedForward = std::function<std::vector<Value>(const std::vector<Value>&)>;

template <typename Self, typename C, typename R, typename... P>
TypedForward typed_forward(Self* self, R (C::*fn)(P...), std::string type) {
  return [self, fn, type = std::move(type)](const std::vector<Value>& args) {
    return call_typed<Self, decltype(fn), R, P...>(self, fn, type, args, std::index_sequence_for<P...>{});
  };
}
template <typename Self, typename C, typename R, typename... P>
TypedForward typed_forward(Self* self, R (C::*fn)(P...) const, std::string type) {
  return [self, fn, type = std::move(type)](const std::vector<Value>& args) {
    return call_typed<Self, decltype(fn), R, P...>(self, fn, type, args, std::index_sequence_for<P...>{});
  };
}

// Whether M's forward is one function with its own parameters (not one of
// Module's two tensor overloads, which need no adapter).
template <typename F>
struct forward_is_typed : std::false_type {};
template <typename C, typename R, typename... P>
struct forward_is_typed<R (C::*)(P...)>
    : std::bool_constant<!std::is_same_v<R(P...), Tensor(const Tensor&)> &&
                         !std::is_same_v<R(P...), Tensor(const std::vector<Tensor>&)>> {};
template <typename C, typename R, typename... P>
struct forward_is_typed<R (C::*)(P...) const> : forward_is_typed<R (C::*)(P...)> {};

template <typename M, typename = void>
struct has_typed_forward : std::false_type {};
template <typename M>
struct has_typed_forward<M, std::void_t<decltype(&M::forward)>> : forward_is_typed<decltype(&M::forward)> {};

// Whether a module call's arguments go the values way: anything but one
// tensor.
template <typename... A>
inline constexpr bool calls_with_values = !(sizeof...(A) == 1 && (std::is_convertible_v<A&&, const Tensor&> && ...));

}  // namespace nnp::detail
