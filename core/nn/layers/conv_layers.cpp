// nn.Conv1d, nn.Conv2d (stride, padding, dilation, groups), nn.MaxPool2d,
// nn.AvgPool2d and nn.AdaptiveAvgPool2d. The sliding windows are gathered
// with index_select (im2col), so every layer is composed of differentiable
// ops and GEMM does the heavy work.
#include <cmath>
#include <limits>
#include <mutex>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;

namespace {

struct Pair {
  int64_t h, w;
};

Pair pair_of(const Attrs& a, const std::string& name, const std::string& layer) {
  std::vector<int64_t> v = a.integers(name);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw Error(NNP_INVALID_ARGUMENT, layer + ": " + name + " takes one or two values, got " + std::to_string(v.size()));
}

std::string pair_text(Pair p) { return "(" + std::to_string(p.h) + ", " + std::to_string(p.w) + ")"; }

// Pads dims 2 and 3 of x with `value` (differentiable: cat of constants).
Tensor pad2d(const Tensor& x, Pair pad, double value) {
  if (pad.h == 0 && pad.w == 0) return x;
  nnp::Shape s = x.shape();
  Tensor out = x;
  if (pad.h > 0) {
    Tensor rows = nnp::full({s[0], s[1], pad.h, s[3]}, value, x.dtype(), x.device());
    out = cat({rows, out, rows}, 2);
  }
  if (pad.w > 0) {
    nnp::Shape t = out.shape();
    Tensor cols = nnp::full({t[0], t[1], t[2], pad.w}, value, x.dtype(), x.device());
    out = cat({cols, out, cols}, 3);
  }
  return out;
}

// Output size of the windows over a padded input.
struct Geometry {
  int64_t hp, wp, oh, ow;
};

Geometry geometry(const std::string& layer, const Tensor& x, Pair kernel, Pair stride, Pair pad, Pair dilation) {
  if (x.ndim() != 4) throw Error(NNP_SHAPE_MISMATCH, layer + ": expected [N, C, H, W], got " + shape_text(x.shape()));
  // In 128 bits: padding, dilation and kernel sizes come from specs and may
  // be anything up to INT64_MAX.
  using Wide = __int128;
  const Wide hp = Wide{x.size(2)} + 2 * Wide{pad.h}, wp = Wide{x.size(3)} + 2 * Wide{pad.w};
  const Wide span_h = Wide{dilation.h} * (kernel.h - 1) + 1, span_w = Wide{dilation.w} * (kernel.w - 1) + 1;
  if (hp > INT64_MAX || wp > INT64_MAX)
    throw Error(NNP_INVALID_ARGUMENT,
                layer + ": padding " + pair_text(pad) + " makes the input larger than 64-bit sizes");
  if (span_h > hp || span_w > wp)
    throw Error(NNP_SHAPE_MISMATCH, layer + ": kernel " + pair_text(kernel) + " with dilation " + pair_text(dilation) +
                                        " spans more than the padded input " + shape_text(x.shape()));
  Geometry g;
  g.hp = static_cast<int64_t>(hp);
  g.wp = static_cast<int64_t>(wp);
  g.oh = static_cast<int64_t>((hp - span_h) / stride.h + 1);
  g.ow = static_cast<int64_t>((wp - span_w) / stride.w + 1);
  return g;
}

// Offset in an Hp x Wp plane of tap (ki, kj) of window (i, j).
struct Taps {
  Pair kernel, stride, dilation;
  int64_t wp;
  int64_t at(int64_t ki, int64_t kj, int64_t i, int64_t j) const {
    return (i * stride.h + ki * dilation.h) * wp + (j * stride.w + kj * dilation.w);
  }
};

// A layer's window index, rebuilt only when the input's shape or device
// changes (a training loop sees one shape, so the index is built once).
class IndexCache {
 public:
  template <typename Build>
  Tensor get(const Tensor& x, Build build) {
    std::lock_guard<std::mutex> lock(mutex_);
    nnp::Shape shape = x.shape();
    if (!index_.defined() || shape != shape_ || x.device() != device_) {
      index_ = nnp::from_vector(build(), x.device());
      shape_ = std::move(shape);
      device_ = x.device();
    }
    return index_;
  }

