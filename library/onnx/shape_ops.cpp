// ONNX's ops that rearrange, select and make tensors beyond the basic ones
// of onnx_ops.cpp: depth and space, one-hot, compress, eye, N-d gather and
// scatter, non-zero, top-k, unique, reversed sequences, random draws.
// Index arithmetic (N-d gathers and scatters, unique) is done on the host,
// where the indices are: a stranger's indices are checked there.
#include <numeric>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

nnp::Shape shape_of(const Tensor& t) { return t.shape(); }

Tensors depth_to_space(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "DepthToSpace");
  const int64_t b = attr_int(a, "blocksize", 0);
  if (x.ndim() != 4 || b <= 0 || x.size(1) % (b * b) != 0)
    invalid("DepthToSpace: needs [N, C, H, W] with C a multiple of blocksize^2");
  const int64_t n = x.size(0), c = x.size(1) / (b * b), h = x.size(2), w = x.size(3);
  const bool crd = attr_string(a, "mode", "DCR") == "CRD";
  const Tensor split = crd ? x.reshape({n, c, b, b, h, w}) : x.reshape({n, b, b, c, h, w});
  const Tensor moved = crd ? split.permute({0, 1, 4, 2, 5, 3}) : split.permute({0, 3, 4, 1, 5, 2});
  return {moved.reshape({n, c, h * b, w * b})};
}
Tensors space_to_depth(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "SpaceToDepth");
  const int64_t b = attr_int(a, "blocksize", 0);
  if (x.ndim() != 4 || b <= 0 || x.size(2) % b != 0 || x.size(3) % b != 0)
    invalid("SpaceToDepth: needs [N, C, H, W] with H and W multiples of blocksize");
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2) / b, w = x.size(3) / b;
  return {x.reshape({n, c, h, b, w, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, c * b * b, h, w})};
}

Tensors one_hot(const Tensors& in, const Node& a) {
  const Tensor& indices = need(in, 0, "OneHot");
  const double depth_value = need(in, 1, "OneHot").to(Dtype::f64).reshape({-1}).to_vector<double>().at(0);
  const Tensor& values = need(in, 2, "OneHot");
  if (values.numel() != 2) invalid("OneHot: values must hold [off, on]");
  if (!(depth_value >= 1 && depth_value <= static_cast<double>(kMaxElements))) invalid("OneHot: depth out of range");
  const int64_t depth = static_cast<int64_t>(depth_value);
  const int32_t axis = wrap(attr_int(a, "axis", -1), indices.ndim() + 1, "OneHot");
  Tensor index = indices.to(Dtype::i64);
  index = nnp::where(index.lt(index.scalar_like(0)), index + index.scalar_like(static_cast<double>(depth)), index);
  nnp::Shape classes_shape(static_cast<size_t>(indices.ndim() + 1), 1);
  classes_shape[static_cast<size_t>(axis)] = depth;
  const Tensor classes = nnp::arange(0, static_cast<double>(depth), 1, Dtype::i64, indices.device()).reshape(classes_shape);
  const Tensor flat = values.reshape({2});
  return {nnp::where(index.unsqueeze(axis).eq(classes), flat.select(0, 1), flat.select(0, 0))};
}

Tensors compress(const Tensors& in, const Node& a) {
  Tensor x = need(in, 0, "Compress");
  const std::vector<int64_t> condition = host_ints(need(in, 1, "Compress").reshape({-1}));
  int32_t axis = 0;
  if (has(a, "axis"))
    axis = wrap(attr_int(a, "axis", 0), x.ndim(), "Compress");
  else
    x = x.reshape({-1});
  if (static_cast<int64_t>(condition.size()) > x.size(axis)) invalid("Compress: condition is longer than the axis");
  std::vector<int64_t> kept;
  for (size_t i = 0; i < condition.size(); ++i)
    if (condition[i]) kept.push_back(static_cast<int64_t>(i));
  return {x.index_select(axis, nnp::from_vector(kept, {static_cast<int64_t>(kept.size())}, x.device()))};
}

Tensors eye_like(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "EyeLike");
  if (x.ndim() != 2) invalid("EyeLike: the input must be 2-D");
  const Dtype dtype = has(a, "dtype") ? dtype_of_onnx(attr_int(a, "dtype", 1), "EyeLike") : x.dtype();
  const int64_t k = attr_int(a, "k", 0);
  const Tensor i = nnp::arange(0, static_cast<double>(x.size(0)), 1, Dtype::i64, x.device()).reshape({-1, 1});
  const Tensor j = nnp::arange(0, static_cast<double>(x.size(1)), 1, Dtype::i64, x.device()).reshape({1, -1});
  return {(j - i).eq(i.scalar_like(static_cast<double>(k))).to(dtype)};
}

