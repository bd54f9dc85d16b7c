// The padding layers: nn.ReflectionPad1d/2d/3d, nn.ReplicationPad1d/2d/3d,
// nn.CircularPad1d/2d/3d, nn.ZeroPad1d/2d/3d and nn.ConstantPad1d/2d/3d,
// each F::pad with its mode over the last 1, 2 or 3 dimensions. padding is
// one value for every side or (left, right[, top, bottom[, front, back]]),
// as PyTorch's.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct Pad : nnp::nn::Module {
  int32_t dims;
  std::string mode;
  std::vector<int64_t> padding;
  double value;

  Pad(const std::string& kind, int32_t d, const std::string& m, const Attrs& a)
      : Module(kind + "Pad" + std::to_string(d) + "d"),
        dims(d),
        mode(m),
        padding(a.integers("padding")),
        value(a.has("value") ? a.real("value") : 0.0) {
    if (padding.size() == 1) padding.assign(static_cast<size_t>(2 * dims), padding[0]);
    if (padding.size() != static_cast<size_t>(2 * dims))
      throw Error(NNP_INVALID_ARGUMENT, type_name() + ": padding takes one value or " + std::to_string(2 * dims) +
                                            ", got " + std::to_string(padding.size()));
    if (mode != kConstant)
      for (int64_t p : padding)
        if (p < 0)
          throw Error(NNP_INVALID_ARGUMENT, type_name() + ": padding must be >= 0, got " + shape_text(padding));
  }
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != dims + 1 && x.ndim() != dims + 2)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected " + std::to_string(dims + 1) + "-D or " +
                                          std::to_string(dims + 2) + "-D (batched) input, got " +
                                          shape_text(x.shape()));
    return F::pad(x, F::PadFuncOptions(padding).mode(mode).value(value));
  }
  std::string extra_repr() const override {
    std::string text = "(";
    for (size_t i = 0; i < padding.size(); ++i) text += (i ? ", " : "") + std::to_string(padding[i]);
    text += ")";
    if (type_name().rfind("Constant", 0) == 0) return "padding=" + text + ", value=" + nnp::nn::format_float(value);
    return text;
  }
};

template <int D>
struct ReflectionPad : Pad {
  explicit ReflectionPad(const Attrs& a) : Pad("Reflection", D, kReflect, a) {}
};
template <int D>
struct ReplicationPad : Pad {
  explicit ReplicationPad(const Attrs& a) : Pad("Replication", D, kReplicate, a) {}
};
template <int D>
struct CircularPad : Pad {
  explicit CircularPad(const Attrs& a) : Pad("Circular", D, kCircular, a) {}
};
template <int D>
struct ZeroPad : Pad {
  explicit ZeroPad(const Attrs& a) : Pad("Zero", D, kConstant, a) {}
};
template <int D>
struct ConstantPad : Pad {
  explicit ConstantPad(const Attrs& a) : Pad("Constant", D, kConstant, a) {}
};

namespace {

template <template <int> class Layer, int D>
void add_pad(nnp_plugin_host* host, const char* kind, const char* doc, bool constant) {
  const std::string name = std::string("nn.") + kind + "Pad" + std::to_string(D) + "d";  // register_layer_type copies it
  std::vector<AttrDecl> attrs{
      {"padding", NNP_ATTR_INTS, true, nullptr, "one size for every side, or (left, right, top, bottom, front, back)"}};
  if (constant) attrs.push_back({"value", NNP_ATTR_FLOAT, true, nullptr, "the fill value"});
  add_builtin<Layer<D>>(host, name.c_str(), doc, attrs);
}

template <template <int> class Layer>
void add_pads(nnp_plugin_host* host, const char* kind, const char* doc, bool constant = false) {
  add_pad<Layer, 1>(host, kind, doc, constant);
  add_pad<Layer, 2>(host, kind, doc, constant);
  add_pad<Layer, 3>(host, kind, doc, constant);
}

}  // namespace

void register_padding_layers(nnp_plugin_host* host) {
  add_pads<ReflectionPad>(host, "Reflection", "pads by reflecting the input at its border");
  add_pads<ReplicationPad>(host, "Replication", "pads by repeating the input's border");
  add_pads<CircularPad>(host, "Circular", "pads by wrapping the input around");
  add_pads<ZeroPad>(host, "Zero", "pads with zeros");
  add_pads<ConstantPad>(host, "Constant", "pads with a constant value", true);
}

}  // namespace nnp::library::layers
