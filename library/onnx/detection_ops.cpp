// ONNX's detection and sampling operators: NonMaxSuppression, RoiAlign,
// GridSample and MaxUnpool. Their index arithmetic runs on the host over
// the (small) boxes, grids and indices, each index checked; results go back
// to the input's device. They carry no gradient.
#include <array>
#include <cmath>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

using Reals = std::vector<double>;

Tensor on_device(const Reals& values, const nnp::Shape& shape, const Tensor& like) {
  return nnp::from_vector(values, shape, like.device()).to(like.dtype());
}

// NonMaxSuppression: per batch and class, boxes by descending score (above
// score_threshold), each kept unless it overlaps a kept one by more than
// iou_threshold, at most max_output_boxes_per_class; [kept, 3] rows of
// (batch, class, box).
Tensors non_max_suppression(const Tensors& in, const Node& a) {
  const char* op = "NonMaxSuppression";
  const Tensor &boxes = need(in, 0, op), &scores = need(in, 1, op);
  if (boxes.ndim() != 3 || boxes.size(2) != 4 || scores.ndim() != 3 || scores.size(0) != boxes.size(0) ||
      scores.size(2) != boxes.size(1))
    invalid(std::string(op) + ": needs boxes [B, N, 4] and scores [B, C, N]");
  const int64_t limit = given(in, 2) && in[2].numel() > 0 ? host_ints(in[2]).at(0) : 0;
  const double iou_threshold = given(in, 3) && in[3].numel() > 0 ? host_reals(in[3]).at(0) : 0;
  const bool has_score_threshold = given(in, 4) && in[4].numel() > 0;
  const double score_threshold = has_score_threshold ? host_reals(in[4]).at(0) : 0;
  const bool centred = attr_int(a, "center_point_box", 0) != 0;
  const int64_t batches = boxes.size(0), n = boxes.size(1), classes = scores.size(1);
  const Reals b = host_reals(boxes), s = host_reals(scores);
  // Each box as (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2.
  auto corners = [&](int64_t batch, int64_t i) {
    const double* v = b.data() + (batch * n + i) * 4;
    if (centred) return std::array<double, 4>{v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    return std::array<double, 4>{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
  };
  auto iou = [](const std::array<double, 4>& p, const std::array<double, 4>& q) {
    const double h = std::max(0.0, std::min(p[2], q[2]) - std::max(p[0], q[0]));
    const double w = std::max(0.0, std::min(p[3], q[3]) - std::max(p[1], q[1]));
    const double inter = h * w, uni = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
    return uni > 0 ? inter / uni : 0.0;
  };
  std::vector<int64_t> selected;
  for (int64_t batch = 0; batch < batches; ++batch)
    for (int64_t c = 0; c < classes; ++c) {
      const double* score = s.data() + (batch * classes + c) * n;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (!has_score_threshold || score[i] > score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return score[p] > score[q]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= limit) break;
        const auto box = corners(batch, i);
        if (std::all_of(kept.begin(), kept.end(), [&](int64_t k) { return iou(box, corners(batch, k)) <= iou_threshold; }))
          kept.push_back(i);
      }
      for (int64_t i : kept) selected.insert(selected.end(), {batch, c, i});
    }
  const int64_t rows = static_cast<int64_t>(selected.size()) / 3;
  return {nnp::from_vector(selected, {rows, 3}, boxes.device())};
}

// PyTorch's (and ONNX's) reflection of a coordinate into [low, high] given as twice the bounds.
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - low);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + low : span - extra + low;
}

