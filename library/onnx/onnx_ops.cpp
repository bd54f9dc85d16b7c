// The ONNX operators imported graphs run (nn.GraphModule's op nodes), each
// written with the SDK's tensor ops, so an imported model trains and moves
// between devices as any other; registered through the table
// (nnp_api.register_graph_op) as a plugin registers its own.
#include "onnx_ops.hpp"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

namespace F = nnp::nn::functional;

template <Tensor (Tensor::*Method)() const>
Tensors unary(const Tensors& in, const Node&) {
  return {(need(in, 0, "unary").*Method)()};
}
template <nnp_binary_op Op>
Tensors binary(const Tensors& in, const Node&) {
  return {need(in, 0, "binary").binary(Op, need(in, 1, "binary"))};
}
template <nnp_binary_op Op>
Tensors variadic(const Tensors& in, const Node&) {  // Max, Min, Sum of any count
  Tensor out = need(in, 0, "variadic");
  for (size_t i = 1; i < in.size(); ++i) out = out.binary(Op, in[i]);
  return {out};
}

Tensors div(const Tensors& in, const Node&) {
  const Tensor &a = need(in, 0, "Div"), &b = need(in, 1, "Div");
  if (!integral(a) || !integral(b)) return {a.div(b)};
  // Integer division truncates (C's, as ONNX Runtime's); the tensors are shape arithmetic, small.
  return {host_elementwise(
      {a, b.to(a.dtype())}, nullptr,
      [](const std::vector<int64_t>& v) {
        if (v[1] == 0) invalid("Div: integer division by zero");
        return v[0] / v[1];
      },
      "Div")};
}
Tensors pow(const Tensors& in, const Node&) {
  const Tensor& base = need(in, 0, "Pow");
  return {base.pow(need(in, 1, "Pow").to(base.dtype()))};
}
Tensors reciprocal(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Reciprocal");
  return {x.scalar_like(1).div(x)};
}
Tensors logical_not(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Not");
  return {x.eq(x.scalar_like(0))};
}
Tensors identity(const Tensors& in, const Node&) { return {need(in, 0, "Identity")}; }
// Dropout: in inference the input and an all-true mask; with training_mode
// (opset 12's third input) true, elements dropped with probability ratio
// (the second input, 0.5 when absent) and the rest scaled by 1 / (1 - ratio).
Tensors dropout(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Dropout");
  const bool training = given(in, 2) && host_ints(in[2]).at(0) != 0;
  const double ratio = given(in, 1) ? host_reals(in[1]).at(0) : 0.5;
  if (!training || ratio == 0) return {x, nnp::ones(x.shape(), Dtype::boolean, x.device())};
  if (!(ratio >= 0 && ratio < 1)) invalid("Dropout: ratio must be in [0, 1)");
  const Tensor keep = nnp::rand(x.shape(), Dtype::f32, x.device()).ge(nnp::full({}, ratio, Dtype::f32, x.device()));
  return {nnp::where(keep, x * (1.0 / (1.0 - ratio)), x.scalar_like(0)), keep};
}
Tensors leaky_relu(const Tensors& in, const Node& a) {
  return {
      F::leaky_relu(need(in, 0, "LeakyRelu"), F::LeakyReLUFuncOptions().negative_slope(attr_float(a, "alpha", 0.01)))};
}
Tensors gelu(const Tensors& in, const Node& a) {
  return {F::gelu(need(in, 0, "Gelu"), F::GELUFuncOptions().approximate(attr_string(a, "approximate", "none")))};
}
Tensors clip(const Tensors& in, const Node&) {
  Tensor x = need(in, 0, "Clip");
  if (given(in, 1)) x = x.maximum(in[1].to(x.dtype()));
  if (given(in, 2)) x = x.minimum(in[2].to(x.dtype()));
  return {x};
}
Tensors cast(const Tensors& in, const Node& a) {
  return {need(in, 0, "Cast").to(dtype_of_onnx(attr_int(a, "to", 1), "Cast"))};
}
Tensors where(const Tensors& in, const Node&) {
  return {nnp::where(need(in, 0, "Where").to(Dtype::boolean), need(in, 1, "Where"), need(in, 2, "Where"))};
}

