// ONNX's Resize (and opset 9's Upsample, which the version converter turns
// into Resize): nearest, linear and cubic, every coordinate transformation
// ONNX 1.12 defines. Each resized axis is one product with a weight matrix
// [input size, output size] worked out on the host (ONNX's interpolations
// are separable), so a resize runs on any device and differentiates;
// nearest on integers gathers instead.
#include <array>
#include <cmath>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

struct AxisPlan {
  std::vector<double> weights;  // [in, out], column-major by output: weights[o * in + i]
  std::vector<int64_t> nearest;  // for nearest: the input index of each output
  std::vector<uint8_t> outside;  // tf_crop_and_resize: the output lies outside the input
};

struct Settings {
  std::string mode, transform, nearest_mode;
  double cubic_a, extrapolation;
  bool exclude_outside;
};

// Where output index o falls on an input axis of `in` elements (ONNX's
// coordinate transformation modes). `resized` is the input's length times
// the scale, unrounded, as ONNX's reference takes it; roi's [start, end] is
// tf_crop_and_resize's.
double source_coordinate(const Settings& s, int64_t o, int64_t in, double resized, double scale, double start,
                         double end) {
  const double x = static_cast<double>(o), last = static_cast<double>(in - 1);
  if (s.transform == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (s.transform == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (s.transform == "align_corners") return resized == 1 ? 0 : x * last / (resized - 1);
  if (s.transform == "asymmetric") return x / scale;
  if (s.transform == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (s.transform == "tf_crop_and_resize")
    return resized > 1 ? start * last + x * (end - start) * last / (resized - 1) : 0.5 * (start + end) * last;
  invalid("Resize: coordinate_transformation_mode '" + s.transform + "' is not one ONNX defines");
}

int64_t nearest_index(const Settings& s, double c) {
  const double f = std::floor(c), fraction = c - f;
  if (s.nearest_mode == "floor") return static_cast<int64_t>(f);
  if (s.nearest_mode == "ceil") return static_cast<int64_t>(std::ceil(c));
  if (s.nearest_mode == "round_prefer_ceil") return static_cast<int64_t>(fraction >= 0.5 ? f + 1 : f);
  if (s.nearest_mode == "round_prefer_floor") return static_cast<int64_t>(fraction > 0.5 ? f + 1 : f);
  invalid("Resize: nearest_mode '" + s.nearest_mode + "' is not one ONNX defines");
}

// The cubic convolution's four coefficients for neighbours floor(c) - 1 .. floor(c) + 2.
std::array<double, 4> cubic_coefficients(double t, double a) {
  auto far = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };       // 1 < |x| < 2
  auto near = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };            // |x| <= 1
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

AxisPlan plan_axis(const Settings& s, int64_t in, int64_t out, double scale, double start, double end) {
  AxisPlan p;
  p.weights.assign(static_cast<size_t>(in * out), 0.0);
  p.nearest.assign(static_cast<size_t>(out), 0);
  p.outside.assign(static_cast<size_t>(out), 0);
  auto clamp = [in](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    const double c = source_coordinate(s, o, in, static_cast<double>(in) * scale, scale, start, end);
    double* column = p.weights.data() + o * in;
    if (s.transform == "tf_crop_and_resize" && (c < 0 || c > static_cast<double>(in - 1))) {
      p.outside[static_cast<size_t>(o)] = 1;
      continue;
    }
    if (s.mode == "nearest") {
      const int64_t i = clamp(nearest_index(s, c));
      p.nearest[static_cast<size_t>(o)] = i;
      column[i] = 1;
    } else if (s.mode == "linear") {
      const double f = std::floor(c), t = c - f;
      column[clamp(static_cast<int64_t>(f))] += 1 - t;
      column[clamp(static_cast<int64_t>(f) + 1)] += t;
    } else if (s.mode == "cubic") {
      const double f = std::floor(c);
      const std::array<double, 4> k = cubic_coefficients(c - f, s.cubic_a);
      double total = 0;
      for (int j = 0; j < 4; ++j) {
        const int64_t i = static_cast<int64_t>(f) - 1 + j;
        if (s.exclude_outside && (i < 0 || i >= in)) continue;
        column[clamp(i)] += k[static_cast<size_t>(j)];
        total += k[static_cast<size_t>(j)];
      }
      if (s.exclude_outside && total != 0)
        for (int64_t i = 0; i < in; ++i) column[i] /= total;
    } else {
      invalid("Resize: mode '" + s.mode + "' is not nearest, linear or cubic");
    }
  }
  return p;
}

Tensors resize(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Resize");
  const int32_t rank = x.ndim();
  const Settings s{attr_string(a, "mode", "nearest"), attr_string(a, "coordinate_transformation_mode", "half_pixel"),
                   attr_string(a, "nearest_mode", "round_prefer_floor"), attr_float(a, "cubic_coeff_a", -0.75),
                   attr_float(a, "extrapolation_value", 0.0), attr_int(a, "exclude_outside", 0) != 0};
  // Inputs: X, roi, scales, sizes (opset 11+); opset 10's Resize: X, scales.
  const bool opset10 = in.size() == 2;
  const Tensor* scales_in = opset10 ? &in[1] : given(in, 2) && in[2].numel() > 0 ? &in[2] : nullptr;
  const Tensor* sizes_in = !opset10 && given(in, 3) && in[3].numel() > 0 ? &in[3] : nullptr;
  if (!scales_in && !sizes_in) invalid("Resize: needs scales or sizes");
  const std::vector<double> scales = scales_in ? host_reals(*scales_in) : std::vector<double>{};
  const std::vector<int64_t> sizes = sizes_in ? host_ints(*sizes_in) : std::vector<int64_t>{};
  if ((scales_in && static_cast<int32_t>(scales.size()) != rank) || (sizes_in && static_cast<int32_t>(sizes.size()) != rank))
    invalid("Resize: scales and sizes need one value per axis");
  std::vector<double> roi = !opset10 && given(in, 1) ? host_reals(in[1]) : std::vector<double>{};
  if (s.transform == "tf_crop_and_resize" && static_cast<int32_t>(roi.size()) != 2 * rank)
    invalid("Resize: tf_crop_and_resize needs roi with two values per axis");
  Tensor y = x;
  for (int32_t axis = 0; axis < rank; ++axis) {
    const int64_t input = x.size(axis);
    const double scale =
        sizes_in ? static_cast<double>(sizes[static_cast<size_t>(axis)]) / static_cast<double>(input) : scales[static_cast<size_t>(axis)];
    const int64_t output = sizes_in ? sizes[static_cast<size_t>(axis)]
                                    : static_cast<int64_t>(std::floor(static_cast<double>(input) * scale));
    if (!(scale > 0) || output < 0 || output > kMaxElements) invalid("Resize: a scale or size is out of range");
    const double start = roi.empty() ? 0 : roi[static_cast<size_t>(axis)], end = roi.empty() ? 1 : roi[static_cast<size_t>(axis + rank)];
    if (output == input && scale == 1 && s.transform != "tf_crop_and_resize") continue;
    if (input == 0) invalid("Resize: an axis to resize is empty");
    const AxisPlan p = plan_axis(s, input, output, scale, start, end);
    if (s.mode == "nearest" && !floating(y)) {
      y = y.index_select(axis, nnp::from_vector(p.nearest, {output}, y.device()));
      continue;
    }
    const Tensor weights = nnp::from_vector(p.weights, {output, input}, y.device()).to(y.dtype()).transpose(0, 1);
    y = y.transpose(axis, rank - 1).matmul(weights).transpose(axis, rank - 1);
    if (std::any_of(p.outside.begin(), p.outside.end(), [](uint8_t v) { return v != 0; })) {
      nnp::Shape along(static_cast<size_t>(rank), 1);
      along[static_cast<size_t>(axis)] = output;
      std::vector<double> outside(p.outside.begin(), p.outside.end());
      const Tensor mask = nnp::from_vector(outside, along, y.device()).to(y.dtype());
      y = y + mask * s.extrapolation;
    }
  }
  return {y.contiguous()};
}

}  // namespace

void add_resize_ops(OpTable& t) {
  t.insert({{"Resize", resize}});
}

}  // namespace nnp::library::onnx
