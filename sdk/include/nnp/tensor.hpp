// nnp/tensor.hpp - tensors, dtypes and devices in C++ over the nnp.h table:
// RAII handles and operators on the C++ side only, nothing crosses the ABI.
// Failures become nnp::Error exceptions carrying the status and the core's
// message. (nnp/nnp.hpp includes this and everything else.)
#pragma once

#include <nnp/nnp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nnp/detail/api.hpp>
#include <nnp/detail/handle.hpp>
#include <nnp/detail/strings.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nnp {

enum class Dtype : int32_t {
  f32 = NNP_F32,
  f64 = NNP_F64,
  f16 = NNP_F16,
  bf16 = NNP_BF16,
  i64 = NNP_I64,
  i32 = NNP_I32,
  u8 = NNP_U8,
  boolean = NNP_BOOL,
  i8 = NNP_I8,
  i16 = NNP_I16,  // (since 1.17)
  u16 = NNP_U16,
  u32 = NNP_U32,
  u64 = NNP_U64
};

// libtorch's names for the dtypes, so a libtorch user's habits work.
constexpr Dtype kFloat32 = Dtype::f32, kFloat = Dtype::f32, kFloat64 = Dtype::f64, kDouble = Dtype::f64,
                kFloat16 = Dtype::f16, kHalf = Dtype::f16, kBFloat16 = Dtype::bf16, kInt64 = Dtype::i64,
                kLong = Dtype::i64, kInt32 = Dtype::i32, kInt = Dtype::i32, kUInt8 = Dtype::u8, kByte = Dtype::u8,
                kBool = Dtype::boolean, kInt8 = Dtype::i8, kChar = Dtype::i8, kInt16 = Dtype::i16,
                kShort = Dtype::i16, kUInt16 = Dtype::u16, kUInt32 = Dtype::u32, kUInt64 = Dtype::u64;

inline const char* dtype_name(Dtype dtype) { return api().dtype_name(static_cast<nnp_dtype>(dtype)); }
inline size_t dtype_size(Dtype dtype) { return api().dtype_size(static_cast<nnp_dtype>(dtype)); }
inline bool is_floating(Dtype d) { return d == Dtype::f32 || d == Dtype::f64 || d == Dtype::f16 || d == Dtype::bf16; }

// The dtype matching a C++ element type.
template <typename T>
struct DtypeOf;
template <>
struct DtypeOf<float> {
  static constexpr Dtype value = Dtype::f32;
};
template <>
struct DtypeOf<double> {
  static constexpr Dtype value = Dtype::f64;
};
template <>
struct DtypeOf<int64_t> {
  static constexpr Dtype value = Dtype::i64;
};
template <>
struct DtypeOf<int32_t> {
  static constexpr Dtype value = Dtype::i32;
};
template <>
struct DtypeOf<uint8_t> {
  static constexpr Dtype value = Dtype::u8;
};
template <>
struct DtypeOf<int8_t> {
  static constexpr Dtype value = Dtype::i8;
};
template <>
struct DtypeOf<int16_t> {
  static constexpr Dtype value = Dtype::i16;
};
template <>
struct DtypeOf<uint16_t> {
  static constexpr Dtype value = Dtype::u16;
};
template <>
struct DtypeOf<uint32_t> {
  static constexpr Dtype value = Dtype::u32;
};
template <>
struct DtypeOf<uint64_t> {
  static constexpr Dtype value = Dtype::u64;
};
template <>
struct DtypeOf<bool> {
  static constexpr Dtype value = Dtype::boolean;
};

class Device {
 public:
  // "cpu", "cuda:1", "reference", "auto".
  Device(const char* name) { check(api().device_parse(name, &device_)); }  // NOLINT: implicit by design
  Device(const std::string& name) : Device(name.c_str()) {}                // NOLINT
  explicit Device(nnp_device raw) : device_(raw) {}
  static Device cpu() {
    static const Device device("cpu");
    return device;
  }