Tensors matmul(const Tensors& in, const Node&) { return {need(in, 0, "MatMul").matmul(need(in, 1, "MatMul"))}; }
Tensors gemm(const Tensors& in, const Node& a) {
  Tensor x = need(in, 0, "Gemm"), w = need(in, 1, "Gemm");
  if (attr_int(a, "transA", 0)) x = x.transpose(0, 1);
  if (attr_int(a, "transB", 0)) w = w.transpose(0, 1);
  Tensor y = x.matmul(w);
  const double alpha = attr_float(a, "alpha", 1), beta = attr_float(a, "beta", 1);
  if (alpha != 1) y = y * alpha;
  if (given(in, 2)) y = y + (beta == 1 ? in[2] : in[2] * beta);
  return {y};
}

template <bool Log>
Tensors softmax(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Softmax");
  const int32_t axis = wrap(attr_int(a, "axis", -1), x.ndim(), "Softmax");
  return {Log ? x.log_softmax(axis) : x.softmax(axis)};
}

Tensors reshape(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Reshape");
  std::vector<int64_t> shape = host_ints(need(in, 1, "Reshape"));
  if (!attr_int(a, "allowzero", 0))
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] == 0) {
        if (static_cast<int32_t>(i) >= x.ndim())
          throw nnp::Error(NNP_INVALID_ARGUMENT, "Reshape: 0 past the input's rank");
        shape[i] = x.size(static_cast<int32_t>(i));
      }
  return {x.reshape(shape)};
}
Tensors transpose(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Transpose");
  std::vector<int64_t> perm = attr_ints(a, "perm");
  if (perm.empty())
    for (int32_t i = x.ndim() - 1; i >= 0; --i) perm.push_back(i);
  return {x.permute(std::vector<int32_t>(perm.begin(), perm.end()))};
}
Tensors flatten(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Flatten");
  // An axis in [-rank, rank]: a negative one counts from the end of the input's rank.
  int64_t axis = attr_int(a, "axis", 1);
  if (axis < -x.ndim() || axis > x.ndim())
    invalid("Flatten: axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(x.ndim()));
  if (axis < 0) axis += x.ndim();
  int64_t outer = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= x.size(i);
  int64_t inner = 1;
  for (int32_t i = static_cast<int32_t>(axis); i < x.ndim(); ++i) inner *= x.size(i);
  return {x.reshape({outer, inner})};
}
Tensors squeeze(const Tensors& in, const Node& a) {
  Tensor x = need(in, 0, "Squeeze");
  std::vector<int64_t> axes = given(in, 1) ? host_ints(in[1]) : attr_ints(a, "axes");
  if (axes.empty()) return {x.squeeze()};
  for (int64_t& axis : axes) axis = wrap(axis, x.ndim(), "Squeeze");
  std::sort(axes.rbegin(), axes.rend());
  for (int64_t axis : axes) x = x.squeeze(static_cast<int32_t>(axis));
  return {x};
}
Tensors unsqueeze(const Tensors& in, const Node& a) {
  Tensor x = need(in, 0, "Unsqueeze");
  std::vector<int64_t> axes = given(in, 1) ? host_ints(in[1]) : attr_ints(a, "axes");
  const int64_t rank = x.ndim() + static_cast<int64_t>(axes.size());
  for (int64_t& axis : axes) axis = wrap(axis, rank, "Unsqueeze");
  std::sort(axes.begin(), axes.end());
  for (int64_t axis : axes) x = x.unsqueeze(static_cast<int32_t>(axis));
  return {x};
}
// Slice: opset 10+ gives starts, ends, axes and steps as inputs; opsets
// 1-9 give starts, ends and axes as attributes (files the version converter
// could not bring forward keep that form).
Tensors slice(const Tensors& in, const Node& a) {
  Tensor x = need(in, 0, "Slice");
  const bool attributes = !given(in, 1) && has(a, "starts");
  if (attributes && !has(a, "ends")) invalid("Slice: the starts attribute comes without ends");
  std::vector<int64_t> starts = attributes ? attr_ints(a, "starts") : host_ints(need(in, 1, "Slice"));
  std::vector<int64_t> ends = attributes ? attr_ints(a, "ends") : host_ints(need(in, 2, "Slice"));
  std::vector<int64_t> axes = attributes     ? attr_ints(a, "axes")
                              : given(in, 3) ? host_ints(in[3])
                                             : std::vector<int64_t>{};
  std::vector<int64_t> steps = given(in, 4) ? host_ints(in[4]) : std::vector<int64_t>(starts.size(), 1);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw nnp::Error(NNP_INVALID_ARGUMENT, "Slice: starts, ends, axes and steps differ in length");
  for (size_t i = 0; i < starts.size(); ++i) {
    const int32_t axis = wrap(axes[i], x.ndim(), "Slice");
    if (steps[i] == 0) invalid("Slice: a step is 0");
    const int64_t size = x.size(axis);
    if (steps[i] > 0) {
      auto clamp = [size](int64_t v) { return std::min(std::max(v < 0 ? v + size : v, int64_t{0}), size); };
      x = x.slice(axis, clamp(starts[i]), clamp(ends[i]), steps[i]);
      continue;
    }
    // A negative step walks down from start (clamped to [0, size - 1]) to
    // just above end (clamped to [-1, size - 1]): the indices, gathered.
    auto clamp = [size](int64_t v, int64_t low) { return std::min(std::max(v < 0 ? v + size : v, low), size - 1); };
    const int64_t start = clamp(starts[i], 0), end = clamp(ends[i] < -size ? -1 - size : ends[i], -1);
    std::vector<int64_t> picked;
    for (int64_t v = start; v > end && size > 0; v += steps[i]) picked.push_back(v);
    x = x.index_select(axis, nnp::from_vector(picked, {static_cast<int64_t>(picked.size())}, x.device()));
  }
  return {x};
}
Tensors expand(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Expand");
  std::vector<int64_t> shape = host_ints(need(in, 1, "Expand"));
  // Bidirectional broadcasting: a 1 in shape keeps the input's size.
  nnp::Shape out(std::max<size_t>(shape.size(), static_cast<size_t>(x.ndim())), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t from_x = static_cast<int64_t>(i) - static_cast<int64_t>(out.size()) + x.ndim();
    const int64_t from_s =
        static_cast<int64_t>(i) - static_cast<int64_t>(out.size()) + static_cast<int64_t>(shape.size());
    const int64_t a = from_x >= 0 ? x.size(static_cast<int32_t>(from_x)) : 1;
    const int64_t b = from_s >= 0 ? shape[static_cast<size_t>(from_s)] : 1;
    out[i] = a == 1 ? b : a;
  }
  return {x.expand(out)};
}
Tensors tile(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Tile");
  std::vector<int64_t> repeats = host_ints(need(in, 1, "Tile"));
  if (static_cast<int32_t>(repeats.size()) != x.ndim())
    throw nnp::Error(NNP_INVALID_ARGUMENT, "Tile: repeats must have one entry per input dimension");
  int64_t elements = std::max<int64_t>(x.numel(), 1);
  for (int64_t r : repeats)  // checked before any copy is made
    if (r < 0 || (r > 0 && elements > kMaxElements / r))
      throw nnp::Error(NNP_INVALID_ARGUMENT, "Tile: repeats of " + std::to_string(r) + " make the result too large");
    else
      elements *= std::max<int64_t>(r, 1);
  Tensor out = x;
  for (int32_t d = 0; d < x.ndim(); ++d) {
    std::vector<Tensor> copies(static_cast<size_t>(repeats[static_cast<size_t>(d)]), out);
    out = nnp::cat(copies, d);
  }
  return {out};
}
// Pad (opset 11+: pads and the constant are inputs; opsets 1-10: the
// attributes pads, or opset 1's paddings, and value); no cropping, no axes.
Tensors pad(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Pad");
  const bool attributes = !given(in, 1) && (has(a, "pads") || has(a, "paddings"));
  const std::vector<int64_t> pads = !attributes      ? host_ints(need(in, 1, "Pad"))
                                    : has(a, "pads") ? attr_ints(a, "pads")
                                                     : attr_ints(a, "paddings");
  const int64_t r = x.ndim();
  if (static_cast<int64_t>(pads.size()) != 2 * r)
    throw nnp::Error(NNP_INVALID_ARGUMENT, "Pad: pads must have two entries per input dimension");
  if (given(in, 3)) refuse("Pad: the axes input is not supported (give pads for every dimension)");
  const std::string mode = attr_string(a, "mode", "constant");
  const char* torch_mode = mode == "constant"  ? nnp::kConstant
                           : mode == "reflect" ? nnp::kReflect
                           : mode == "edge"    ? nnp::kReplicate
                                               : nullptr;
  if (!torch_mode) refuse("Pad: mode '" + mode + "' is not supported (constant, reflect or edge)");
  int64_t elements = 1, first = r;
  for (int64_t d = 0; d < r; ++d) {
    const int64_t before = pads[static_cast<size_t>(d)], after = pads[static_cast<size_t>(d + r)];
    if (before < 0 || after < 0) refuse("Pad: negative pads (cropping) are not supported");
    if (before > kMaxElements || after > kMaxElements)
      throw nnp::Error(NNP_INVALID_ARGUMENT, "Pad: pads make the result too large");
    const int64_t size = x.size(static_cast<int32_t>(d)) + before + after;
    if (size > 0 && elements > kMaxElements / size)  // checked before anything is made
      throw nnp::Error(NNP_INVALID_ARGUMENT, "Pad: pads make the result too large");
    elements *= size;
    if ((before || after) && first == r) first = d;
  }
  std::vector<int64_t> torch_order;  // pairs from the last dimension backwards
  for (int64_t d = r - 1; d >= first; --d) {
    torch_order.push_back(pads[static_cast<size_t>(d)]);
    torch_order.push_back(pads[static_cast<size_t>(d + r)]);
  }
  if (torch_order.empty()) return {x};
  const double value = given(in, 2) ? in[2].to(Dtype::f64).item<double>() : attr_float(a, "value", 0.0);
  const F::PadFuncOptions options = F::PadFuncOptions(torch_order).mode(torch_mode).value(value);
  // F::pad's reflect and replicate want a batch or channel axis before the padded ones.
  if (first == 0 && mode != "constant") return {F::pad(x.unsqueeze(0), options).squeeze(0)};
  return {F::pad(x, options)};
}
Tensors concat(const Tensors& in, const Node& a) {
  const Tensor& first = need(in, 0, "Concat");
  return {nnp::cat(in, wrap(attr_int(a, "axis", 0), first.ndim(), "Concat"))};
}
Tensors split(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Split");
  const int32_t axis = wrap(attr_int(a, "axis", 0), x.ndim(), "Split");
  const int64_t outputs = a.outputs;
  std::vector<int64_t> sizes = given(in, 1) ? host_ints(in[1]) : attr_ints(a, "split");
  if (sizes.empty()) {
    const int64_t each = (x.size(axis) + outputs - 1) / outputs;
    for (int64_t start = 0; start < x.size(axis); start += each) sizes.push_back(std::min(each, x.size(axis) - start));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    throw nnp::Error(NNP_INVALID_ARGUMENT,
                     "Split: " + std::to_string(sizes.size()) + " parts for " + std::to_string(outputs) + " outputs");
  Tensors out;
  int64_t start = 0;
  for (int64_t size : sizes) {
    out.push_back(x.slice(axis, start, start + size));
    start += size;
  }
  return out;
}
Tensors gather(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Gather");
  const int32_t axis = wrap(attr_int(a, "axis", 0), x.ndim(), "Gather");
  Tensor index = need(in, 1, "Gather").to(Dtype::i64);
  index =
      nnp::where(index.lt(index.scalar_like(0)), index + index.scalar_like(static_cast<double>(x.size(axis))), index);
  nnp::Shape out_shape;
  for (int32_t i = 0; i < axis; ++i) out_shape.push_back(x.size(i));
  for (int64_t s : index.shape()) out_shape.push_back(s);
  for (int32_t i = axis + 1; i < x.ndim(); ++i) out_shape.push_back(x.size(i));
  return {x.index_select(axis, index.reshape({-1})).reshape(out_shape)};
}
// Indices along axis with negative ones counted from the end.
Tensor non_negative(const Tensor& indices, int64_t size) {
  const Tensor index = indices.to(Dtype::i64);
  return nnp::where(index.lt(index.scalar_like(0)), index + index.scalar_like(static_cast<double>(size)), index);
}
Tensors gather_elements(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "GatherElements");
  const int32_t axis = wrap(attr_int(a, "axis", 0), x.ndim(), "GatherElements");
  return {x.gather(axis, non_negative(need(in, 1, "GatherElements"), x.size(axis)))};
}
Tensors scatter_elements(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "ScatterElements");
  const int32_t axis = wrap(attr_int(a, "axis", 0), x.ndim(), "ScatterElements");
  const Tensor &indices = need(in, 1, "ScatterElements"), &updates = need(in, 2, "ScatterElements");
  const std::string reduction = attr_string(a, "reduction", "none");
  if (reduction == "add") return {x.scatter_add(axis, non_negative(indices, x.size(axis)), updates)};
  return {scatter_elements_on_host(x, axis, indices, updates.to(x.dtype()), reduction)};
}

