// nn.Linear, nn.Identity, nn.Flatten, nn.Unflatten and nn.Dropout, written with the public
// C++ API exactly as a plugin's layers are.
#include <algorithm>
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct Linear : nnp::nn::Module {
  int64_t in_features, out_features;
  Tensor weight, bias;
  explicit Linear(const Attrs& a, const char* name = "Linear")
      : Module(name), in_features(a.integer("in_features")), out_features(a.integer("out_features")) {
    if (in_features < 0 || out_features < 0)
      throw Error(NNP_INVALID_ARGUMENT, "Linear: in_features and out_features must be >= 0");
    weight = register_parameter("weight", nnp::empty({out_features, in_features}));
    // PyTorch's reset_parameters: kaiming_uniform_(a=sqrt(5)) and a bias in
    // +-1/sqrt(fan_in), i.e. both uniform in +-1/sqrt(in_features).
    double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    nnp::nn::init::uniform_(weight, -bound, bound);
    if (a.boolean("bias")) {
      bias = register_parameter("bias", nnp::empty({out_features}));
      nnp::nn::init::uniform_(bias, -bound, bound);
    } else {
      register_parameter("bias", Tensor());
    }
  }
  Tensor forward(const Tensor& x) override { return F::linear(x, weight, bias); }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
           ", bias=" + nnp::nn::format_bool(bias.defined());
  }
};

// y = x1^T W x2 + b, called with (x1, x2).
struct Bilinear : nnp::nn::Module {
  int64_t in1, in2, out;
  Tensor weight, bias;
  explicit Bilinear(const Attrs& a)
      : Module("Bilinear"),
        in1(a.integer("in1_features")),
        in2(a.integer("in2_features")),
        out(a.integer("out_features")) {
    if (in1 <= 0 || in2 <= 0 || out < 0)
      throw Error(NNP_INVALID_ARGUMENT, "Bilinear: in1_features and in2_features must be > 0 and out_features >= 0");
    const double bound = 1.0 / std::sqrt(static_cast<double>(in1));  // PyTorch's reset_parameters
    weight = register_parameter("weight", nnp::empty({out, in1, in2}));
    nnp::nn::init::uniform_(weight, -bound, bound);
    if (a.boolean("bias")) {
      bias = register_parameter("bias", nnp::empty({out}));
      nnp::nn::init::uniform_(bias, -bound, bound);
    } else {
      register_parameter("bias", Tensor());
    }
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  "Bilinear: expects (x1, x2), got " + std::to_string(inputs.size()) + " tensors");
    return F::bilinear(inputs[0], inputs[1], weight, bias);
  }
  std::string extra_repr() const override {
    return "in1_features=" + std::to_string(in1) + ", in2_features=" + std::to_string(in2) +
           ", out_features=" + std::to_string(out) + ", bias=" + nnp::nn::format_bool(bias.defined());
  }
};

// PyTorch's name for the Linear inside MultiheadAttention (out_proj), which
// quantization leaves alone; otherwise a Linear.
struct NonDynamicallyQuantizableLinear : Linear {
  explicit NonDynamicallyQuantizableLinear(const Attrs& a) : Linear(a, "NonDynamicallyQuantizableLinear") {}
};

struct Identity : nnp::nn::Module {
  explicit Identity(const Attrs&) : Module("Identity") {}
  Tensor forward(const Tensor& x) override { return x; }
};

struct Flatten : nnp::nn::Module {
  int64_t start_dim, end_dim;
  explicit Flatten(const Attrs& a)
      : Module("Flatten"), start_dim(a.integer("start_dim")), end_dim(a.integer("end_dim")) {}
  Tensor forward(const Tensor& x) override {
    const int32_t n = x.ndim() == 0 ? 1 : x.ndim();
    int64_t start = start_dim < 0 ? start_dim + n : start_dim, end = end_dim < 0 ? end_dim + n : end_dim;
    if (start < 0 || start >= n || end < 0 || end >= n || start > end)
      throw Error(NNP_INVALID_ARGUMENT, "Flatten: start_dim " + std::to_string(start_dim) + " and end_dim " +
                                            std::to_string(end_dim) + " do not fit an input of " +
                                            std::to_string(x.ndim()) + " dimensions");
    if (x.ndim() == 0) return x.reshape({1});
    nnp::Shape shape = x.shape(), out;
    for (int64_t d = 0; d < start; ++d) out.push_back(shape[static_cast<size_t>(d)]);
    int64_t merged = 1;
    for (int64_t d = start; d <= end; ++d) merged *= shape[static_cast<size_t>(d)];
    out.push_back(merged);
    for (int64_t d = end + 1; d < x.ndim(); ++d) out.push_back(shape[static_cast<size_t>(d)]);
    return x.reshape(out);
  }
  std::string extra_repr() const override {
    return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
  }
};

