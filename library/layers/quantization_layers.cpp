// torch.ao.quantization's observers and FakeQuantize, with PyTorch's
// state-dict keys (eps, min_val, max_val; fake_quant_enabled,
// observer_enabled, scale, zero_point, activation_post_process.*), written
// with the public C++ API as a plugin's layers are.
#include <cmath>
#include <limits>
#include <nnp/nnp.hpp>
#include <nnp/quantization.hpp>
#include <nnp/tensor_print.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;

namespace {

// What every observer is told: the dtype, scheme and range of the integers.
struct ObserverSettings {
  Dtype dtype = kQUInt8;
  std::string qscheme;
  bool symmetric = false, per_channel = false, reduce_range = false;
  QRange range;
  double eps = std::numeric_limits<float>::epsilon();

  ObserverSettings(const Attrs& a, const char* type, bool per_channel_type) {
    const std::string d = a.string("dtype");
    if (d != "quint8" && d != "qint8")
      throw Error(NNP_INVALID_ARGUMENT, std::string(type) + ": dtype '" + d + "' is not quint8 or qint8");
    dtype = d == "quint8" ? kQUInt8 : kQInt8;
    qscheme = a.has("qscheme") ? a.string("qscheme") : (per_channel_type ? "per_channel_affine" : "per_tensor_affine");
    const bool known = per_channel_type ? (qscheme == "per_channel_affine" || qscheme == "per_channel_symmetric")
                                        : (qscheme == "per_tensor_affine" || qscheme == "per_tensor_symmetric");
    if (!known)
      throw Error(NNP_INVALID_ARGUMENT, std::string(type) + ": qscheme '" + qscheme + "' is not one of " +
                                            (per_channel_type ? "per_channel_affine, per_channel_symmetric"
                                                              : "per_tensor_affine, per_tensor_symmetric"));
    symmetric = qscheme.find("symmetric") != std::string::npos;
    per_channel = per_channel_type;
    reduce_range = a.boolean("reduce_range");
    std::optional<int64_t> qmin, qmax;
    if (a.has("quant_min")) qmin = a.integer("quant_min");
    if (a.has("quant_max")) qmax = a.integer("quant_max");
    range = observer_range(dtype, reduce_range, qmin, qmax);
    eps = a.real("eps");
    if (!(eps > 0)) throw Error(NNP_INVALID_ARGUMENT, std::string(type) + ": eps must be positive");
  }
};

std::vector<float> host_floats(const Tensor& t) { return t.to(Dtype::f32).contiguous().to_vector<float>(); }

// The observers' shared part: the buffers and calculate_qparams.
struct Observer : nnp::nn::Module {
  ObserverSettings settings;
  Tensor eps, min_val, max_val;

  Observer(const Attrs& a, const char* type, bool per_channel) : Module(type), settings(a, type, per_channel) {
    eps = register_buffer("eps", nnp::full({1}, settings.eps));
    // PyTorch starts per-tensor observers at +inf/-inf, per-channel ones empty.
    min_val = register_buffer("min_val", per_channel ? nnp::empty({0}) : nnp::full({}, INFINITY));
    max_val = register_buffer("max_val", per_channel ? nnp::empty({0}) : nnp::full({}, -INFINITY));
  }

  QParams calculate_qparams() const {
    const std::vector<float> lo = host_floats(get_buffer("min_val")), hi = host_floats(get_buffer("max_val"));
    return qparams_from_range(lo, hi, host_floats(get_buffer("eps"))[0], settings.dtype, settings.symmetric,
                              settings.range);
  }

  std::string extra_repr() const override {
    if (settings.per_channel) return "min_val=" + min_val.str() + ", max_val=" + max_val.str();
    return "min_val=" + nnp::nn::format_float(min_val.item<float>()) +
           ", max_val=" + nnp::nn::format_float(max_val.item<float>());
  }
};

struct MinMaxObserver : Observer {
  explicit MinMaxObserver(const Attrs& a, const char* type = "MinMaxObserver") : Observer(a, type, false) {}
  Tensor forward(const Tensor& x) override {
    if (x.numel() == 0) return x;
    const Tensor v = x.detach().to(Dtype::f32);
    update(v.amin(), v.amax());
    return x;
  }
  virtual void update(const Tensor& lo, const Tensor& hi) {
    min_val.copy_(lo.minimum(min_val));
    max_val.copy_(hi.maximum(max_val));
  }
};

// min_val += c * (batch min - min_val); the first batch sets it.
struct MovingAverageMinMaxObserver : MinMaxObserver {
  double averaging_constant;
  explicit MovingAverageMinMaxObserver(const Attrs& a)
      : MinMaxObserver(a, "MovingAverageMinMaxObserver"), averaging_constant(a.real("averaging_constant")) {}
  void update(const Tensor& lo, const Tensor& hi) override {
    if (std::isinf(min_val.item<float>()) && std::isinf(max_val.item<float>())) {
      min_val.copy_(lo);
      max_val.copy_(hi);
    } else {
      min_val.copy_(min_val + (lo - min_val) * averaging_constant);
      max_val.copy_(max_val + (hi - max_val) * averaging_constant);
    }
  }
};

struct PerChannelMinMaxObserver : Observer {
  int64_t ch_axis;
  explicit PerChannelMinMaxObserver(const Attrs& a)
      : Observer(a, "PerChannelMinMaxObserver", true), ch_axis(a.integer("ch_axis")) {
    // A state dict sizes min_val/max_val (they start empty, as PyTorch's
    // resize in _load_from_state_dict): the buffers take the incoming shape
    // first, filled as "nothing observed" so a refused load leaves an
    // observer that still behaves as new.
    nnp_hook_handle* hook = nullptr;
    check(api().register_state_hook(handle(), NNP_LOAD_STATE_DICT_PRE, resize_for_load, nullptr, nullptr, &hook));
    api().hook_release(hook);
  }