  nnp_device raw() const { return device_; }
  nnp_backend_info info() const {
    nnp_backend_info out{};
    out.struct_size = sizeof(out);
    check(api().backend_info(device_.backend, &out));
    return out;
  }
  std::string name() const {
    return detail::query_string(
        [&](char* buf, size_t size, size_t* needed) { return api().device_name(device_, buf, size, needed); }, check);
  }
  // The backend's name ("cpu", "cuda", ...): how a layer with its own
  // kernels picks the one to run.
  std::string backend() const { return info().name; }
  // Whether the CPU may read and write this device's memory directly.
  bool host_memory() const { return (info().flags & NNP_BACKEND_HOST_MEMORY) != 0; }
  // The stream the core's kernels on this device run on (NULL: none).
  void* stream() const {
    void* out = nullptr;
    check(api().device_stream(device_, &out));
    return out;
  }
  bool operator==(const Device& other) const {
    return device_.backend == other.device_.backend && device_.index == other.device_.index;
  }
  bool operator!=(const Device& other) const { return !(*this == other); }

 private:
  nnp_device device_{};
};

class Tensor;
using Shape = std::vector<int64_t>;
namespace indexing {
class TensorIndex;
}

namespace detail {
struct TensorTraits {
  static void retain(nnp_tensor* t) { api().tensor_retain(t); }
  static void release(nnp_tensor* t) { api().tensor_release(t); }
};
struct HookTraits {
  static void release(nnp_hook_handle* h) {
    api().hook_remove(h);
    api().hook_release(h);
  }
};
}  // namespace detail

// Owns one hook registration: destroying or calling remove() removes the
// hook (idempotent); keep() lets it outlive the handle, as a discarded
// PyTorch handle does.
class [[nodiscard]] HookHandle : public detail::Handle<nnp_hook_handle, detail::HookTraits> {
 public:
  HookHandle() = default;
  explicit HookHandle(nnp_hook_handle* handle) : Handle(handle) {}
  HookHandle(HookHandle&&) noexcept = default;
  HookHandle& operator=(HookHandle&&) noexcept = default;

  void remove() {
    if (defined()) api().hook_remove(get());
  }
  void keep() {
    if (defined()) api().hook_release(release());
  }
};

// Turns autograd recording off on this thread for a scope.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(api().set_grad_enabled(0)) {}
  ~NoGradGuard() { api().set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  int32_t previous_;
};
inline bool is_grad_enabled() { return api().is_grad_enabled() != 0; }

// A borrowed list of integers: binds to a braced list, a vector or a single
// value without allocating (the list must outlive the call, as braced lists
// in a call expression do).
template <typename T>
class ArrayRef {
 public:
  ArrayRef() = default;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // borrowing for the call is the point
#endif
  ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}  // NOLINT
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  ArrayRef(const T& one) : data_(&one), size_(1) {}                        // NOLINT
  const T* data() const { return data_; }
  int32_t size() const { return static_cast<int32_t>(size_); }
  std::vector<T> vec() const { return std::vector<T>(data_, data_ + size_); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};
using ShapeRef = ArrayRef<int64_t>;
using DimsRef = ArrayRef<int32_t>;

class Tensor : public detail::Handle<nnp_tensor, detail::TensorTraits> {
 public:
  Tensor() = default;
  // Takes over one reference to handle.
  static Tensor adopt(nnp_tensor* handle) { return Tensor(handle); }
  // Shares handle (retains it).
  static Tensor borrow(nnp_tensor* handle) {
    if (handle) api().tensor_retain(handle);
    return Tensor(handle);
  }

  // -- properties --
  int32_t ndim() const { return api().tensor_ndim(get()); }
  Shape shape() const {
    const int64_t* s = api().tensor_shape(get());
    return Shape(s, s + ndim());
  }
  Shape strides() const {
    const int64_t* s = api().tensor_strides(get());
    return Shape(s, s + ndim());
  }
  int64_t size(int32_t dim) const {
    int32_t n = ndim();
    return api().tensor_shape(get())[dim < 0 ? dim + n : dim];
  }
  int64_t numel() const { return api().tensor_numel(get()); }
  Dtype dtype() const { return static_cast<Dtype>(api().tensor_dtype(get())); }
  Device device() const { return Device(api().tensor_device(get())); }
  bool is_contiguous() const { return api().tensor_is_contiguous(get()) != 0; }