template <nnp_reduce_op Op>
Tensors reduce(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Reduce");
  std::vector<int64_t> axes = given(in, 1) ? host_ints(in[1]) : attr_ints(a, "axes");
  if (axes.empty() && attr_int(a, "noop_with_empty_axes", 0)) return {x};
  std::vector<int32_t> dims;
  for (int64_t axis : axes) dims.push_back(wrap(axis, x.ndim(), "Reduce"));
  return {x.reduce(Op, dims, attr_int(a, "keepdims", 1) != 0)};
}
template <nnp_reduce_op Op>
Tensors arg_reduce(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "ArgMax");
  const int32_t axis = wrap(attr_int(a, "axis", 0), x.ndim(), "ArgMax");
  const bool keep = attr_int(a, "keepdims", 1) != 0;
  if (!attr_int(a, "select_last_index", 0)) return {x.reduce(Op, {axis}, keep)};
  // The last extreme: the first in the axis reversed, counted from the end.
  const int64_t size = x.size(axis);
  const Tensor reversed =
      x.index_select(axis, nnp::arange(static_cast<double>(size - 1), -1, -1, Dtype::i64, x.device()));
  const Tensor first = reversed.reduce(Op, {axis}, keep);
  return {first.scalar_like(static_cast<double>(size - 1)) - first};
}