 private:
  std::mutex mutex_;
  Tensor index_;
  nnp::Shape shape_;
  nnp::Device device_ = nnp::Device::cpu();
};

// The sliding windows of x [N, C, H, W] per plane, window-major: [N, C,
// OH*OW, kh*kw], so each window's taps are adjacent for the reductions.
Tensor unfold(const Tensor& x, const Geometry& g, const Taps& t, Pair pad, double pad_value, IndexCache& cache) {
  const int64_t n = x.size(0), c = x.size(1), taps = t.kernel.h * t.kernel.w;
  Tensor index = cache.get(x, [&] {
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(g.oh * g.ow * taps));
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j)
        for (int64_t ki = 0; ki < t.kernel.h; ++ki)
          for (int64_t kj = 0; kj < t.kernel.w; ++kj) offsets.push_back(t.at(ki, kj, i, j));
    return offsets;
  });
  Tensor flat = pad2d(x, pad, pad_value).reshape({n, c, g.hp * g.wp});
  return flat.index_select(2, index).reshape({n, c, g.oh * g.ow, taps});
}

// im2col for convolution: [C * kh*kw, N * OH*OW], so that one GEMM with the
// weights [O, C * kh*kw] convolves the whole batch (and the weight gradient
// is one GEMM too, not a sum over per-sample products).
Tensor im2col(const Tensor& x, const Geometry& g, const Taps& t, Pair pad, IndexCache& cache) {
  const int64_t n = x.size(0), c = x.size(1), plane = g.hp * g.wp, windows = g.oh * g.ow;
  Tensor index = cache.get(x, [&] {
    std::vector<int64_t> offsets;  // [taps, N, windows] into [N * plane]
    offsets.reserve(static_cast<size_t>(t.kernel.h * t.kernel.w * n * windows));
    for (int64_t ki = 0; ki < t.kernel.h; ++ki)
      for (int64_t kj = 0; kj < t.kernel.w; ++kj)
        for (int64_t s = 0; s < n; ++s)
          for (int64_t i = 0; i < g.oh; ++i)
            for (int64_t j = 0; j < g.ow; ++j) offsets.push_back(s * plane + t.at(ki, kj, i, j));
    return offsets;
  });
  Tensor planes = pad2d(x, pad, 0.0).permute({1, 0, 2, 3}).reshape({c, n * plane});
  return planes.index_select(1, index).reshape({c * t.kernel.h * t.kernel.w, n * windows});
}

void check_positive(const std::string& layer, const char* name, Pair p, int64_t minimum) {
  if (p.h < minimum || p.w < minimum)
    throw Error(NNP_INVALID_ARGUMENT,
                layer + ": " + name + " " + pair_text(p) + " must be >= " + std::to_string(minimum));
}

}  // namespace

struct Conv2d : nnp::nn::Module {
  int64_t in_channels, out_channels, groups;
  Pair kernel, stride, padding, dilation;
  Tensor weight, bias;
  IndexCache windows;
  explicit Conv2d(const Attrs& a, const char* name = "Conv2d")
      : Module(name),
        in_channels(a.integer("in_channels")),
        out_channels(a.integer("out_channels")),
        groups(a.integer("groups")),
        kernel(pair_of(a, "kernel_size", name)),
        stride(pair_of(a, "stride", name)),
        padding(pair_of(a, "padding", name)),
        dilation(pair_of(a, "dilation", name)) {
    check_positive(name, "kernel_size", kernel, 1);
    check_positive(name, "stride", stride, 1);
    check_positive(name, "padding", padding, 0);
    check_positive(name, "dilation", dilation, 1);
    if (groups < 1 || in_channels % groups || out_channels % groups)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": in_channels and out_channels must be divisible by groups");
    weight = register_parameter("weight", nnp::empty({out_channels, in_channels / groups, kernel.h, kernel.w}));
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_channels / groups * kernel.h * kernel.w));
    nnp::nn::init::uniform_(weight, -bound, bound);  // kaiming_uniform_(a=sqrt(5)), as PyTorch
    if (a.boolean("bias")) {
      bias = register_parameter("bias", nnp::empty({out_channels}));
      nnp::nn::init::uniform_(bias, -bound, bound);
    } else {
      register_parameter("bias", Tensor());
    }
  }
  Tensor forward(const Tensor& x) override { return conv(x); }
  Tensor conv(const Tensor& x) {
    if (x.ndim() != 4 || x.size(1) != in_channels)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected [N, " + std::to_string(in_channels) + ", H, W], got " +
                                          shape_text(x.shape()));
    Geometry g = geometry(type_name(), x, kernel, stride, padding, dilation);
    const int64_t n = x.size(0), k = in_channels / groups * kernel.h * kernel.w;
    // [G, C/G * kh*kw, N * L] against weights [G, O/G, C/G * kh*kw].
    Tensor cols =
        im2col(x, g, {kernel, stride, dilation, g.wp}, padding, windows).reshape({groups, k, n * g.oh * g.ow});
    Tensor w = weight.reshape({groups, out_channels / groups, k});
    Tensor y = w.matmul(cols).reshape({out_channels, n, g.oh, g.ow}).permute({1, 0, 2, 3});
    return bias.defined() ? y + bias.reshape({1, out_channels, 1, 1}) : y.contiguous();
  }
  std::string extra_repr() const override {
    std::string text = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                       ", kernel_size=" + pair_text(kernel) + ", stride=" + pair_text(stride);
    if (padding.h || padding.w) text += ", padding=" + pair_text(padding);
    if (dilation.h != 1 || dilation.w != 1) text += ", dilation=" + pair_text(dilation);
    if (groups != 1) text += ", groups=" + std::to_string(groups);
    if (!bias.defined()) text += ", bias=False";
    return text;
  }
};