// GridSample (opset 16): X [N, C, H, W] sampled at grid [N, Ho, Wo, 2]
// (x, y in [-1, 1]), bilinear, nearest or bicubic, padded with zeros, the
// border or its reflection; PyTorch's grid_sample, whose outputs ONNX's tests hold.
Tensors grid_sample(const Tensors& in, const Node& a) {
  const char* op = "GridSample";
  const Tensor &x = need(in, 0, op), &grid = need(in, 1, op);
  if (x.ndim() != 4 || grid.ndim() != 4 || grid.size(3) != 2 || grid.size(0) != x.size(0))
    invalid(std::string(op) + ": needs X [N, C, H, W] and grid [N, Ho, Wo, 2]");
  const std::string mode = attr_string(a, "mode", "bilinear"), padding = attr_string(a, "padding_mode", "zeros");
  const bool corners = attr_int(a, "align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") invalid(std::string(op) + ": mode '" + mode + "' is unknown");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    invalid(std::string(op) + ": padding_mode '" + padding + "' is unknown");
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), ho = grid.size(1), wo = grid.size(2);
  const Reals xs = host_reals(x), g = host_reals(grid);
  Reals out(static_cast<size_t>(n * c * ho * wo));
  auto unnormalize = [corners](double v, int64_t size) {
    return corners ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2;
  };
  auto bound = [&](double v, int64_t size) {  // padding_mode applied to a coordinate
    if (padding == "border") return std::min(std::max(v, 0.0), static_cast<double>(size - 1));
    if (padding == "reflection") {
      v = corners ? reflect(v, 0, 2.0 * static_cast<double>(size - 1)) : reflect(v, -1, 2.0 * static_cast<double>(size) - 1);
      return std::min(std::max(v, 0.0), static_cast<double>(size - 1));
    }
    return v;
  };
  auto pixel = [&](const double* plane, int64_t yy, int64_t xx) {
    return yy < 0 || yy >= h || xx < 0 || xx >= w ? 0.0 : plane[yy * w + xx];
  };
  auto cubic = [](double t, double coefficient[4]) {
    constexpr double A = -0.75;
    auto near = [](double v) { return ((A + 2) * v - (A + 3)) * v * v + 1; };
    auto far = [](double v) { return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A; };
    coefficient[0] = far(t + 1);
    coefficient[1] = near(t);
    coefficient[2] = near(1 - t);
    coefficient[3] = far(2 - t);
  };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < ho; ++i)
      for (int64_t j = 0; j < wo; ++j) {
        const double* at = g.data() + ((b * ho + i) * wo + j) * 2;
        double ix = unnormalize(at[0], w), iy = unnormalize(at[1], h);
        if (mode != "bicubic") {
          ix = bound(ix, w);
          iy = bound(iy, h);
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const double* plane = xs.data() + (b * c + ch) * h * w;
          double v = 0;
          if (mode == "nearest") {
            v = pixel(plane, static_cast<int64_t>(std::nearbyint(iy)), static_cast<int64_t>(std::nearbyint(ix)));
          } else if (mode == "bilinear") {
            const double x0 = std::floor(ix), y0 = std::floor(iy), tx = ix - x0, ty = iy - y0;
            const int64_t xi = static_cast<int64_t>(x0), yi = static_cast<int64_t>(y0);
            v = pixel(plane, yi, xi) * (1 - tx) * (1 - ty) + pixel(plane, yi, xi + 1) * tx * (1 - ty) +
                pixel(plane, yi + 1, xi) * (1 - tx) * ty + pixel(plane, yi + 1, xi + 1) * tx * ty;
          } else {
            const double x0 = std::floor(ix), y0 = std::floor(iy);
            double cx[4], cy[4];
            cubic(ix - x0, cx);
            cubic(iy - y0, cy);
            for (int p = 0; p < 4; ++p)
              for (int q = 0; q < 4; ++q) {
                const double yy = bound(y0 - 1 + p, h), xx = bound(x0 - 1 + q, w);
                v += cy[p] * cx[q] * pixel(plane, static_cast<int64_t>(yy), static_cast<int64_t>(xx));
              }
          }
          out[static_cast<size_t>(((b * c + ch) * ho + i) * wo + j)] = v;
        }
      }
  return {on_device(out, {n, c, ho, wo}, x)};
}

