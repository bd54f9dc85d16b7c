// nnp/value.hpp - one argument or result of a module's forward that need not
// be a tensor, as libtorch's IValue: None, a tensor, an int, a float, a bool
// or a string.
//
//   nnp::Value act("relu");          // act.isString(), act.toStringRef()
//   std::vector<nnp::Value> args{x, "relu", 3, 0.5, true, std::nullopt};
//
// Across the C ABI the values travel in an nnp_list (nnp_value_kind).
#pragma once

#include <cstdint>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nnp {

namespace indexing {
struct NoneType;  // nnp::indexing::None (nnp/indexing.hpp)
}

class Value {
 public:
  enum class Kind {
    None = NNP_VALUE_NONE,
    Tensor = NNP_VALUE_TENSOR,
    Int = NNP_VALUE_INT,
    Double = NNP_VALUE_FLOAT,
    Bool = NNP_VALUE_BOOL,
    String = NNP_VALUE_STRING
  };

  Value() = default;
  // None: Value(), std::nullopt or nnp::indexing::None.
  Value(std::nullopt_t) {}             // NOLINT: implicit by design, as IValue's
  Value(const indexing::NoneType&) {}  // NOLINT
  Value(Tensor t) : tensor_(std::move(t)) { kind_ = tensor_.defined() ? Kind::Tensor : Kind::None; }  // NOLINT
  Value(bool b) : kind_(Kind::Bool), integer_(b) {}                                                   // NOLINT
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Value(I i) : kind_(Kind::Int), integer_(static_cast<int64_t>(i)) {  // NOLINT
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t))
      if (i > static_cast<I>(INT64_MAX))
        throw Error(NNP_INVALID_ARGUMENT, "Value: " + std::to_string(i) + " does not fit in an int64");
  }
  template <typename F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
  Value(F f) : kind_(Kind::Double), real_(static_cast<double>(f)) {}  // NOLINT
  Value(const char* s) : kind_(Kind::String), text_(s ? s : "") {     // NOLINT
    if (!s) throw Error(NNP_INVALID_ARGUMENT, "Value: a NULL string");
  }
  Value(std::string s) : kind_(Kind::String), text_(std::move(s)) {}  // NOLINT
  template <typename T>
  Value(const std::optional<T>& v) : Value(v ? Value(*v) : Value()) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isDouble() const { return kind_ == Kind::Double; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isString() const { return kind_ == Kind::String; }

  // Conversions as Python makes them: toInt takes an int or a bool,
  // toDouble an int, float or bool; anything else throws naming the kind.
  const Tensor& toTensor() const {
    expect(isTensor(), "a tensor");
    return tensor_;
  }
  int64_t toInt() const {
    expect(isInt() || isBool(), "an int");
    return integer_;
  }
  double toDouble() const {
    expect(isDouble() || isInt() || isBool(), "a float");
    return isDouble() ? real_ : static_cast<double>(integer_);
  }
  bool toBool() const {
    expect(isBool(), "a bool");
    return integer_ != 0;
  }
  const std::string& toStringRef() const {
    expect(isString(), "a string");
    return text_;
  }
  // "None", "Tensor", "Int", "Double", "Bool" or "String", as IValue's.
  std::string tagKind() const {
    static const char* const names[] = {"None", "Tensor", "Module", "Int", "Double", "Bool", "String"};
    return names[static_cast<int>(kind_)];
  }
  // The kind in a sentence: "None", "a tensor", "an int", "a float", ...
  std::string kindPhrase() const {
    static const char* const phrases[] = {"None", "a tensor", "a module", "an int", "a float", "a bool", "a string"};
    return phrases[static_cast<int>(kind_)];
  }

 private:
  void expect(bool ok, const char* wanted) const {
    if (!ok) throw Error(NNP_INVALID_ARGUMENT, std::string("Value: expected ") + wanted + ", got " + tagKind());
  }

  Kind kind_ = Kind::None;
  Tensor tensor_;
  int64_t integer_ = 0;
  double real_ = 0;
  std::string text_;
};

namespace detail {

// Appends values to a list (positional: every name is "").
inline void append_values(nnp_list* list, const std::vector<Value>& values) {
  for (const Value& v : values) {
    switch (v.kind()) {
      case Value::Kind::None: check(api().list_append_tensor(list, "", nullptr)); break;
      case Value::Kind::Tensor: check(api().list_append_tensor(list, "", v.toTensor().get())); break;
      case Value::Kind::Int: check(api().list_append_int(list, "", v.toInt())); break;
      case Value::Kind::Double: check(api().list_append_float(list, "", v.toDouble())); break;
      case Value::Kind::Bool: check(api().list_append_bool(list, "", v.toBool())); break;
      case Value::Kind::String: check(api().list_append_string(list, "", v.toStringRef().c_str())); break;
    }
  }
}

// Values into a new nnp_list.
inline nnp_list* to_list(const std::vector<Value>& values) {
  nnp_list* list = nullptr;
  check(api().list_create(&list));
  try {
    append_values(list, values);
  } catch (...) {
    api().list_release(list);
    throw;
  }
  return list;
}

// The entries of a list as values (borrowed tensors are shared).
inline std::vector<Value> values_of(const nnp_list* list) {
  std::vector<Value> out;
  const int32_t n = api().list_size(list);
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    switch (api().list_kind(list, i)) {
      case NNP_VALUE_NONE: out.emplace_back(); break;
      case NNP_VALUE_TENSOR: out.emplace_back(Tensor::borrow(api().list_tensor(list, i))); break;
      case NNP_VALUE_INT: {
        int64_t v = 0;
        check(api().list_int(list, i, &v));
        out.emplace_back(v);
        break;
      }
      case NNP_VALUE_FLOAT: {
        double v = 0;
        check(api().list_float(list, i, &v));
        out.emplace_back(v);
        break;
      }
      case NNP_VALUE_BOOL: {
        int32_t v = 0;
        check(api().list_bool(list, i, &v));
        out.emplace_back(v != 0);
        break;
      }
      case NNP_VALUE_STRING: out.emplace_back(std::string(api().list_string(list, i))); break;
      default:
        throw Error(NNP_INVALID_ARGUMENT, "entry " + std::to_string(i) +
                                              " of a value list is a module or of an unknown kind; a forward's "
                                              "arguments and results are tensors, numbers, bools, strings or None");
    }
  }
  return out;
}

}  // namespace detail
}  // namespace nnp