// Conv1d runs as a Conv2d over a height of 1.
struct Conv1d : Conv2d {
  explicit Conv1d(const Attrs& a) : Conv2d(a, "Conv1d") {}
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != 3) throw Error(NNP_SHAPE_MISMATCH, "Conv1d: expected [N, C, L], got " + shape_text(x.shape()));
    Tensor y = conv(x.unsqueeze(2));
    return y.squeeze(2);
  }
  std::string extra_repr() const override {
    std::string text = std::to_string(in_channels) + ", " + std::to_string(out_channels) + ", kernel_size=(" +
                       std::to_string(kernel.w) + ",), stride=(" + std::to_string(stride.w) + ",)";
    if (padding.w) text += ", padding=(" + std::to_string(padding.w) + ",)";
    if (dilation.w != 1) text += ", dilation=(" + std::to_string(dilation.w) + ",)";
    if (groups != 1) text += ", groups=" + std::to_string(groups);
    if (!bias.defined()) text += ", bias=False";
    return text;
  }
};

std::vector<AttrDecl> conv_attrs() {
  return {{"in_channels", NNP_ATTR_INT, true, nullptr, "channels of the input"},
          {"out_channels", NNP_ATTR_INT, true, nullptr, "channels produced"},
          {"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size (one value or one per dimension)"},
          {"stride", NNP_ATTR_INTS, false, "1", "step between windows"},
          {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
          {"dilation", NNP_ATTR_INTS, false, "1", "spacing between kernel elements"},
          {"groups", NNP_ATTR_INT, false, "1", "blocked connections from input to output channels"},
          {"bias", NNP_ATTR_BOOL, false, "true", "learn an additive bias"}};
}

// Conv1d's attributes describe the length only; Conv2d then sees (1, k).
struct Conv1dAttrs {
  static Attrs widen(const Attrs& a) {
    Attrs wide;
    wide.set("in_channels", a.integer("in_channels")).set("out_channels", a.integer("out_channels"));
    wide.set("groups", a.integer("groups")).set("bias", a.boolean("bias"));
    for (const char* name : {"kernel_size", "stride", "padding", "dilation"}) {
      std::vector<int64_t> v = a.integers(name);
      if (v.size() != 1) throw Error(NNP_INVALID_ARGUMENT, std::string("Conv1d: ") + name + " takes one value");
      wide.set(name, std::vector<int64_t>{std::string(name) == "padding" ? 0 : 1, v[0]});
    }
    return wide;
  }
};
struct Conv1dLayer : Conv1d {
  explicit Conv1dLayer(const Attrs& a) : Conv1d(Conv1dAttrs::widen(a)) {}
};

struct Pool2d : nnp::nn::Module {
  Pair kernel, stride, padding;
  IndexCache windows;
  Pool2d(const char* name, const Attrs& a)
      : Module(name),
        kernel(pair_of(a, "kernel_size", name)),
        stride(a.has("stride") ? pair_of(a, "stride", name) : kernel),
        padding(pair_of(a, "padding", name)) {
    check_positive(name, "kernel_size", kernel, 1);
    check_positive(name, "stride", stride, 1);
    if (padding.h * 2 > kernel.h || padding.w * 2 > kernel.w)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": pad should be at most half of the effective kernel size");
    if (a.boolean("ceil_mode"))
      throw Error(NNP_UNIMPLEMENTED, std::string(name) + ": ceil_mode=True is not supported yet; use padding instead");
  }
  static std::string number(Pair p) { return p.h == p.w ? std::to_string(p.h) : pair_text(p); }
};