// RoiAlign: each region of X (rois [R, 4] as x1, y1, x2, y2 in the input's
// scale times spatial_scale, batch_indices [R]) pooled into
// [output_height, output_width] bins by averaging (or the largest of) a grid
// of bilinear samples per bin: ONNX Runtime's and torchvision's roi_align.
Tensors roi_align(const Tensors& in, const Node& a) {
  const char* op = "RoiAlign";
  const Tensor &x = need(in, 0, op), &rois = need(in, 1, op), &batch_index = need(in, 2, op);
  if (x.ndim() != 4 || rois.ndim() != 2 || rois.size(1) != 4 || batch_index.numel() != rois.size(0))
    invalid(std::string(op) + ": needs X [N, C, H, W], rois [R, 4] and batch_indices [R]");
  const int64_t out_h = attr_int(a, "output_height", 1), out_w = attr_int(a, "output_width", 1);
  const int64_t ratio = attr_int(a, "sampling_ratio", 0);
  const double scale = attr_float(a, "spatial_scale", 1.0);
  const bool max_mode = attr_string(a, "mode", "avg") == "max";
  const double offset = attr_string(a, "coordinate_transformation_mode", "half_pixel") == "half_pixel" ? 0.5 : 0.0;
  if (out_h < 1 || out_w < 1 || out_h * out_w > kMaxElements || ratio < 0) invalid(std::string(op) + ": bad output size");
  const int64_t c = x.size(1), h = x.size(2), w = x.size(3), r = rois.size(0);
  const Reals xs = host_reals(x), boxes = host_reals(rois);
  const std::vector<int64_t> batches = host_ints(batch_index);
  Reals out(static_cast<size_t>(r * c * out_h * out_w));
  for (int64_t k = 0; k < r; ++k) {
    const int64_t b = batches[static_cast<size_t>(k)];
    if (b < 0 || b >= x.size(0)) invalid(std::string(op) + ": a batch index is out of range");
    const double* box = boxes.data() + k * 4;
    const double x1 = box[0] * scale - offset, y1 = box[1] * scale - offset;
    double rw = box[2] * scale - offset - x1, rh = box[3] * scale - offset - y1;
    if (offset == 0) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bin_h = rh / static_cast<double>(out_h), bin_w = rw / static_cast<double>(out_w);
    const int64_t grid_h = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(out_h)));
    const int64_t grid_w = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(out_w)));
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t ch = 0; ch < c; ++ch) {
      const double* plane = xs.data() + (b * c + ch) * h * w;
      for (int64_t ph = 0; ph < out_h; ++ph)
        for (int64_t pw = 0; pw < out_w; ++pw) {
          double total = 0, best = 0;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy)
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              double yy = y1 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
              double xx = x1 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
              double v = 0;
              double weights[4] = {0, 0, 0, 0};
              double values[4] = {0, 0, 0, 0};
              if (!(yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 || xx > static_cast<double>(w))) {
                yy = std::max(yy, 0.0);
                xx = std::max(xx, 0.0);
                int64_t y0 = static_cast<int64_t>(yy), x0 = static_cast<int64_t>(xx), y_1, x_1;
                if (y0 >= h - 1) {
                  y0 = y_1 = h - 1;
                  yy = static_cast<double>(y0);
                } else {
                  y_1 = y0 + 1;
                }
                if (x0 >= w - 1) {
                  x0 = x_1 = w - 1;
                  xx = static_cast<double>(x0);
                } else {
                  x_1 = x0 + 1;
                }
                const double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0);
                weights[0] = (1 - ly) * (1 - lx);
                weights[1] = (1 - ly) * lx;
                weights[2] = ly * (1 - lx);
                weights[3] = ly * lx;
                values[0] = plane[y0 * w + x0];
                values[1] = plane[y0 * w + x_1];
                values[2] = plane[y_1 * w + x0];
                values[3] = plane[y_1 * w + x_1];
              }
              if (max_mode) {  // ONNX Runtime: the largest of the weighted corner values
                for (int q = 0; q < 4; ++q) {
                  const double wv = weights[q] * values[q];
                  if (first || wv > best) best = wv;
                  first = false;
                }
              } else {
                for (int q = 0; q < 4; ++q) v += weights[q] * values[q];
                total += v;
              }
            }
          out[static_cast<size_t>(((k * c + ch) * out_h + ph) * out_w + pw)] = max_mode ? best : total / count;
        }
    }
  }
  return {on_device(out, {r, c, out_h, out_w}, x)};
}