  // -- raw memory, for kernels of one's own --
  // The first element, in the device's memory (host memory only where
  // device().host_memory()). Valid while the tensor lives.
  void* data_ptr() const { return api().tensor_data(get()); }
  template <typename T>
  T* data_ptr() const {
    if (dtype() != DtypeOf<T>::value)
      throw Error(NNP_DTYPE_MISMATCH, std::string("data_ptr: the tensor is ") + dtype_name(dtype()) +
                                          " but the element type asked for is " + dtype_name(DtypeOf<T>::value));
    return static_cast<T*>(data_ptr());
  }

  // -- DLPack (see nnp.h); the caller owns what to_dlpack returns --
  DLManagedTensor* to_dlpack() const {
    DLManagedTensor* out = nullptr;
    check(api().to_dlpack(get(), &out));
    return out;
  }
  DLManagedTensorVersioned* to_dlpack_versioned() const {
    DLManagedTensorVersioned* out = nullptr;
    check(api().to_dlpack_versioned(get(), &out));
    return out;
  }
  // Takes ownership of src on success only.
  static Tensor from_dlpack(DLManagedTensor* src) { return call(api().from_dlpack, src); }
  static Tensor from_dlpack(DLManagedTensorVersioned* src) { return call(api().from_dlpack_versioned, src); }