  static nnp_status resize_for_load(nnp_module* m, nnp_list* state, nnp_list*, const char* prefix, void*) {
    const nnp_api& c = api();
    for (const char* name : {"min_val", "max_val"}) {
      const std::string key = std::string(prefix ? prefix : "") + name;
      const int32_t i = c.list_find(state, key.c_str());
      if (i < 0) continue;
      const nnp_tensor* incoming = c.list_tensor(state, i);
      if (incoming == nullptr || c.tensor_ndim(incoming) != 1) continue;  // the load names the problem
      const int64_t n = c.tensor_shape(incoming)[0];
      nnp_tensor* fresh = nullptr;
      const double fill = name[1] == 'i' ? INFINITY : -INFINITY;
      nnp_status s = c.full(&n, 1, fill, NNP_F32, c.tensor_device(incoming), &fresh);
      if (s == NNP_OK) s = c.register_buffer(m, name, fresh, 1);
      c.tensor_release(fresh);
      if (s != NNP_OK) return s;
    }
    return NNP_OK;
  }

  Tensor forward(const Tensor& x) override {
    if (x.numel() == 0) return x;
    const int64_t n = x.ndim();
    const int64_t axis = ch_axis < 0 ? ch_axis + n : ch_axis;
    if (axis < 0 || axis >= n)
      throw Error(NNP_INVALID_ARGUMENT, "PerChannelMinMaxObserver: ch_axis " + std::to_string(ch_axis) +
                                            " is out of range for an input of " + std::to_string(n) + " dimensions");
    std::vector<int32_t> order(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::swap(order[0], order[static_cast<size_t>(axis)]);
    const Tensor y = x.detach().to(Dtype::f32).permute(order).reshape({x.size(static_cast<int32_t>(axis)), -1});
    Tensor lo = y.amin({1}), hi = y.amax({1});
    Tensor old_min = get_buffer("min_val"), old_max = get_buffer("max_val");
    if (old_min.numel() != 0) {
      if (old_min.numel() != lo.numel())
        throw Error(NNP_SHAPE_MISMATCH, "PerChannelMinMaxObserver: observed " + std::to_string(old_min.numel()) +
                                            " channels before and " + std::to_string(lo.numel()) + " now");
      lo = lo.minimum(old_min);
      hi = hi.maximum(old_max);
    }
    min_val = register_buffer("min_val", lo);
    max_val = register_buffer("max_val", hi);
    return x;
  }
};

// Quantization-aware training: observes, then fake-quantizes with what it
// observed (torch.ao.quantization.FakeQuantize).
struct FakeQuantize : nnp::nn::Module {
  ObserverSettings settings;
  std::string observer_type;
  int64_t ch_axis;
  nnp::nn::ModuleHandle observer;
  Tensor fake_quant_enabled, observer_enabled, scale, zero_point;

  static ObserverSettings observer_settings(const Attrs& a) {
    const std::string type = a.string("observer");
    return ObserverSettings(a, "FakeQuantize", type == "PerChannelMinMaxObserver");
  }

  explicit FakeQuantize(const Attrs& a)
      : Module("FakeQuantize"),
        settings(observer_settings(a)),
        observer_type(a.string("observer")),
        ch_axis(settings.per_channel ? a.integer("ch_axis") : -1) {
    if (observer_type != "MinMaxObserver" && observer_type != "MovingAverageMinMaxObserver" &&
        observer_type != "PerChannelMinMaxObserver")
      throw Error(NNP_INVALID_ARGUMENT, "FakeQuantize: observer '" + observer_type +
                                            "' is not MinMaxObserver, MovingAverageMinMaxObserver or "
                                            "PerChannelMinMaxObserver");
    fake_quant_enabled = register_buffer("fake_quant_enabled", nnp::full({1}, 1, Dtype::u8));
    observer_enabled = register_buffer("observer_enabled", nnp::full({1}, 1, Dtype::u8));
    scale = register_buffer("scale", nnp::full({1}, 1.0));
    zero_point = register_buffer("zero_point", nnp::full({1}, 0, Dtype::i32));
    Attrs o;
    o.set("dtype", a.string("dtype")).set("qscheme", settings.qscheme).set("reduce_range", settings.reduce_range);
    o.set("quant_min", a.integer("quant_min")).set("quant_max", a.integer("quant_max")).set("eps", settings.eps);
    if (observer_type == "MovingAverageMinMaxObserver") o.set("averaging_constant", a.real("averaging_constant"));
    if (settings.per_channel) o.set("ch_axis", ch_axis);
    observer = register_module("activation_post_process", nnp::nn::create_layer("nn." + observer_type, o));
  }