// MaxUnpool: X's values placed at their indices (MaxPool's, over the whole
// output) in zeros of the output shape (given, or the pool's inverse).
Tensors max_unpool(const Tensors& in, const Node& a) {
  const char* op = "MaxUnpool";
  const Tensor &x = need(in, 0, op), &indices = need(in, 1, op);
  if (x.ndim() < 3 || indices.shape() != x.shape()) invalid(std::string(op) + ": needs X [N, C, ...] and indices of its shape");
  const size_t d = static_cast<size_t>(x.ndim() - 2);
  const std::vector<int64_t> kernel = attr_ints(a, "kernel_shape");
  std::vector<int64_t> strides = attr_ints(a, "strides"), pads = attr_ints(a, "pads");
  if (strides.empty()) strides.assign(d, 1);
  if (pads.empty()) pads.assign(2 * d, 0);
  if (kernel.size() != d || strides.size() != d || pads.size() != 2 * d)
    invalid(std::string(op) + ": kernel_shape, strides and pads need a value per spatial axis");
  // The indices count over the pool's input, the shape the pool inverts to;
  // a larger output_shape keeps each element's coordinates.
  nnp::Shape pooled{x.size(0), x.size(1)};
  for (size_t i = 0; i < d; ++i)
    pooled.push_back((x.size(static_cast<int32_t>(i + 2)) - 1) * strides[i] + kernel[i] - pads[i] - pads[i + d]);
  const nnp::Shape shape = given(in, 2) ? host_ints(in[2]) : pooled;
  if (shape.size() != pooled.size()) invalid(std::string(op) + ": output_shape has the wrong rank");
  auto count = [&](const nnp::Shape& s) {
    int64_t total = 1;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] < 0 || (s[i] > 0 && total > kMaxElements / s[i]) || (i < 2 && s[i] != x.size(static_cast<int32_t>(i))))
        invalid(std::string(op) + ": the output shape is negative, too large or of other samples and channels");
      else
        total *= s[i];
    return total;
  };
  const int64_t pooled_total = count(pooled), total = count(shape);
  Reals out(static_cast<size_t>(total), 0.0);
  const Reals values = host_reals(x);
  const std::vector<int64_t> at = host_ints(indices);
  for (size_t i = 0; i < at.size(); ++i) {
    if (at[i] < 0 || at[i] >= pooled_total) invalid(std::string(op) + ": index " + std::to_string(at[i]) + " is out of range");
    int64_t rest = at[i], target = 0, place = 1;
    for (size_t k = pooled.size(); k-- > 0;) {  // the coordinates in pooled, placed in shape
      const int64_t coordinate = rest % pooled[k];
      rest /= pooled[k];
      if (coordinate >= shape[k]) invalid(std::string(op) + ": output_shape is smaller than the pool's input");
      target += coordinate * place;
      place *= shape[k];
    }
    out[static_cast<size_t>(target)] = values[i];
  }
  return {on_device(out, shape, x)};
}

}  // namespace

void add_detection_ops(OpTable& t) {
  t.insert({{"GridSample", grid_sample},
            {"MaxUnpool", max_unpool},
            {"NonMaxSuppression", non_max_suppression},
            {"RoiAlign", roi_align}});
}

}  // namespace nnp::library::onnx