Tensors shape(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Shape");
  const int64_t rank = x.ndim();
  auto clamp = [rank](int64_t v) { return std::min(std::max(v < 0 ? v + rank : v, int64_t{0}), rank); };
  const int64_t start = clamp(attr_int(a, "start", 0)), end = clamp(attr_int(a, "end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(x.size(static_cast<int32_t>(i)));
  return {nnp::from_vector(dims, {static_cast<int64_t>(dims.size())}, x.device())};
}
Tensors constant_of_shape(const Tensors& in, const Node& a) {
  const Tensor& shape = need(in, 0, "ConstantOfShape");
  double value = 0;
  Dtype dtype = Dtype::f32;
  if (has(a, "value")) {  // a tensor attribute of one value (nnp_graph_op)
    const std::vector<double> values = nnp::nn::Attrs::view(a.attrs).reals("value");
    if (values.size() != 1)
      throw nnp::Error(NNP_INVALID_ARGUMENT,
                       "ConstantOfShape: value holds " + std::to_string(values.size()) + " values, not one");
    value = values[0];
    dtype = dtype_of_onnx(attr_int(a, "value.elem_type", 1), "ConstantOfShape");
  }
  return {nnp::full(host_ints(shape), value, dtype, shape.device())};
}
Tensors range(const Tensors& in, const Node&) {
  const Tensor& start = need(in, 0, "Range");
  const double s = start.to(Dtype::f64).item<double>(), l = need(in, 1, "Range").to(Dtype::f64).item<double>(),
               d = need(in, 2, "Range").to(Dtype::f64).item<double>();
  if (d == 0) throw nnp::Error(NNP_INVALID_ARGUMENT, "Range: delta is 0");
  const double count = std::ceil((l - s) / d);
  if (!(count <= static_cast<double>(kMaxElements)))
    throw nnp::Error(NNP_INVALID_ARGUMENT, "Range: start, limit and delta make the result too large");
  return {nnp::arange(s, l, d, start.dtype(), start.device())};
}

// BatchNormalization: with training_mode, normalised by the batch's own
// statistics, and the running ones updated by momentum (ONNX's: the old
// value times momentum plus the batch's times 1 - momentum; the variance
// biased).
Tensors batch_norm(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "BatchNormalization");
  nnp::Shape per_channel(static_cast<size_t>(std::max(x.ndim(), 2)), 1);
  per_channel[1] = -1;
  auto channel = [&](size_t i) { return need(in, i, "BatchNormalization").reshape(per_channel); };
  const Tensor scale = channel(1), bias = channel(2), running_mean = channel(3), running_var = channel(4);
  const double epsilon = attr_float(a, "epsilon", 1e-5);
  if (!attr_int(a, "training_mode", 0)) {
    const Tensor inv = (running_var + running_var.scalar_like(epsilon)).rsqrt();
    return {(x - running_mean) * inv * scale + bias};
  }
  std::vector<int32_t> dims{0};
  for (int32_t d = 2; d < x.ndim(); ++d) dims.push_back(d);
  const Tensor mean = x.mean(dims, true), centred = x - mean, var = (centred * centred).mean(dims, true);
  const Tensor y = centred * (var + var.scalar_like(epsilon)).rsqrt() * scale + bias;
  const double momentum = attr_float(a, "momentum", 0.9);
  const nnp::Shape flat{x.size(1)};
  return {y, (running_mean * momentum + mean * (1 - momentum)).reshape(flat),
          (running_var * momentum + var * (1 - momentum)).reshape(flat)};
}
// LRN: ONNX's window matches PyTorch's only for an odd size.
Tensors lrn(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "LRN");
  const int64_t size = attr_int(a, "size", 0);
  if (size < 1 || size % 2 == 0)
    refuse("LRN: size " + std::to_string(size) + " is not supported (an odd size: its window is centred)");
  return {F::local_response_norm(x, F::LocalResponseNormFuncOptions(size)
                                        .alpha(attr_float(a, "alpha", 1e-4))
                                        .beta(attr_float(a, "beta", 0.75))
                                        .k(attr_float(a, "bias", 1.0)))};
}
Tensors layer_norm(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "LayerNormalization");
  const int32_t axis = wrap(attr_int(a, "axis", -1), x.ndim(), "LayerNormalization");
  std::vector<int32_t> dims;
  for (int32_t i = axis; i < x.ndim(); ++i) dims.push_back(i);
  const Tensor& scale = need(in, 1, "LayerNormalization");
  const Shape shape = x.shape();
  const Shape normalized(shape.begin() + axis, shape.end());
  if (a.outputs == 1 && scale.shape() == normalized && (!given(in, 2) || in[2].shape() == normalized)) {
    F::LayerNormFuncOptions options(normalized);  // the backend's fused kernel where it has one
    options.weight(scale).eps(attr_float(a, "epsilon", 1e-5));
    if (given(in, 2)) options.bias(in[2]);
    return {F::layer_norm(x, options)};
  }
  const Tensor mean = x.mean(dims, true), centred = x - mean;
  const Tensor var = (centred * centred).mean(dims, true);
  const Tensor inv_std = (var + var.scalar_like(attr_float(a, "epsilon", 1e-5))).rsqrt();
  Tensor y = centred * inv_std * need(in, 1, "LayerNormalization");
  if (given(in, 2)) y = y + in[2];
  return {y, mean, inv_std};  // the optional outputs Mean and InvStdDev, kept dims
}
template <bool Max>
Tensors global_pool(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "GlobalPool");
  std::vector<int32_t> dims;
  for (int32_t i = 2; i < x.ndim(); ++i) dims.push_back(i);
  return {Max ? x.amax(dims, true) : x.mean(dims, true)};
}

