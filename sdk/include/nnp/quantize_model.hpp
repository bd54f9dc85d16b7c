// nnp/quantize_model.hpp - quantizing a model's layers, as
// torch.ao.quantization does (ABI 1.7).
//
//   namespace quant = nnp::quantization;
//   quant::quantize_dynamic(model);              // Linear -> int8 Linear
//
//   auto run = quant::prepare(model);            // static: observers in
//   for (auto& batch : calibration) model(batch);
//   run.convert();                               // Linear/Conv2d(+ReLU) -> int8
//
// Weights are quantized per output channel, symmetric qint8 (PyTorch's
// default_per_channel_weight_observer); static activations use
// MinMaxObserver over quint8 [0, 127] (default_per_channel_qconfig), and a
// ReLU that follows a Linear or Conv2d in a Sequential is fused into it.
// Layers are swapped where their parent is a container (Sequential,
// ModuleList, ModuleDict) or where they are the model itself: a model built
// from a spec is quantized whole; a layer inside a module that calls its
// members directly (a TransformerEncoderLayer's linear1, a C++ module's
// holder) stays float.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <nnp/nn.hpp>
#include <nnp/quantization.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnp::quantization {

using nnp::nn::Attrs;
using nnp::nn::ModuleHandle;

// A weight [out, ...] as int8 per output channel, symmetric.
struct QuantizedWeight {
  Tensor values;       // i8, the weight's shape
  Tensor scales;       // f64 [out]
  Tensor zero_points;  // i64 [out], all 0
};

inline QuantizedWeight quantize_weight(const Tensor& weight) {
  const Tensor rows = weight.detach().to(Dtype::f32).reshape({weight.size(0), -1});
  const std::vector<float> lo = rows.amin({1}).to_vector<float>(), hi = rows.amax({1}).to_vector<float>();
  const QParams p =
      qparams_from_range(lo, hi, std::numeric_limits<float>::epsilon(), kQInt8, true, observer_range(kQInt8, false));
  QuantizedWeight q;
  q.scales = from_vector(std::vector<double>(p.scale.begin(), p.scale.end()), weight.device());
  q.zero_points = zeros({weight.size(0)}, Dtype::i64, weight.device());
  q.values = quantize_per_channel(weight.detach(), q.scales, q.zero_points, 0, kQInt8).int_repr();
  return q;
}

namespace detail {

// Puts `replacement` where the module at `path` is (the root itself when
// path is empty: the caller takes the returned module).
inline ModuleHandle swap_module(ModuleHandle& root, const std::string& path, const ModuleHandle& replacement) {
  if (path.empty()) return replacement;
  const size_t dot = path.rfind('.');
  ModuleHandle parent = dot == std::string::npos ? root : root.get_submodule(path.substr(0, dot));
  const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
  check(api().register_module(parent.handle(), name.c_str(), replacement.handle()));
  return root;
}

// Whether the module at `path` is the root or a child of a container
// (Sequential, ModuleList, ModuleDict), whose calls go through its
// children. A built-in or C++ layer that calls member holders (a
// TransformerEncoderLayer's linear1) would keep calling the float layer, so
// those are left alone.
inline bool swappable(const ModuleHandle& root, const std::string& path) {
  if (path.empty()) return true;
  const size_t dot = path.rfind('.');
  const std::string type = (dot == std::string::npos ? root : root.get_submodule(path.substr(0, dot))).type_name();
  return type == "Sequential" || type == "ModuleList" || type == "ModuleDict";
}

// Loads a quantized layer's weight, scales and bias from the float layer.
inline void load_weights(ModuleHandle& q, const ModuleHandle& source) {
  const Tensor weight = source.get_tensor("weight");
  QuantizedWeight w = quantize_weight(weight);
  StateDict state = {{"weight", w.values}, {"weight_scale", w.scales}, {"weight_zero_point", w.zero_points}};
  for (auto& [name, tensor] : source.named_parameters(false))
    if (name == "bias") state.emplace_back("bias", tensor.detach().to(Dtype::f32));
  for (auto& [name, tensor] : q.state_dict())
    if (name != "weight" && name != "weight_scale" && name != "weight_zero_point" && name != "bias")
      state.emplace_back(name, tensor);  // the static layers' activation parameters, set after
  q.load_state_dict(state);
}

inline Attrs linear_attrs(const ModuleHandle& m) {
  const Tensor w = m.get_tensor("weight");
  bool has_bias = false;
  for (auto& [name, tensor] : m.named_parameters(false)) has_bias |= name == "bias" && tensor.defined();
  Attrs a;
  a.set("in_features", w.size(1)).set("out_features", w.size(0)).set("bias", has_bias);
  return a;
}

}  // namespace detail

// torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=qint8)
// with per-channel weights: every Linear becomes nn.quantized.dynamic.Linear
// (MultiheadAttention's NonDynamicallyQuantizableLinear is left, as
// PyTorch leaves it). Returns the model (a new module if it is a Linear).
inline ModuleHandle quantize_dynamic(ModuleHandle model) {
  std::vector<std::pair<std::string, ModuleHandle>> linears;
  for (auto& [path, m] : model.named_modules())
    if (m.type_name() == "Linear" && detail::swappable(model, path)) linears.emplace_back(path, m);
  for (auto& [path, m] : linears) {
    ModuleHandle q = nn::create_layer("nn.quantized.dynamic.Linear", detail::linear_attrs(m));
    detail::load_weights(q, m);
    model = detail::swap_module(model, path, q);
  }
  return model;
}

// Static post-training quantization in two steps: prepare observes,
// convert swaps in the int8 layers with what was observed.
class StaticQuantization {
 public:
  explicit StaticQuantization(ModuleHandle model) : model_(std::move(model)) {
    std::vector<std::pair<std::string, ModuleHandle>> all = model_.named_modules();
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string type = all[i].second.type_name();
      if ((type != "Linear" && type != "Conv2d") || !detail::swappable(model_, all[i].first)) continue;
      Site site;
      site.path = all[i].first;
      site.layer = all[i].second;
      site.input = observer();
      site.output = observer();
      // A ReLU right after it in a Sequential is fused (fuse_modules).
      const std::string relu_path = next_sibling(site.path);
      for (auto& [path, m] : all)
        if (!relu_path.empty() && path == relu_path && m.type_name() == "ReLU") site.relu_path = path;
      ModuleHandle input = site.input, output = site.output;
      hooks_.push_back(site.layer.register_forward_pre_hook(
          [input](ModuleHandle&, const std::vector<Tensor>& args) mutable -> std::optional<std::vector<Tensor>> {
            if (!args.empty()) input(args[0]);
            return std::nullopt;
          }));
      ModuleHandle watched = site.relu_path.empty() ? site.layer : model_.get_submodule(site.relu_path);
      hooks_.push_back(
          watched.register_forward_hook([output](ModuleHandle&, const std::vector<Tensor>&, const Tensor& y) mutable {
            output(y);
            return Tensor();
          }));
      sites_.push_back(site);
    }
    if (sites_.empty())
      throw Error(NNP_INVALID_ARGUMENT, "quantization prepare: the model has no Linear or Conv2d to quantize");
  }

  // The model, observed: run calibration batches through it.
  ModuleHandle& model() { return model_; }

  // Swaps the layers and returns the quantized model; the observers go.
  ModuleHandle convert() {
    for (HookHandle& h : hooks_) h.remove();
    hooks_.clear();
    for (Site& site : sites_) {
      const QParams in = qparams(site.input), out = qparams(site.output);
      const bool conv = site.layer.type_name() == "Conv2d";
      Attrs a = conv ? conv_attrs(site.layer) : detail::linear_attrs(site.layer);
      a.set("relu", !site.relu_path.empty());
      ModuleHandle q = nn::create_layer(conv ? "nn.quantized.Conv2d" : "nn.quantized.Linear", a);
      detail::load_weights(q, site.layer);
      q.load_state_dict({{"input_scale", full({}, in.scale[0])},
                         {"input_zero_point", full({}, static_cast<double>(in.zero_point[0]), Dtype::i64)},
                         {"scale", full({}, out.scale[0])},
                         {"zero_point", full({}, static_cast<double>(out.zero_point[0]), Dtype::i64)}},
                        false);
      model_ = detail::swap_module(model_, site.path, q);
      if (!site.relu_path.empty())
        model_ = detail::swap_module(model_, site.relu_path, nn::create_layer("nn.Identity"));
    }
    sites_.clear();
    return model_;
  }

 private:
  struct Site {
    std::string path, relu_path;
    ModuleHandle layer, input, output;
  };

  static ModuleHandle observer() {
    Attrs a;
    a.set("quant_min", int64_t{0}).set("quant_max", int64_t{127});
    return nn::create_layer("nn.MinMaxObserver", a);
  }
  static QParams qparams(const ModuleHandle& observer) {
    const float lo = observer.get_buffer("min_val").item<float>(), hi = observer.get_buffer("max_val").item<float>();
    if (std::isinf(lo) || std::isinf(hi))
      throw Error(NNP_INVALID_ARGUMENT,
                  "quantization convert: a layer saw no data; run calibration batches through the model first");
    return qparams_from_range({lo}, {hi}, std::numeric_limits<float>::epsilon(), kQUInt8, false,
                              observer_range(kQUInt8, false, 0, 127));
  }
  // "a.3" -> "a.4" when the parent is a Sequential; "" otherwise.
  std::string next_sibling(const std::string& path) const {
    const size_t dot = path.rfind('.');
    const std::string parent_path = dot == std::string::npos ? "" : path.substr(0, dot);
    const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
    ModuleHandle parent = parent_path.empty() ? model_ : model_.get_submodule(parent_path);
    if (parent.type_name() != "Sequential") return "";
    const auto children = parent.named_children();
    for (size_t i = 0; i + 1 < children.size(); ++i)
      if (children[i].first == name) return (parent_path.empty() ? "" : parent_path + ".") + children[i + 1].first;
    return "";
  }
  static Attrs conv_attrs(const ModuleHandle& m) {
    const Tensor w = m.get_tensor("weight");
    bool has_bias = false;
    for (auto& [name, tensor] : m.named_parameters(false)) has_bias |= name == "bias" && tensor.defined();
    const std::string repr = m.repr();
    Attrs a;
    a.set("in_channels", w.size(1)).set("out_channels", w.size(0));
    a.set("kernel_size", std::vector<int64_t>{w.size(2), w.size(3)}).set("bias", has_bias);
    a.set("stride", tuple_after(repr, "stride=", {1, 1})).set("padding", tuple_after(repr, "padding=", {0, 0}));
    a.set("dilation", tuple_after(repr, "dilation=", {1, 1}));
    // Its settings are read from its repr, which is PyTorch's format.
    for (const char* unsupported : {"groups=", "padding=same", "padding_mode="})
      if (repr.find(unsupported) != std::string::npos)
        throw Error(NNP_UNIMPLEMENTED, "quantization: a Conv2d with " + std::string(unsupported) +
                                           "... is not quantized (" + repr +
                                           "); quantized Conv2d has groups 1, numeric zero padding");
    return a;
  }
  // "(2, 2)" after key in a repr, or the default when the repr omits it.
  static std::vector<int64_t> tuple_after(const std::string& repr, const std::string& key,
                                          std::vector<int64_t> fallback) {
    const size_t at = repr.find(key + "(");
    if (at == std::string::npos) return fallback;
    const size_t open = at + key.size() + 1, close = repr.find(')', open);
    std::vector<int64_t> v;
    std::string body = repr.substr(open, close - open);
    for (size_t start = 0; start < body.size();) {
      size_t comma = body.find(',', start);
      v.push_back(std::stoll(body.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return v;
  }

  ModuleHandle model_;
  std::vector<Site> sites_;
  std::vector<HookHandle> hooks_;
};

inline StaticQuantization prepare(ModuleHandle model) { return StaticQuantization(std::move(model)); }

}  // namespace nnp::quantization
