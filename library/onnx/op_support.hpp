// What every ONNX graph op of the built-in library is written with: the
// node's attributes and outputs, its inputs checked, axes wrapped, counts
// read on the host, and the table each family of ops adds itself to.
#pragma once

#include <nnp/nnp.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <nnp/functional.hpp>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnp::library::onnx {

using nnp::Dtype;
using nnp::Tensor;
using Tensors = std::vector<Tensor>;

// A node's attributes (ONNX's names) and how many outputs it names.
struct Node {
  const nnp_attrs* attrs;
  int32_t outputs;
};

using OpFunction = Tensors (*)(const Tensors& in, const Node& node);
using OpTable = std::map<std::string, OpFunction>;

// The families of ops, each in its own file, adding themselves to the table.
void add_math_ops(OpTable& table);    // math_ops.cpp: elementwise functions, activations, bitwise, reductions
void add_shape_ops(OpTable& table);   // shape_ops.cpp: tensors rearranged, selected and made
void add_loss_ops(OpTable& table);    // loss_ops.cpp: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void add_recurrent_ops(OpTable& table);  // recurrent_ops.cpp: RNN, GRU, LSTM in every form
void add_resize_ops(OpTable& table);  // resize_op.cpp: Resize
void add_window_ops(OpTable& table);
void add_quantized_ops(OpTable& table);
void add_einsum_op(OpTable& table);  // einsum_op.cpp
void add_detection_ops(OpTable& table);  // detection_ops.cpp: NonMaxSuppression, RoiAlign, GridSample, MaxUnpool
void add_signal_ops(OpTable& table);     // signal_ops.cpp: DFT, STFT, MelWeightMatrix
void add_tfidf_op(OpTable& table);       // tfidf_op.cpp: TfIdfVectorizer
void add_training_ops(OpTable& table);   // training_ops.cpp: ai.onnx.preview.training's Adagrad, Adam, Momentum  // quantized_ops.cpp: (De)QuantizeLinear, the integer and QLinear products  // window_ops.cpp: Conv, ConvTranspose and pooling in every ONNX form

// The most elements an op that makes values from counts (Tile, Range) makes:
// a stranger's file names the counts.
constexpr int64_t kMaxElements = int64_t{1} << 32;

[[noreturn]] inline void refuse(const std::string& what) { throw nnp::Error(NNP_UNIMPLEMENTED, what); }
[[noreturn]] inline void invalid(const std::string& what) { throw nnp::Error(NNP_INVALID_ARGUMENT, what); }

inline bool has(const Node& n, const char* name) { return api().attrs_has(n.attrs, name) != 0; }
inline int64_t attr_int(const Node& n, const char* name, int64_t fallback) {
  return has(n, name) ? nnp::nn::Attrs::view(n.attrs).integer(name) : fallback;
}
inline double attr_float(const Node& n, const char* name, double fallback) {
  return has(n, name) ? nnp::nn::Attrs::view(n.attrs).real(name) : fallback;
}
inline std::string attr_string(const Node& n, const char* name, const std::string& fallback) {
  return has(n, name) ? nnp::nn::Attrs::view(n.attrs).string(name) : fallback;
}
inline std::vector<int64_t> attr_ints(const Node& n, const char* name) {
  return has(n, name) ? nnp::nn::Attrs::view(n.attrs).integers(name) : std::vector<int64_t>{};
}
inline std::vector<double> attr_floats(const Node& n, const char* name) {
  return has(n, name) ? nnp::nn::Attrs::view(n.attrs).reals(name) : std::vector<double>{};
}

inline const Tensor& need(const Tensors& in, size_t i, const char* op) {
  if (i >= in.size() || !in[i].defined()) invalid(std::string(op) + ": input " + std::to_string(i) + " is missing");
  return in[i];
}
inline bool given(const Tensors& in, size_t i) { return i < in.size() && in[i].defined(); }

inline std::vector<int64_t> host_ints(const Tensor& t) { return t.to(Dtype::i64).contiguous().to_vector<int64_t>(); }
inline std::vector<double> host_reals(const Tensor& t) { return t.to(Dtype::f64).contiguous().to_vector<double>(); }

// An axis in [-rank, rank) as its place in [0, rank).
inline int32_t wrap(int64_t axis, int64_t rank, const char* op) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    invalid(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int32_t>(axis < 0 ? axis + rank : axis);
}

inline bool integral(const Tensor& t) {
  const Dtype d = t.dtype();
  return d == Dtype::i64 || d == Dtype::i32 || d == Dtype::u8 || d == Dtype::i8 || d == Dtype::i16 ||
         d == Dtype::u16 || d == Dtype::u32 || d == Dtype::u64;
}
inline bool floating(const Tensor& t) { return !integral(t) && t.dtype() != Dtype::boolean; }

// nnplug's dtype for ONNX's element type (refused for those it lacks).
inline Dtype dtype_of_onnx(int64_t elem_type, const char* op) {
  switch (elem_type) {
    case 1: return Dtype::f32;
    case 2: return Dtype::u8;
    case 3: return Dtype::i8;
    case 4: return Dtype::u16;
    case 5: return Dtype::i16;
    case 6: return Dtype::i32;
    case 7: return Dtype::i64;
    case 9: return Dtype::boolean;
    case 10: return Dtype::f16;
    case 11: return Dtype::f64;
    case 12: return Dtype::u32;
    case 13: return Dtype::u64;
    case 16: return Dtype::bf16;
    default: refuse(std::string(op) + ": ONNX element type " + std::to_string(elem_type) + " has no nnplug dtype");
  }
}

// An elementwise function of broadcast operands computed on the host, for
// what the backends have no kernel for (floor, tan, bit shifts, integer
// division): values as double for floating dtypes, as int64 otherwise. The
// result is on the first operand's device, in `dtype` (its dtype when
// unset). No gradient flows through it.
Tensor host_elementwise(const Tensors& operands, const std::function<double(const std::vector<double>&)>& real,
                        const std::function<int64_t(const std::vector<int64_t>&)>& integer, const char* op,
                        std::optional<Dtype> dtype = std::nullopt);

// Conv (window_ops.cpp), for ConvInteger and QLinearConv too.
Tensors run_conv(const Tensors& in, const Node& a);

// ScatterElements with reduction none, mul, max or min (shape_ops.cpp).
Tensor scatter_elements_on_host(const Tensor& data, int32_t axis, const Tensor& indices, const Tensor& updates,
                                const std::string& reduction);

}  // namespace nnp::library::onnx