// The table's side of one op: inputs as SDK tensors (an omitted optional
// input undefined), results appended to the list.
nnp_status run(const nnp_tensor* const* inputs, int32_t n_inputs, const nnp_attrs* attrs, int32_t n_outputs,
               nnp_list* outputs, void* user_data) {
  return nnp::detail::guard([&] {
    Tensors in;
    for (int32_t i = 0; i < n_inputs; ++i)
      in.push_back(inputs[i] ? Tensor::borrow(const_cast<nnp_tensor*>(inputs[i])) : Tensor());
    const Tensors out = reinterpret_cast<OpFunction>(user_data)(in, Node{attrs, n_outputs});
    for (const Tensor& t : out) check(api().list_append_tensor(outputs, "", t.get()));
  });
}

const OpTable& ops() {
  static const OpTable table = [] {
    OpTable t = {
        {"Abs", unary<&Tensor::abs>},
        {"Add", binary<NNP_BINARY_ADD>},
        {"ArgMax", arg_reduce<NNP_REDUCE_ARGMAX>},
        {"ArgMin", arg_reduce<NNP_REDUCE_ARGMIN>},
        {"BatchNormalization", batch_norm},
        {"Cast", cast},
        {"Clip", clip},
        {"Concat", concat},
        {"ConstantOfShape", constant_of_shape},
        {"Cos", unary<&Tensor::cos>},
        {"Div", div},
        {"Dropout", dropout},
        {"Equal", binary<NNP_BINARY_EQ>},
        {"Erf", unary<&Tensor::erf>},
        {"Exp", unary<&Tensor::exp>},
        {"Expand", expand},
        {"Flatten", flatten},
        {"Gather", gather},
        {"GatherElements", gather_elements},
        {"Gelu", gelu},
        {"Gemm", gemm},
        {"GlobalAveragePool", global_pool<false>},
        {"GlobalMaxPool", global_pool<true>},
        {"Greater", binary<NNP_BINARY_GT>},
        {"GreaterOrEqual", binary<NNP_BINARY_GE>},
        {"Identity", identity},
        {"LayerNormalization", layer_norm},
        {"LeakyRelu", leaky_relu},
        {"Less", binary<NNP_BINARY_LT>},
        {"LessOrEqual", binary<NNP_BINARY_LE>},
        {"Log", unary<&Tensor::log>},
        {"LogSoftmax", softmax<true>},
        {"MatMul", matmul},
        {"Max", variadic<NNP_BINARY_MAXIMUM>},
        {"Min", variadic<NNP_BINARY_MINIMUM>},
        {"Mul", binary<NNP_BINARY_MUL>},
        {"Neg", unary<&Tensor::neg>},
        {"Not", logical_not},
        {"Pow", pow},
        {"Range", range},
        {"Reciprocal", reciprocal},
        {"ReduceMax", reduce<NNP_REDUCE_MAX>},
        {"ReduceMean", reduce<NNP_REDUCE_MEAN>},
        {"ReduceMin", reduce<NNP_REDUCE_MIN>},
        {"ReduceSum", reduce<NNP_REDUCE_SUM>},
        {"Relu", unary<&Tensor::relu>},
        {"Reshape", reshape},
        {"Round", unary<&Tensor::round>},
        {"ScatterElements", scatter_elements},
        {"Shape", shape},
        {"Sigmoid", unary<&Tensor::sigmoid>},
        {"Sign", unary<&Tensor::sign>},
        {"Sin", unary<&Tensor::sin>},
        {"Slice", slice},
        {"Softmax", softmax<false>},
        {"Split", split},
        {"Sqrt", unary<&Tensor::sqrt>},
        {"Squeeze", squeeze},
        {"Sub", binary<NNP_BINARY_SUB>},
        {"Sum", variadic<NNP_BINARY_ADD>},
        {"Tanh", unary<&Tensor::tanh>},
        {"Tile", tile},
        {"Pad", pad},
        {"LRN", lrn},
        {"Transpose", transpose},
        {"Unsqueeze", unsqueeze},
        {"Where", where},
    };
    add_math_ops(t);
    add_shape_ops(t);
    add_loss_ops(t);
    add_window_ops(t);
    add_resize_ops(t);
    add_recurrent_ops(t);
    add_quantized_ops(t);
    add_einsum_op(t);
    add_detection_ops(t);
    add_signal_ops(t);
    add_tfidf_op(t);
    add_training_ops(t);
    return t;
  }();
  return table;
}

}  // namespace