  // -- data out --
  template <typename T>
  std::vector<T> to_vector() const {
    if (!defined()) throw Error(NNP_INVALID_ARGUMENT, "to_vector: the tensor is undefined");
    if (dtype() != DtypeOf<T>::value)
      throw Error(NNP_DTYPE_MISMATCH, std::string("to_vector: the tensor is ") + dtype_name(dtype()) +
                                          " but the element type asked for is " + dtype_name(DtypeOf<T>::value));
    std::vector<T> out(static_cast<size_t>(numel()));
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(out.size());
      check(api().copy_to_host(get(), bytes.data(), bytes.size()));
      for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
    } else {
      check(api().copy_to_host(get(), out.data(), out.size() * sizeof(T)));
    }
    return out;
  }
  template <typename T>
  T item() const {
    if (!defined()) throw Error(NNP_INVALID_ARGUMENT, "item: the tensor is undefined");
    if (numel() != 1)
      throw Error(NNP_INVALID_ARGUMENT,
                  "item: the tensor has " + std::to_string(numel()) + " elements; item() needs exactly one");
    // Converted as PyTorch's item<T>() converts (floats to integers truncate,
    // non-zero is true).
    if (dtype() == DtypeOf<T>::value) return to_vector<T>()[0];
    return detach().to(DtypeOf<T>::value).template to_vector<T>()[0];
  }

  // -- autograd --
  Tensor& requires_grad_(bool value = true) {
    check(api().set_requires_grad(get(), value ? 1 : 0));
    return *this;
  }
  bool requires_grad() const { return api().requires_grad(get()) != 0; }
  bool is_leaf() const { return api().is_leaf(get()) != 0; }
  // Undefined (defined() == false) when there is no gradient.
  Tensor grad() const { return call(api().grad, get()); }
  void set_grad(const Tensor& grad) { check(api().set_grad(get(), grad.get())); }
  void retain_grad() { check(api().retain_grad(get())); }
  Tensor detach() const { return call(api().detach, get()); }
  std::string grad_fn_name() const { return api().grad_fn_name(get()); }
  // PyTorch's repr of the tensor, as `std::cout << t` prints it (nnp/tensor_print.hpp).
  std::string str() const;
  void backward() const { check(api().backward(get(), nullptr, 0)); }
  void backward(const Tensor& grad, bool retain_graph = false) const {
    check(api().backward(get(), grad.get(), retain_graph ? 1 : 0));
  }
  // hook(grad) may return a replacement gradient or an undefined Tensor.
  HookHandle register_hook(std::function<Tensor(const Tensor&)> hook) {
    using Hook = std::function<Tensor(const Tensor&)>;
    auto trampoline = [](const nnp_tensor* grad, nnp_tensor** replacement, void* user_data) -> nnp_status {
      return detail::guard(
          [&] { *replacement = (*static_cast<Hook*>(user_data))(borrow(const_cast<nnp_tensor*>(grad))).release(); });
    };
    nnp_hook_handle* handle = nullptr;
    check(api().register_tensor_hook(
        get(), trampoline, new Hook(std::move(hook)), [](void* p) { delete static_cast<Hook*>(p); }, &handle));
    return HookHandle(handle);
  }
  // On a leaf: hook(leaf) runs each time backward has accumulated into its
  // .grad, which it reads with leaf.grad() (register_post_accumulate_grad_hook).
  HookHandle register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) {
    using Hook = std::function<void(Tensor&)>;
    auto trampoline = [](nnp_tensor* leaf, void* user_data) -> nnp_status {
      return detail::guard([&] {
        Tensor borrowed = borrow(leaf);
        (*static_cast<Hook*>(user_data))(borrowed);
      });
    };
    nnp_hook_handle* handle = nullptr;
    check(api().register_post_accumulate_grad_hook(
        get(), trampoline, new Hook(std::move(hook)), [](void* p) { delete static_cast<Hook*>(p); }, &handle));
    return HookHandle(handle);
  }

  // -- movement and views --
  Tensor to(const Device& device) const { return to(device, dtype()); }
  Tensor to(Dtype dtype) const { return to(device(), dtype); }
  Tensor to(const Device& device, Dtype dtype) const {
    return call(api().to, get(), device.raw(), static_cast<nnp_dtype>(dtype));
  }
  Tensor view(ShapeRef shape) const { return call(api().view, get(), shape.data(), shape.size()); }
  Tensor reshape(ShapeRef shape) const { return call(api().reshape, get(), shape.data(), shape.size()); }
  Tensor transpose(int32_t dim0, int32_t dim1) const { return call(api().transpose, get(), dim0, dim1); }
  Tensor t() const { return transpose(0, 1); }
  Tensor permute(DimsRef dims) const { return call(api().permute, get(), dims.data(), dims.size()); }
  Tensor slice(int32_t dim, int64_t start, int64_t end, int64_t step = 1) const {
    return call(api().slice, get(), dim, start, end, step);
  }
  Tensor expand(ShapeRef shape) const { return call(api().expand, get(), shape.data(), shape.size()); }
  Tensor squeeze() const { return call(api().squeeze, get(), 0, 1); }
  Tensor squeeze(int32_t dim) const { return call(api().squeeze, get(), dim, 0); }
  Tensor unsqueeze(int32_t dim) const { return call(api().unsqueeze, get(), dim); }
  Tensor contiguous() const { return call(api().contiguous, get()); }
  Tensor clone() const { return call(api().clone, get()); }
  // -- in-place ops, as PyTorch's (nnp/inplace.hpp): the data is written,
  // its version goes up, and autograd continues from the new values --
  Tensor& copy_(const Tensor& src);  // broadcast, converted
  Tensor& add_(const Tensor& other);
  Tensor& add_(double other);
  Tensor& sub_(const Tensor& other);
  Tensor& sub_(double other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(double other);
  Tensor& pow_(double exponent);
  Tensor& neg_();
  Tensor& abs_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  Tensor& relu_();
  Tensor& clamp_(std::optional<double> min, std::optional<double> max = std::nullopt);
  Tensor& clamp_min_(double min) { return clamp_(min); }
  Tensor& clamp_max_(double max) { return clamp_(std::nullopt, max); }
  Tensor& zero_();
  Tensor& fill_(double value);
  Tensor& fill_(const Tensor& value);  // 0-d
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);
  Tensor& masked_fill_(const Tensor& mask, double value);
  // Values below min become min, above max max (either may be absent).
  Tensor clamp(std::optional<double> min, std::optional<double> max = std::nullopt) const;
  Tensor clamp_min(double min) const { return clamp(min); }
  Tensor clamp_max(double max) const { return clamp(std::nullopt, max); }

  // -- elementwise --
  Tensor unary(nnp_unary_op op) const { return call(api().unary, op, get()); }
  Tensor neg() const { return unary(NNP_UNARY_NEG); }
  Tensor abs() const { return unary(NNP_UNARY_ABS); }
  Tensor exp() const { return unary(NNP_UNARY_EXP); }
  Tensor log() const { return unary(NNP_UNARY_LOG); }
  Tensor sqrt() const { return unary(NNP_UNARY_SQRT); }
  Tensor rsqrt() const { return unary(NNP_UNARY_RSQRT); }
  Tensor sin() const { return unary(NNP_UNARY_SIN); }
  Tensor cos() const { return unary(NNP_UNARY_COS); }
  Tensor tanh() const { return unary(NNP_UNARY_TANH); }
  Tensor sigmoid() const { return unary(NNP_UNARY_SIGMOID); }
  Tensor relu() const { return unary(NNP_UNARY_RELU); }
  Tensor gelu() const { return unary(NNP_UNARY_GELU); }
  Tensor silu() const { return unary(NNP_UNARY_SILU); }
  Tensor sign() const { return unary(NNP_UNARY_SIGN); }
  Tensor erf() const { return unary(NNP_UNARY_ERF); }
  Tensor round() const { return unary(NNP_UNARY_ROUND); }  // ties to even; its gradient is zero

  Tensor binary(nnp_binary_op op, const Tensor& other) const { return call(api().binary, op, get(), other.get()); }
  Tensor binary(nnp_binary_op op, double scalar) const { return binary(op, scalar_like(scalar)); }
  Tensor add(const Tensor& o) const { return binary(NNP_BINARY_ADD, o); }
  Tensor sub(const Tensor& o) const { return binary(NNP_BINARY_SUB, o); }
  Tensor mul(const Tensor& o) const { return binary(NNP_BINARY_MUL, o); }
  Tensor div(const Tensor& o) const { return binary(NNP_BINARY_DIV, o); }
  Tensor pow(const Tensor& o) const { return binary(NNP_BINARY_POW, o); }
  Tensor pow(double exponent) const { return binary(NNP_BINARY_POW, exponent); }
  Tensor maximum(const Tensor& o) const { return binary(NNP_BINARY_MAXIMUM, o); }
  Tensor minimum(const Tensor& o) const { return binary(NNP_BINARY_MINIMUM, o); }
  Tensor eq(const Tensor& o) const { return binary(NNP_BINARY_EQ, o); }
  Tensor ne(const Tensor& o) const { return binary(NNP_BINARY_NE, o); }
  Tensor lt(const Tensor& o) const { return binary(NNP_BINARY_LT, o); }
  Tensor le(const Tensor& o) const { return binary(NNP_BINARY_LE, o); }
  Tensor gt(const Tensor& o) const { return binary(NNP_BINARY_GT, o); }
  Tensor ge(const Tensor& o) const { return binary(NNP_BINARY_GE, o); }

  // -- reductions (an empty dims list reduces everything) --
  Tensor reduce(nnp_reduce_op op, DimsRef dims, bool keepdim, double correction = 0) const {
    return call(api().reduce, op, get(), dims.data(), dims.size(), keepdim ? 1 : 0, correction);
  }
  Tensor sum(DimsRef dims = {}, bool keepdim = false) const { return reduce(NNP_REDUCE_SUM, dims, keepdim); }
  Tensor mean(DimsRef dims = {}, bool keepdim = false) const { return reduce(NNP_REDUCE_MEAN, dims, keepdim); }
  Tensor amax(DimsRef dims = {}, bool keepdim = false) const { return reduce(NNP_REDUCE_MAX, dims, keepdim); }
  Tensor amin(DimsRef dims = {}, bool keepdim = false) const { return reduce(NNP_REDUCE_MIN, dims, keepdim); }
  Tensor argmax() const { return reduce(NNP_REDUCE_ARGMAX, {}, false); }
  Tensor argmax(int32_t dim, bool keepdim = false) const { return reduce(NNP_REDUCE_ARGMAX, dim, keepdim); }
  Tensor argmin() const { return reduce(NNP_REDUCE_ARGMIN, {}, false); }
  Tensor argmin(int32_t dim, bool keepdim = false) const { return reduce(NNP_REDUCE_ARGMIN, dim, keepdim); }
  Tensor var(DimsRef dims = {}, double correction = 1, bool keepdim = false) const {
    return reduce(NNP_REDUCE_VAR, dims, keepdim, correction);
  }

  // -- the rest --
  Tensor matmul(const Tensor& other) const { return call(api().matmul, get(), other.get()); }
  Tensor softmax(int32_t dim) const { return call(api().softmax, get(), dim, 0); }
  Tensor log_softmax(int32_t dim) const { return call(api().softmax, get(), dim, 1); }
  Tensor index_select(int32_t dim, const Tensor& index) const {
    return call(api().index_select, get(), dim, index.get());
  }
  Tensor gather(int32_t dim, const Tensor& index) const { return call(api().gather, get(), dim, index.get()); }
  Tensor scatter_add(int32_t dim, const Tensor& index, const Tensor& src) const {
    return call(api().scatter_add, get(), dim, index.get(), src.get());
  }

  // -- indexing as libtorch's (nnp/indexing.hpp) --
  Tensor select(int32_t dim, int64_t index) const;
  Tensor narrow(int32_t dim, int64_t start, int64_t length) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  // t.index({Slice(0, 2), 1, None, Ellipsis, mask}) as t[0:2, 1, None, ..., mask].
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, double value);
  Tensor masked_fill(const Tensor& mask, double value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  std::tuple<Tensor, Tensor> sort(int32_t dim = -1, bool descending = false) const;
  Tensor argsort(int32_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int32_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor cumsum(int32_t dim) const;

  // A 0-d tensor holding value, with this tensor's dtype and device.
  Tensor scalar_like(double value) const {
    return call(api().full, static_cast<const int64_t*>(nullptr), 0, value, static_cast<nnp_dtype>(dtype()),
                device().raw());
  }

  // Calls a table entry whose last parameter is nnp_tensor** and wraps it.
  template <typename Fn, typename... Args>
  static Tensor call(Fn fn, Args... args) {
    nnp_tensor* out = nullptr;
    check(fn(args..., &out));
    return Tensor(out);
  }

 private:
  explicit Tensor(nnp_tensor* handle) : Handle(handle) {}
};

namespace detail {
// Borrowed C arrays of tensors to C++ and back, for trampolines and calls.
inline std::vector<Tensor> borrow_all(const nnp_tensor* const* tensors, int32_t n) {
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(n > 0 ? n : 0));
  for (int32_t i = 0; i < n; ++i) out.push_back(Tensor::borrow(const_cast<nnp_tensor*>(tensors[i])));
  return out;
}
inline std::vector<const nnp_tensor*> raw_all(const std::vector<Tensor>& tensors) {
  std::vector<const nnp_tensor*> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.get());
  return out;
}
}  // namespace detail