// Rows of data (its first `batch + depth` axes flattened) that N-d indices
// name: indices [..., depth] over data's axes batch .. batch + depth - 1,
// the batch axes walked in step. Each row index is checked.
struct NdRows {
  std::vector<int64_t> rows;  // one per index tuple
  nnp::Shape row_shape;       // what each row holds (data's axes after the indexed ones)
  nnp::Shape tuples_shape;    // indices' shape without its last axis
  int64_t row_count = 0;      // rows in the flattened data
};
NdRows nd_rows(const Tensor& data, const Tensor& indices, int64_t batch, const char* op) {
  if (indices.ndim() < 1) invalid(std::string(op) + ": indices need one axis or more");
  const int64_t depth = indices.size(-1);
  if (batch < 0 || batch + depth > data.ndim() || batch >= indices.ndim())
    invalid(std::string(op) + ": indices' last axis names more axes than data has");
  NdRows out;
  for (int32_t d = 0; d + 1 < indices.ndim(); ++d) out.tuples_shape.push_back(indices.size(d));
  for (int64_t d = batch + depth; d < data.ndim(); ++d) out.row_shape.push_back(data.size(static_cast<int32_t>(d)));
  int64_t per_batch = 1, batches = 1;
  for (int64_t d = 0; d < batch; ++d) batches *= data.size(static_cast<int32_t>(d));
  for (int64_t d = batch; d < batch + depth; ++d) per_batch *= data.size(static_cast<int32_t>(d));
  out.row_count = batches * per_batch;
  const std::vector<int64_t> idx = host_ints(indices);
  const int64_t tuples = depth == 0 ? 0 : static_cast<int64_t>(idx.size()) / depth;
  int64_t per_batch_tuples = 1;
  for (int64_t d = batch; d + 1 < indices.ndim(); ++d) per_batch_tuples *= indices.size(static_cast<int32_t>(d));
  const int64_t count = depth == 0 ? std::accumulate(out.tuples_shape.begin(), out.tuples_shape.end(), int64_t{1},
                                                     std::multiplies<int64_t>())
                                   : tuples;
  for (int64_t t = 0; t < count; ++t) {
    int64_t row = 0;
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t size = data.size(static_cast<int32_t>(batch + k));
      int64_t v = idx[static_cast<size_t>(t * depth + k)];
      if (v < 0) v += size;
      if (v < 0 || v >= size)
        invalid(std::string(op) + ": index " + std::to_string(idx[static_cast<size_t>(t * depth + k)]) +
                " is out of range for an axis of size " + std::to_string(size));
      row = row * size + v;
    }
    out.rows.push_back((per_batch_tuples == 0 ? 0 : t / per_batch_tuples) * per_batch + row);
  }
  return out;
}
Tensor flat_rows(const Tensor& data, const NdRows& r) {
  nnp::Shape shape{r.row_count};
  shape.insert(shape.end(), r.row_shape.begin(), r.row_shape.end());
  return data.reshape(shape);
}

Tensors gather_nd(const Tensors& in, const Node& a) {
  const Tensor& data = need(in, 0, "GatherND");
  const NdRows r = nd_rows(data, need(in, 1, "GatherND"), attr_int(a, "batch_dims", 0), "GatherND");
  const Tensor picked = flat_rows(data, r).index_select(
      0, nnp::from_vector(r.rows, {static_cast<int64_t>(r.rows.size())}, data.device()));
  nnp::Shape shape = r.tuples_shape;
  shape.insert(shape.end(), r.row_shape.begin(), r.row_shape.end());
  return {picked.reshape(shape)};
}

// ScatterND and ScatterElements' reductions, on the host: each update
// applied in order to its element.
double reduce_into(double current, double update, const std::string& reduction) {
  if (reduction == "add") return current + update;
  if (reduction == "mul") return current * update;
  if (reduction == "max") return std::max(current, update);
  if (reduction == "min") return std::min(current, update);
  return update;
}
void check_reduction(const std::string& reduction, const char* op) {
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    invalid(std::string(op) + ": reduction '" + reduction + "' is not one of none, add, mul, max, min");
}
Tensor scattered(const Tensor& data, const std::vector<std::pair<int64_t, int64_t>>& targets, const Tensor& updates,
                 const std::string& reduction) {
  std::vector<double> out = host_reals(data), values = host_reals(updates);
  for (const auto& [to, from] : targets)
    out[static_cast<size_t>(to)] = reduce_into(out[static_cast<size_t>(to)], values[static_cast<size_t>(from)], reduction);
  return nnp::from_vector(out, shape_of(data), data.device()).to(data.dtype());
}