namespace {

// The inputs each op reads only as numbers on the host (host_ints,
// host_reals: shapes, axes, pads, counts), as bits (nnp_graph_op.host_inputs).
uint64_t host_inputs_of(const std::string& op) {
  static const std::map<std::string, std::vector<int>> table = {
      {"ConstantOfShape", {0}}, {"CumSum", {1}},     {"DFT", {1}},
      {"Dropout", {1, 2}},      {"Expand", {1}},     {"Pad", {1}},
      {"ReduceL1", {1}},        {"ReduceL2", {1}},   {"ReduceLogSum", {1}},
      {"ReduceLogSumExp", {1}}, {"ReduceMax", {1}},  {"ReduceMean", {1}},
      {"ReduceMin", {1}},       {"ReduceProd", {1}}, {"ReduceSum", {1}},
      {"ReduceSumSquare", {1}}, {"Reshape", {1}},    {"Resize", {1, 2, 3}},
      {"Slice", {1, 2, 3, 4}},  {"Split", {1}},      {"Squeeze", {1}},
      {"STFT", {1, 2, 3}},      {"Tile", {1}},       {"TopK", {1}},
      {"Trilu", {1}},           {"Unsqueeze", {1}}};
  uint64_t bits = 0;
  if (auto it = table.find(op); it != table.end())
    for (int i : it->second) bits |= uint64_t{1} << i;
  return bits;
}

}  // namespace

void register_graph_ops(nnp_plugin_host* host) {
  for (const auto& [name, fn] : ops()) {
    nnp_graph_op op{};
    op.struct_size = sizeof op;
    op.op_type = name.c_str();
    op.doc = "ONNX's operator (opsets 9 to 20)";
    op.run = run;
    op.user_data = reinterpret_cast<void*>(fn);
    op.host_inputs = host_inputs_of(name);
    check(api().register_graph_op(host, &op));
  }
}

}  // namespace nnp::library::onnx