  Tensor forward(const Tensor& x) override {
    if (get_buffer("observer_enabled").item<uint8_t>() == 1) {
      observer(x.detach());
      const std::vector<float> lo = host_floats(observer.get_buffer("min_val"));
      const std::vector<float> hi = host_floats(observer.get_buffer("max_val"));
      const QParams p = qparams_from_range(lo, hi, host_floats(observer.get_buffer("eps"))[0], settings.dtype,
                                           settings.symmetric, settings.range);
      const int64_t n = static_cast<int64_t>(p.scale.size());
      scale = register_buffer("scale", from_vector(p.scale, {n}, x.device()));
      zero_point = register_buffer("zero_point", from_vector(p.zero_point, {n}, x.device()).to(Dtype::i32));
    }
    if (get_buffer("fake_quant_enabled").item<uint8_t>() != 1) return x;
    const Tensor s = get_buffer("scale"), z = get_buffer("zero_point");
    if (settings.per_channel)
      return fake_quantize_per_channel_affine(x, s, z, ch_axis, settings.range.quant_min, settings.range.quant_max);
    return fake_quantize_per_tensor_affine(x, s.item<float>(), z.item<int32_t>(), settings.range.quant_min,
                                           settings.range.quant_max);
  }

  std::string extra_repr() const override {
    return "fake_quant_enabled=" + get_buffer("fake_quant_enabled").str() +
           ", observer_enabled=" + get_buffer("observer_enabled").str() +
           ", quant_min=" + std::to_string(settings.range.quant_min) +
           ", quant_max=" + std::to_string(settings.range.quant_max) + ", dtype=torch." +
           (settings.dtype == kQUInt8 ? "quint8" : "qint8") + ", qscheme=torch." + settings.qscheme +
           ", ch_axis=" + std::to_string(ch_axis) + ", scale=" + get_buffer("scale").str() +
           ", zero_point=" + get_buffer("zero_point").str();
  }
};

std::vector<AttrDecl> observer_attrs(const char* qscheme) {
  return {{"dtype", NNP_ATTR_STRING, false, "\"quint8\"", "quint8 or qint8"},
          {"qscheme", NNP_ATTR_STRING, false, qscheme, "affine or symmetric (per tensor or per channel)"},
          {"reduce_range", NNP_ATTR_BOOL, false, "false", "use half the integer range (fbgemm's saturation)"},
          {"quant_min", NNP_ATTR_INT, false, nullptr, "smallest integer (with quant_max: a customized range)"},
          {"quant_max", NNP_ATTR_INT, false, nullptr, "largest integer"},
          {"eps", NNP_ATTR_FLOAT, false, "1.1920928955078125e-07", "smallest scale"}};
}

}  // namespace

void register_quantization_layers(nnp_plugin_host* host) {
  add_builtin<MinMaxObserver>(host, "nn.MinMaxObserver", "records the running min and max of what it sees",
                              observer_attrs("\"per_tensor_affine\""));
  std::vector<AttrDecl> moving = observer_attrs("\"per_tensor_affine\"");
  moving.push_back({"averaging_constant", NNP_ATTR_FLOAT, false, "0.01", "weight of each new batch"});
  add_builtin<MovingAverageMinMaxObserver>(host, "nn.MovingAverageMinMaxObserver",
                                           "records a moving average of the min and max of each batch", moving);
  std::vector<AttrDecl> per_channel = observer_attrs("\"per_channel_affine\"");
  per_channel.push_back({"ch_axis", NNP_ATTR_INT, false, "0", "the channel dimension"});
  add_builtin<PerChannelMinMaxObserver>(host, "nn.PerChannelMinMaxObserver",
                                        "records the min and max of each channel", per_channel);
  std::vector<AttrDecl> fake = observer_attrs("\"per_tensor_affine\"");
  for (AttrDecl& d : fake) {
    if (std::string(d.name) == "quant_min") d.default_json = "0";
    if (std::string(d.name) == "quant_max") d.default_json = "255";
  }
  fake.push_back({"observer", NNP_ATTR_STRING, false, "\"MovingAverageMinMaxObserver\"",
                  "MinMaxObserver, MovingAverageMinMaxObserver or PerChannelMinMaxObserver"});
  fake.push_back({"averaging_constant", NNP_ATTR_FLOAT, false, "0.01", "for MovingAverageMinMaxObserver"});
  fake.push_back({"ch_axis", NNP_ATTR_INT, false, "0", "for PerChannelMinMaxObserver"});
  add_builtin<FakeQuantize>(host, "nn.FakeQuantize",
                            "observes, then quantizes and dequantizes (quantization-aware training)", fake);
}

}  // namespace nnp::library::layers