struct MaxPool2d : Pool2d {
  Pair dilation;
  explicit MaxPool2d(const Attrs& a) : Pool2d("MaxPool2d", a), dilation(pair_of(a, "dilation", "MaxPool2d")) {}
  Tensor forward(const Tensor& x) override {
    Geometry g = geometry("MaxPool2d", x, kernel, stride, padding, dilation);
    Tensor cols =
        unfold(x, g, {kernel, stride, dilation, g.wp}, padding, -std::numeric_limits<double>::infinity(), windows);
    // The first maximum of each window takes the gradient, as PyTorch's does.
    Tensor best = cols.argmax(3, true);
    return cols.gather(3, best).reshape({x.size(0), x.size(1), g.oh, g.ow});
  }
  std::string extra_repr() const override {
    return "kernel_size=" + number(kernel) + ", stride=" + number(stride) + ", padding=" + number(padding) +
           ", dilation=" + number(dilation) + ", ceil_mode=False";
  }
};

struct AvgPool2d : Pool2d {
  explicit AvgPool2d(const Attrs& a) : Pool2d("AvgPool2d", a) {
    if (!a.boolean("count_include_pad"))
      throw Error(NNP_UNIMPLEMENTED, "AvgPool2d: count_include_pad=False is not supported yet");
  }
  Tensor forward(const Tensor& x) override {
    Geometry g = geometry("AvgPool2d", x, kernel, stride, padding, {1, 1});
    Tensor cols = unfold(x, g, {kernel, stride, {1, 1}, g.wp}, padding, 0.0, windows);
    return cols.mean({3}).reshape({x.size(0), x.size(1), g.oh, g.ow});
  }
  std::string extra_repr() const override {
    return "kernel_size=" + number(kernel) + ", stride=" + number(stride) + ", padding=" + number(padding);
  }
};

struct AdaptiveAvgPool2d : nnp::nn::Module {
  Pair output;
  explicit AdaptiveAvgPool2d(const Attrs& a)
      : Module("AdaptiveAvgPool2d"), output(pair_of(a, "output_size", "AdaptiveAvgPool2d")) {
    check_positive("AdaptiveAvgPool2d", "output_size", output, 1);
  }
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != 4)
      throw Error(NNP_SHAPE_MISMATCH, "AdaptiveAvgPool2d: expected [N, C, H, W], got " + shape_text(x.shape()));
    const int64_t h = x.size(2), w = x.size(3);
    // Window i covers [floor(i H / out), ceil((i + 1) H / out)).
    std::vector<Tensor> rows;
    for (int64_t i = 0; i < output.h; ++i) {
      int64_t h0 = i * h / output.h, h1 = ((i + 1) * h + output.h - 1) / output.h;
      std::vector<Tensor> cells;
      for (int64_t j = 0; j < output.w; ++j) {
        int64_t w0 = j * w / output.w, w1 = ((j + 1) * w + output.w - 1) / output.w;
        cells.push_back(x.slice(2, h0, h1).slice(3, w0, w1).mean({2, 3}, true));
      }
      rows.push_back(cat(cells, 3));
    }
    return cat(rows, 2);
  }
  std::string extra_repr() const override {
    return "output_size=" + (output.h == output.w ? std::to_string(output.h) : pair_text(output));
  }
};

void register_conv_layers(LayerRegistry& registry) {
  add_builtin<Conv2d>(registry, "nn.Conv2d", "2-D convolution over [N, C, H, W]", conv_attrs());
  add_builtin<Conv1dLayer>(registry, "nn.Conv1d", "1-D convolution over [N, C, L]", conv_attrs());
  add_builtin<MaxPool2d>(registry, "nn.MaxPool2d", "maximum over sliding windows",
                         {{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size"},
                          {"stride", NNP_ATTR_INTS, false, nullptr, "step between windows (default: kernel_size)"},
                          {"padding", NNP_ATTR_INTS, false, "0", "-inf added on each side"},
                          {"dilation", NNP_ATTR_INTS, false, "1", "spacing between window elements"},
                          {"ceil_mode", NNP_ATTR_BOOL, false, "false", "round output sizes up (not supported yet)"}});
  add_builtin<AvgPool2d>(registry, "nn.AvgPool2d", "mean over sliding windows",
                         {{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size"},
                          {"stride", NNP_ATTR_INTS, false, nullptr, "step between windows (default: kernel_size)"},
                          {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
                          {"ceil_mode", NNP_ATTR_BOOL, false, "false", "round output sizes up (not supported yet)"},
                          {"count_include_pad", NNP_ATTR_BOOL, false, "true", "count padding in the mean"}});
  add_builtin<AdaptiveAvgPool2d>(registry, "nn.AdaptiveAvgPool2d", "mean pooling to a fixed output size",
                                 {{"output_size", NNP_ATTR_INTS, true, nullptr, "output height and width"}});
}

}  // namespace nnp::core::nn::layers