Tensors scatter_nd(const Tensors& in, const Node& a) {
  const Tensor &data = need(in, 0, "ScatterND"), &updates = need(in, 2, "ScatterND");
  const std::string reduction = attr_string(a, "reduction", "none");
  check_reduction(reduction, "ScatterND");
  const NdRows r = nd_rows(data, need(in, 1, "ScatterND"), 0, "ScatterND");
  const int64_t row_size =
      std::accumulate(r.row_shape.begin(), r.row_shape.end(), int64_t{1}, std::multiplies<int64_t>());
  if (updates.numel() != static_cast<int64_t>(r.rows.size()) * row_size)
    invalid("ScatterND: updates do not hold one row per index tuple");
  std::vector<std::pair<int64_t, int64_t>> targets;
  for (size_t t = 0; t < r.rows.size(); ++t)
    for (int64_t k = 0; k < row_size; ++k)
      targets.emplace_back(r.rows[t] * row_size + k, static_cast<int64_t>(t) * row_size + k);
  return {scattered(data, targets, updates, reduction)};
}

}  // namespace

// ScatterElements (and opset 9's Scatter): onnx_ops.cpp's add stays on the
// device; the other reductions come here.
Tensor scatter_elements_on_host(const Tensor& data, int32_t axis, const Tensor& indices, const Tensor& updates,
                                const std::string& reduction) {
  check_reduction(reduction, "ScatterElements");
  if (indices.shape() != updates.shape() || indices.ndim() != data.ndim())
    invalid("ScatterElements: indices and updates must have one shape, of data's rank");
  const std::vector<int64_t> idx = host_ints(indices);
  std::vector<int64_t> data_strides(static_cast<size_t>(data.ndim()), 1), index_strides = data_strides;
  for (int32_t d = data.ndim() - 2; d >= 0; --d) {
    data_strides[static_cast<size_t>(d)] = data_strides[static_cast<size_t>(d + 1)] * data.size(d + 1);
    index_strides[static_cast<size_t>(d)] = index_strides[static_cast<size_t>(d + 1)] * indices.size(d + 1);
  }
  std::vector<std::pair<int64_t, int64_t>> targets;
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t to = 0, rest = static_cast<int64_t>(i);
    for (int32_t d = 0; d < data.ndim(); ++d) {
      int64_t coordinate = rest / index_strides[static_cast<size_t>(d)];
      rest %= index_strides[static_cast<size_t>(d)];
      if (d == axis) {
        coordinate = idx[i] < 0 ? idx[i] + data.size(d) : idx[i];
        if (coordinate < 0 || coordinate >= data.size(d))
          invalid("ScatterElements: index " + std::to_string(idx[i]) + " is out of range for an axis of size " +
                  std::to_string(data.size(d)));
      } else if (coordinate >= data.size(d)) {
        invalid("ScatterElements: indices are larger than data");
      }
      to += coordinate * data_strides[static_cast<size_t>(d)];
    }
    targets.emplace_back(to, static_cast<int64_t>(i));
  }
  return scattered(data, targets, updates, reduction);
}

namespace {

Tensors non_zero(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "NonZero");
  if (x.ndim() == 0) invalid("NonZero: the input needs an axis");
  return {x.nonzero().transpose(0, 1).contiguous()};
}

Tensors top_k(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "TopK");
  const int32_t axis = wrap(attr_int(a, "axis", -1), x.ndim(), "TopK");
  const int64_t k = given(in, 1) ? host_ints(in[1]).at(0) : attr_int(a, "k", 0);
  if (k < 0 || k > x.size(axis)) invalid("TopK: k is out of range for the axis");
  auto [values, indices] = x.topk(k, axis, attr_int(a, "largest", 1) != 0, true);
  return {values, indices};
}

Tensors reverse_sequence(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "ReverseSequence");
  const std::vector<int64_t> lengths = host_ints(need(in, 1, "ReverseSequence"));
  const int32_t batch = wrap(attr_int(a, "batch_axis", 1), x.ndim(), "ReverseSequence");
  const int32_t time = wrap(attr_int(a, "time_axis", 0), x.ndim(), "ReverseSequence");
  if (batch == time || static_cast<int64_t>(lengths.size()) != x.size(batch))
    invalid("ReverseSequence: needs one length per batch entry and distinct batch and time axes");
  // Each batch entry's first `length` steps reversed: a gather along time.
  std::vector<int64_t> index(static_cast<size_t>(x.numel()));
  std::vector<int64_t> strides(static_cast<size_t>(x.ndim()), 1);
  for (int32_t d = x.ndim() - 2; d >= 0; --d) strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d + 1)] * x.size(d + 1);
  for (size_t i = 0; i < index.size(); ++i) {
    const int64_t t = (static_cast<int64_t>(i) / strides[static_cast<size_t>(time)]) % x.size(time);
    const int64_t b = (static_cast<int64_t>(i) / strides[static_cast<size_t>(batch)]) % x.size(batch);
    const int64_t length = std::min(lengths[static_cast<size_t>(b)], x.size(time));
    index[i] = t < length ? length - 1 - t : t;
  }
  return {x.gather(time, nnp::from_vector(index, shape_of(x), x.device()))};
}

