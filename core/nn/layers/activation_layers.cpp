// Activation layers: nn.ReLU, nn.LeakyReLU, nn.GELU, nn.SiLU, nn.Sigmoid,
// nn.Tanh, nn.Softmax, nn.LogSoftmax.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// A parameter-free layer applying one unary op.
template <nnp_unary_op Op>
struct Pointwise : nnp::nn::Module {
  explicit Pointwise(const char* name) : Module(name) {}
  Tensor forward(const Tensor& x) override { return x.unary(Op); }
};
struct ReLU : Pointwise<NNP_UNARY_RELU> {
  explicit ReLU(const Attrs&) : Pointwise("ReLU") {}
};
struct SiLU : Pointwise<NNP_UNARY_SILU> {
  explicit SiLU(const Attrs&) : Pointwise("SiLU") {}
};
struct Sigmoid : Pointwise<NNP_UNARY_SIGMOID> {
  explicit Sigmoid(const Attrs&) : Pointwise("Sigmoid") {}
};
struct Tanh : Pointwise<NNP_UNARY_TANH> {
  explicit Tanh(const Attrs&) : Pointwise("Tanh") {}
};

struct LeakyReLU : nnp::nn::Module {
  double slope;
  explicit LeakyReLU(const Attrs& a) : Module("LeakyReLU"), slope(a.real("negative_slope")) {}
  Tensor forward(const Tensor& x) override { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(slope)); }
  std::string extra_repr() const override { return "negative_slope=" + nnp::nn::format_float(slope); }
};

struct GELU : nnp::nn::Module {
  std::string approximate;
  explicit GELU(const Attrs& a) : Module("GELU"), approximate(a.string("approximate")) {
    if (approximate != "none" && approximate != "tanh")
      throw Error(NNP_INVALID_ARGUMENT, "GELU: approximate must be 'none' or 'tanh', got '" + approximate + "'");
  }
  Tensor forward(const Tensor& x) override { return F::gelu(x, F::GELUFuncOptions().approximate(approximate)); }
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
};

// PyTorch's rule when dim is not given (legacy implicit dimension).
int32_t implicit_softmax_dim(int32_t ndim) { return ndim == 0 || ndim == 1 || ndim == 3 ? 0 : 1; }

template <bool Log>
struct SoftmaxLayer : nnp::nn::Module {
  bool has_dim;
  int32_t dim;
  explicit SoftmaxLayer(const Attrs& a)
      : Module(Log ? "LogSoftmax" : "Softmax"), has_dim(a.has("dim")), dim(has_dim ? dim_of(a.integer("dim")) : 0) {}
  // A tensor has at most 8 dimensions: a dim past int32 was truncated silently.
  int32_t dim_of(int64_t value) const {
    if (value < -NNP_MAX_DIMS || value >= NNP_MAX_DIMS)
      throw Error(NNP_INVALID_ARGUMENT, std::string(Log ? "LogSoftmax" : "Softmax") + ": dim " + std::to_string(value) +
                                            " is out of range (a tensor has at most " + std::to_string(NNP_MAX_DIMS) +
                                            " dimensions)");
    return static_cast<int32_t>(value);
  }
  Tensor forward(const Tensor& x) override {
    int32_t d = has_dim ? dim : implicit_softmax_dim(x.ndim());
    return Log ? F::log_softmax(x, d) : F::softmax(x, d);
  }
  std::string extra_repr() const override { return has_dim ? "dim=" + std::to_string(dim) : "dim=None"; }
};

void register_activation_layers(LayerRegistry& registry) {
  add_builtin<ReLU>(registry, "nn.ReLU", "max(0, x)", {});
  add_builtin<LeakyReLU>(registry, "nn.LeakyReLU", "x if x > 0 else negative_slope * x",
                         {{"negative_slope", NNP_ATTR_FLOAT, false, "0.01", "slope for negative inputs"}});
  add_builtin<GELU>(registry, "nn.GELU", "x * Phi(x), exact or tanh-approximated",
                    {{"approximate", NNP_ATTR_STRING, false, "\"none\"", "'none' (erf) or 'tanh'"}});
  add_builtin<SiLU>(registry, "nn.SiLU", "x * sigmoid(x)", {});
  add_builtin<Sigmoid>(registry, "nn.Sigmoid", "1 / (1 + exp(-x))", {});
  add_builtin<Tanh>(registry, "nn.Tanh", "tanh(x)", {});
  add_builtin<SoftmaxLayer<false>>(registry, "nn.Softmax", "softmax along dim",
                                   {{"dim", NNP_ATTR_INT, false, nullptr, "dimension the values sum to 1 along"}});
  add_builtin<SoftmaxLayer<true>>(registry, "nn.LogSoftmax", "log of softmax along dim",
                                  {{"dim", NNP_ATTR_INT, false, nullptr, "dimension of the softmax"}});
}

}  // namespace nnp::core::nn::layers