// Splits dimension dim into unflattened_size (one entry may be -1).
struct Unflatten : nnp::nn::Module {
  int64_t dim;
  nnp::Shape sizes;
  explicit Unflatten(const Attrs& a)
      : Module("Unflatten"), dim(a.integer("dim")), sizes(a.integers("unflattened_size")) {
    if (sizes.empty()) throw Error(NNP_INVALID_ARGUMENT, "Unflatten: unflattened_size must be non-empty");
    if (std::count(sizes.begin(), sizes.end(), -1) > 1 ||
        std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < -1; }))
      throw Error(NNP_INVALID_ARGUMENT,
                  "Unflatten: unflattened_size " + shape_text(sizes) + " may hold sizes >= 0 and at most one -1");
  }
  Tensor forward(const Tensor& x) override {
    const int64_t d = dim < 0 ? dim + x.ndim() : dim;
    if (d < 0 || d >= x.ndim())
      throw Error(NNP_INVALID_ARGUMENT, "Unflatten: dim " + std::to_string(dim) + " is out of range for an input of " +
                                            std::to_string(x.ndim()) + " dimensions");
    int64_t known = 1;
    for (int64_t s : sizes) known *= s == -1 ? 1 : s;
    const int64_t size = x.size(static_cast<int32_t>(d));
    const bool inferred = std::count(sizes.begin(), sizes.end(), -1) == 1;
    if (inferred ? (known == 0 || size % known != 0) : known != size)
      throw Error(NNP_SHAPE_MISMATCH, "Unflatten: unflattened_size " + shape_text(sizes) +
                                          " does not multiply to dimension " + std::to_string(dim) + "'s size " +
                                          std::to_string(size) + " (input " + shape_text(x.shape()) + ")");
    nnp::Shape shape = x.shape(), out(shape.begin(), shape.begin() + d);
    out.insert(out.end(), sizes.begin(), sizes.end());
    out.insert(out.end(), shape.begin() + d + 1, shape.end());
    return x.reshape(out);
  }
  std::string extra_repr() const override {
    std::string text = "dim=" + std::to_string(dim) + ", unflattened_size=(";
    for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
    return text + (sizes.size() == 1 ? ",)" : ")");
  }
};

struct Dropout : nnp::nn::Module {
  double p;
  explicit Dropout(const Attrs& a) : Module("Dropout"), p(a.real("p")) {
    if (p < 0 || p > 1)
      throw Error(NNP_INVALID_ARGUMENT,
                  "Dropout: dropout probability has to be between 0 and 1, but got " + nnp::nn::format_float(p));
  }
  Tensor forward(const Tensor& x) override {
    return F::dropout(x, F::DropoutFuncOptions().p(p).training(is_training()));
  }
  std::string extra_repr() const override { return "p=" + nnp::nn::format_float(p) + ", inplace=False"; }
};

void register_linear_layers(nnp_plugin_host* host) {
  const std::vector<AttrDecl> linear{{"in_features", NNP_ATTR_INT, true, nullptr, "size of each input sample"},
                                     {"out_features", NNP_ATTR_INT, true, nullptr, "size of each output sample"},
                                     {"bias", NNP_ATTR_BOOL, false, "true", "learn an additive bias"}};
  add_builtin<Linear>(host, "nn.Linear", "y = x W^T + b", linear);
  add_builtin<NonDynamicallyQuantizableLinear>(
      host, "nn.NonDynamicallyQuantizableLinear",
      "a Linear that dynamic quantization skips (MultiheadAttention's out_proj)", linear);
  add_builtin<Bilinear>(host, "nn.Bilinear", "y = x1^T W x2 + b",
                        {{"in1_features", NNP_ATTR_INT, true, nullptr, "size of each first input sample"},
                         {"in2_features", NNP_ATTR_INT, true, nullptr, "size of each second input sample"},
                         {"out_features", NNP_ATTR_INT, true, nullptr, "size of each output sample"},
                         {"bias", NNP_ATTR_BOOL, false, "true", "learn an additive bias"}});
  add_builtin<Identity>(host, "nn.Identity", "returns its input", {});
  add_builtin<Flatten>(host, "nn.Flatten", "flattens dimensions start_dim..end_dim into one",
                       {{"start_dim", NNP_ATTR_INT, false, "1", "first dimension to flatten"},
                        {"end_dim", NNP_ATTR_INT, false, "-1", "last dimension to flatten"}});
  add_builtin<Unflatten>(host, "nn.Unflatten", "splits one dimension into several",
                         {{"dim", NNP_ATTR_INT, true, nullptr, "dimension to split"},
                          {"unflattened_size", NNP_ATTR_INTS, true, nullptr, "the sizes it becomes"}});
  add_builtin<Dropout>(host, "nn.Dropout", "zeroes elements with probability p while training",
                       {{"p", NNP_ATTR_FLOAT, false, "0.5", "probability of an element to be zeroed"}});
}

}  // namespace nnp::library::layers
