// Layers that fail in the ways a careless vendor's do: a forward that
// throws, a custom backward that throws, and one that returns its gradient
// in another dtype. Their failures must name the layer type and the plugin.
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>

namespace {

using nnp::Tensor;

struct ThrowingForward : nnp::nn::Module {
  explicit ThrowingForward(const nnp::nn::Attrs&) : Module("ThrowingForward") {}
  Tensor forward(const Tensor&) override { throw nnp::Error(NNP_DEVICE_ERROR, "the accelerator caught fire"); }
};

struct ThrowingBackwardFn {
  static constexpr const char* name = "ThrowingBackward";
  static std::vector<Tensor> forward(nnp::FunctionContext&, const std::vector<Tensor>& in) { return {in[0] * 2.0}; }
  static std::vector<Tensor> backward(nnp::FunctionContext&, const std::vector<Tensor>&) {
    throw nnp::Error(NNP_INTERNAL, "backward kernel missing");
  }
};
struct ThrowingBackward : nnp::nn::Module {
  explicit ThrowingBackward(const nnp::nn::Attrs&) : Module("ThrowingBackward") {}
  Tensor forward(const Tensor& x) override { return nnp::apply_function<ThrowingBackwardFn>({x})[0]; }
};

// Doubles its input; the gradient comes back as f64 whatever the input is.
struct F64GradFn {
  static constexpr const char* name = "F64GradBackward";
  static std::vector<Tensor> forward(nnp::FunctionContext&, const std::vector<Tensor>& in) { return {in[0] * 2.0}; }
  static std::vector<Tensor> backward(nnp::FunctionContext&, const std::vector<Tensor>& grad) {
    return {(grad[0] * 2.0).to(nnp::Dtype::f64)};
  }
};
struct F64Grad : nnp::nn::Module {
  explicit F64Grad(const nnp::nn::Attrs&) : Module("F64Grad") {}
  Tensor forward(const Tensor& x) override { return nnp::apply_function<F64GradFn>({x})[0]; }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<ThrowingForward>(host, "faulty.ThrowingForward", "forward throws");
    nnp::nn::register_layer<ThrowingBackward>(host, "faulty.ThrowingBackward", "backward throws");
    nnp::nn::register_layer<F64Grad>(host, "faulty.F64Grad", "backward returns an f64 gradient");
  });
}

}  // namespace

NNP_PLUGIN("test.faulty_layers", "0", "layers that fail in a careless vendor's ways (tests only)", init)
