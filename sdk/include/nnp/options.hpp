// nnp/options.hpp - the pieces libtorch's option structs are made of, so
// nnplug's read the same: NNP_ARG for chained setters
// (`Conv2dOptions(1, 16, 5).stride(2).padding(1)`), ExpandingArray for
// "one value or one per dimension", and the names of reductions and padding
// modes (`nnp::kSum`, `nnp::kReflect`). Vendors use them for the option
// structs of their own layers' typed holders.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <nnp/detail/error.hpp>
#include <string>
#include <type_traits>
#include <vector>

// Declares an option `name` of type T: a chained setter name(value), a
// getter name() and the member name##_ holding it (defaulted where declared:
// `NNP_ARG(double, eps) = 1e-5;`). Like libtorch's TORCH_ARG it leaves the
// struct `private:` after it: declare constructors first, or write
// `public:` before members that follow. `T const&`, not `const T&`: a
// pointer type stays a const reference to the pointer.
#define NNP_ARG(T, name)                    \
 public:                                    \
  auto& name(T const& new_##name) {         \
    this->name##_ = new_##name;             \
    return *this;                           \
  }                                         \
  T const& name() const { return name##_; } \
  T& name() { return name##_; }             \
                                            \
 private:                                   \
  T name##_

namespace nnp {

// D integers given as one value (repeated) or as D values: kernel sizes,
// strides, paddings.
template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t value) { values_.fill(value); }  // NOLINT: implicit by design
  ExpandingArray(std::initializer_list<int64_t> list) : ExpandingArray(std::vector<int64_t>(list)) {}  // NOLINT
  ExpandingArray(const std::vector<int64_t>& list) {                                                   // NOLINT
    if (list.size() != D)
      throw Error(NNP_INVALID_ARGUMENT, "expected " + std::to_string(D) + " values, got " +
                                            std::to_string(list.size()) + " (give one value or one per dimension)");
    for (size_t i = 0; i < D; ++i) values_[i] = list[i];
  }
  int64_t operator[](size_t i) const { return values_[i]; }
  int64_t& operator[](size_t i) { return values_[i]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(values_.begin(), values_.end()); }
  static constexpr size_t size() { return D; }
  bool operator==(const ExpandingArray& other) const { return values_ == other.values_; }

 private:
  std::array<int64_t, D> values_{};
};

// A convolution's padding, as libtorch's padding_t: sizes (one value or one
// per dimension), or a rule, kSame or kValid.
template <size_t D>
struct ConvPadding {
  ConvPadding(int64_t value) : sizes(value) {}                       // NOLINT: implicit by design
  ConvPadding(std::initializer_list<int64_t> list) : sizes(list) {}  // NOLINT
  ConvPadding(const ExpandingArray<D>& values) : sizes(values) {}    // NOLINT
  // A word; an integer (0 included, a null pointer constant) is a size.
  template <typename Word,
            typename = std::enable_if_t<std::is_convertible_v<Word, std::string> && !std::is_integral_v<Word>>>
  ConvPadding(const Word& rule) : sizes(0), rule(rule) {}  // NOLINT
  ExpandingArray<D> sizes;
  std::string rule;  // "same", "valid", or empty when sizes say it
};

// Reductions of a loss, padding modes and nonlinearities, by libtorch's names. Options hold
// them as the strings model specs use, so "sum" and nnp::kSum are the same.
inline constexpr const char* kNone = "none";
inline constexpr const char* kMean = "mean";
inline constexpr const char* kSum = "sum";
inline constexpr const char* kConstant = "constant";
inline constexpr const char* kReflect = "reflect";
inline constexpr const char* kReplicate = "replicate";
inline constexpr const char* kCircular = "circular";
inline constexpr const char* kZeros = "zeros";
// A convolution's padding by rule: none, or as much as keeps the size.
inline constexpr const char* kValid = "valid";
inline constexpr const char* kSame = "same";
// Nonlinearities of the recurrent and Transformer layers.
inline constexpr const char* kTanh = "tanh";
inline constexpr const char* kReLU = "relu";
inline constexpr const char* kGELU = "gelu";

}  // namespace nnp