inline Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor operator+(const Tensor& a, double b) { return a.binary(NNP_BINARY_ADD, b); }
inline Tensor operator-(const Tensor& a, double b) { return a.binary(NNP_BINARY_SUB, b); }
inline Tensor operator*(const Tensor& a, double b) { return a.binary(NNP_BINARY_MUL, b); }
inline Tensor operator/(const Tensor& a, double b) { return a.binary(NNP_BINARY_DIV, b); }
inline Tensor operator+(double a, const Tensor& b) { return b.scalar_like(a).add(b); }
inline Tensor operator-(double a, const Tensor& b) { return b.scalar_like(a).sub(b); }
inline Tensor operator*(double a, const Tensor& b) { return b.scalar_like(a).mul(b); }
inline Tensor operator/(double a, const Tensor& b) { return b.scalar_like(a).div(b); }
inline Tensor operator-(const Tensor& a) { return a.neg(); }
inline Tensor operator==(const Tensor& a, const Tensor& b) { return a.eq(b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return a.ne(b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return a.le(b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return a.ge(b); }

// -- creation --
inline Tensor empty(ShapeRef shape, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  return Tensor::call(api().empty, shape.data(), shape.size(), static_cast<nnp_dtype>(dtype), device.raw());
}
inline Tensor full(ShapeRef shape, double value, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  return Tensor::call(api().full, shape.data(), shape.size(), value, static_cast<nnp_dtype>(dtype), device.raw());
}
inline Tensor zeros(ShapeRef shape, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  return full(shape, 0.0, dtype, device);
}
inline Tensor ones(ShapeRef shape, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  return full(shape, 1.0, dtype, device);
}
inline Tensor arange(double start, double end, double step = 1, Dtype dtype = Dtype::i64,
                     const Device& device = Device::cpu()) {
  return Tensor::call(api().arange, start, end, step, static_cast<nnp_dtype>(dtype), device.raw());
}
// A tensor of shape `shape` holding `values` (row-major).
template <typename T>
Tensor from_vector(const std::vector<T>& values, ShapeRef shape, const Device& device = Device::cpu()) {
  static_assert(!std::is_same_v<T, bool>, "use from_vector<uint8_t> and to(Dtype::boolean) for bool");
  int64_t count = 1;
  for (int32_t i = 0; i < shape.size(); ++i) count *= shape.data()[i];
  if (count != static_cast<int64_t>(values.size()))
    throw Error(NNP_SHAPE_MISMATCH, "from_vector: " + std::to_string(values.size()) +
                                        " values do not fill a shape of " + std::to_string(count) + " elements");
  return Tensor::call(api().from_host, static_cast<const void*>(values.data()), shape.data(),
                      static_cast<int32_t>(shape.size()), static_cast<nnp_dtype>(DtypeOf<T>::value), device.raw());
}
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Device& device = Device::cpu()) {
  const int64_t size = static_cast<int64_t>(values.size());
  return from_vector(values, ShapeRef(size), device);
}
inline Tensor rand(ShapeRef shape, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  return Tensor::call(api().random, NNP_RANDOM_UNIFORM, 0.0, 1.0, shape.data(), shape.size(),
                      static_cast<nnp_dtype>(dtype), device.raw());
}
inline Tensor randn(ShapeRef shape, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  return Tensor::call(api().random, NNP_RANDOM_NORMAL, 0.0, 1.0, shape.data(), shape.size(),
                      static_cast<nnp_dtype>(dtype), device.raw());
}
inline Tensor randint(int64_t low, int64_t high, ShapeRef shape, Dtype dtype = Dtype::i64,
                      const Device& device = Device::cpu()) {
  return Tensor::call(api().random, NNP_RANDOM_INT, static_cast<double>(low), static_cast<double>(high), shape.data(),
                      shape.size(), static_cast<nnp_dtype>(dtype), device.raw());
}
// Seeds every device's default generator (nnp/generator.hpp).
inline void manual_seed(uint64_t seed) { api().manual_seed(seed); }

// -- functions of several tensors --
inline Tensor cat(const std::vector<Tensor>& tensors, int32_t dim = 0) {
  std::vector<const nnp_tensor*> handles;
  handles.reserve(tensors.size());
  for (const Tensor& t : tensors) handles.push_back(t.get());
  return Tensor::call(api().cat, handles.data(), static_cast<int32_t>(handles.size()), dim);
}
// Tensors of one shape joined along a new dimension `dim`.
inline Tensor stack(const std::vector<Tensor>& tensors, int32_t dim = 0) {
  if (tensors.empty()) throw Error(NNP_INVALID_ARGUMENT, "stack: expects a non-empty list of tensors");
  std::vector<Tensor> widened;
  widened.reserve(tensors.size());
  for (const Tensor& t : tensors) widened.push_back(t.unsqueeze(dim < 0 ? dim + t.ndim() + 1 : dim));
  return cat(widened, dim < 0 ? dim + tensors[0].ndim() + 1 : dim);
}
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return Tensor::call(api().where, cond.get(), a.get(), b.get());
}
inline Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }

// -- plugins and devices --
inline void load_plugin(const std::string& path) { check(api().load_plugin(path.c_str())); }
// The folders searched for plugins, in order, joined with ':'.
inline std::string plugin_search_path() {
  return detail::query_string(
      [](char* buf, size_t size, size_t* needed) { return api().plugin_search_path(buf, size, needed); }, check);
}
namespace detail {
// Every loaded backend, indexed by its id, as `describe` (backend_info or
// backend_summary) gives it.
inline std::vector<nnp_backend_info> backend_list(nnp_status (*describe)(int32_t, nnp_backend_info*)) {
  std::vector<nnp_backend_info> out(static_cast<size_t>(api().backend_count()));
  for (size_t b = 0; b < out.size(); ++b) {
    out[b].struct_size = sizeof(nnp_backend_info);
    check(describe(static_cast<int32_t>(b), &out[b]));
  }
  return out;
}
}  // namespace detail
// Every loaded backend, indexed by its id, with its devices counted.
inline std::vector<nnp_backend_info> backends() { return detail::backend_list(api().backend_info); }
// The same list without asking any backend for its devices (device_count
// is -1): what is loaded, with no GPU runtime opened to find out.
inline std::vector<nnp_backend_info> backend_summaries() { return detail::backend_list(api().backend_summary); }
// "where, softmax": the kernel slots of a set (nnp_backend_info.missing_kernels).
inline std::string kernel_slots_text(uint32_t slots) {
  std::string text;
  for (nnp_kernel_slot s = 0; s < NNP_KERNEL_REQUIRED_COUNT; ++s)
    if (slots >> s & 1u) text += (text.empty() ? "" : ", ") + std::string(nnp_kernel_slot_name(s));
  return text.empty() ? "none" : text;
}
namespace autograd {
// From a hook, during backward: callback runs once that whole backward has
// finished, after every gradient (PyTorch's queue_callback). An exception
// it throws fails the backward.
inline void queue_callback(std::function<void()> callback) {
  using Callback = std::function<void()>;
  auto trampoline = [](void* user_data) -> nnp_status {
    return detail::guard([&] { (*static_cast<Callback*>(user_data))(); });
  };
  auto* owned = new Callback(std::move(callback));
  check(api().autograd_queue_callback(trampoline, owned, [](void* p) { delete static_cast<Callback*>(p); }));
}
}  // namespace autograd

inline std::vector<Device> devices() {
  std::vector<Device> out;
  std::vector<nnp_backend_info> all = backends();
  for (size_t b = 0; b < all.size(); ++b)
    for (int32_t i = 0; i < all[b].device_count; ++i) out.emplace_back(nnp_device{static_cast<int32_t>(b), i});
  return out;
}

}  // namespace nnp

#include "indexing.hpp"         // select, narrow, t[i], index({Slice(0, 2), 1}), sort, topk, cumsum, ...
#include "inplace.hpp"          // add_, mul_, copy_, fill_, zero_, clamp_, uniform_, ...
#include "tensor_creation.hpp"  // nnp::tensor({{1, 2}, {3, 4}}), *_like, linspace, eye
#include "tensor_print.hpp"     // str() and operator<<, PyTorch's repr