// Unique: the distinct elements (or slices along axis), first occurrences'
// indices, each input's place among them, and counts.
Tensors unique(const Tensors& in, const Node& a) {
  Tensor x = need(in, 0, "Unique");
  const bool whole = !has(a, "axis");
  const int32_t axis = whole ? 0 : wrap(attr_int(a, "axis", 0), x.ndim(), "Unique");
  if (whole) x = x.reshape({-1});
  const Tensor moved = x.transpose(0, axis).contiguous();
  const int64_t count = moved.size(0), width = count == 0 ? 0 : moved.numel() / count;
  const std::vector<double> values = host_reals(moved);
  auto slice_less = [&](int64_t p, int64_t q) {
    return std::lexicographical_compare(values.begin() + p * width, values.begin() + (p + 1) * width,
                                        values.begin() + q * width, values.begin() + (q + 1) * width);
  };
  auto slice_equal = [&](int64_t p, int64_t q) {
    return std::equal(values.begin() + p * width, values.begin() + (p + 1) * width, values.begin() + q * width);
  };
  std::vector<int64_t> firsts;  // first occurrence of each distinct slice, in order of appearance
  std::vector<int64_t> inverse(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    auto it = std::find_if(firsts.begin(), firsts.end(), [&](int64_t f) { return slice_equal(f, i); });
    if (it == firsts.end()) firsts.push_back(i);
  }
  if (attr_int(a, "sorted", 1)) std::stable_sort(firsts.begin(), firsts.end(), slice_less);
  std::vector<int64_t> counts(firsts.size(), 0);
  for (int64_t i = 0; i < count; ++i)
    for (size_t u = 0; u < firsts.size(); ++u)
      if (slice_equal(firsts[u], i)) {
        inverse[static_cast<size_t>(i)] = static_cast<int64_t>(u);
        ++counts[u];
        break;
      }
  const int64_t distinct = static_cast<int64_t>(firsts.size());
  const Tensor picked = moved.index_select(0, nnp::from_vector(firsts, {distinct}, x.device())).transpose(0, axis);
  return {picked.contiguous(), nnp::from_vector(firsts, {distinct}, x.device()),
          nnp::from_vector(inverse, {count}, x.device()), nnp::from_vector(counts, {distinct}, x.device())};
}

Tensors bernoulli(const Tensors& in, const Node& a) {
  const Tensor& p = need(in, 0, "Bernoulli");
  const Dtype dtype = has(a, "dtype") ? dtype_of_onnx(attr_int(a, "dtype", 1), "Bernoulli") : p.dtype();
  return {nnp::rand(p.shape(), p.dtype(), p.device()).lt(p).to(dtype)};
}

// RandomUniform(Like) and RandomNormal(Like): the shape from the attribute
// or the input, the dtype from the attribute or the input (float otherwise).
template <bool Normal, bool Like>
Tensors random_draw(const Tensors& in, const Node& a) {
  nnp::Shape shape;
  std::optional<Dtype> dtype;
  nnp::Device device = nnp::Device::cpu();
  if (Like) {
    const Tensor& like = need(in, 0, "Random*Like");
    shape = like.shape();
    dtype = like.dtype();
    device = like.device();
  } else {
    shape = attr_ints(a, "shape");
    int64_t count = 1;
    for (int64_t d : shape)
      if (d < 0 || (d > 0 && count > kMaxElements / d))
        invalid("Random*: shape is negative or too large");
      else
        count *= d;
  }
  if (has(a, "dtype")) dtype = dtype_of_onnx(attr_int(a, "dtype", 1), "Random*");
  const Dtype out = dtype.value_or(Dtype::f32);
  if (Normal)
    return {(nnp::randn(shape, Dtype::f64, device) * attr_float(a, "scale", 1.0) + attr_float(a, "mean", 0.0)).to(out)};
  const double low = attr_float(a, "low", 0.0), high = attr_float(a, "high", 1.0);
  return {(nnp::rand(shape, Dtype::f64, device) * (high - low) + low).to(out)};
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t.insert({{"Bernoulli", bernoulli},
            {"Compress", compress},
            {"DepthToSpace", depth_to_space},
            {"EyeLike", eye_like},
            {"GatherND", gather_nd},
            {"NonZero", non_zero},
            {"OneHot", one_hot},
            {"RandomNormal", random_draw<true, false>},
            {"RandomNormalLike", random_draw<true, true>},
            {"RandomUniform", random_draw<false, false>},
            {"RandomUniformLike", random_draw<false, true>},
            {"ReverseSequence", reverse_sequence},
            {"ScatterND", scatter_nd},
            {"SpaceToDepth", space_to_depth},
            {"TopK", top_k},
            {"Unique", unique}});
}

}  // namespace nnp::library::onnx
