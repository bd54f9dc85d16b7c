// nnp/parametrizations.hpp - torch.nn.utils.parametrizations built on
// nnp/parametrize.hpp: spectral_norm (power iteration with PyTorch's _u and
// _v buffers) and weight_norm (PyTorch 2's form: original0 is g, original1
// is v). State dict keys are PyTorch's, e.g. "parametrizations.weight.0._u".
//
//   namespace P = nnp::nn::utils::parametrizations;
//   P::spectral_norm(fc);            // fc->weight = W / sigma(W)
//   P::weight_norm(conv, "weight");  // conv->weight = g * v / ||v||
#pragma once

#include <nnp/functional.hpp>
#include <nnp/nn.hpp>
#include <nnp/parametrize.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn::utils::parametrizations {

// The parametrization spectral_norm registers (PyTorch's _SpectralNorm).
class SpectralNorm : public Module {
 public:
  SpectralNorm(const Tensor& weight, int64_t n_power_iterations = 1, int64_t dim = 0, double eps = 1e-12)
      : Module("_SpectralNorm"), eps_(eps) {
    const int64_t ndim = weight.ndim();
    if (dim >= ndim || dim < -ndim)
      throw Error(NNP_INVALID_ARGUMENT, "spectral_norm: dim " + std::to_string(dim) + " is out of range for a " +
                                            std::to_string(ndim) + "-d weight");
    if (n_power_iterations <= 0)
      throw Error(NNP_INVALID_ARGUMENT, "Expected n_power_iterations to be positive, but got n_power_iterations=" +
                                            std::to_string(n_power_iterations));
    dim_ = dim >= 0 ? dim : dim + ndim;
    if (ndim > 1) {
      n_power_iterations_ = n_power_iterations;
      NoGradGuard no_grad;
      const Tensor mat = to_matrix(weight);
      Tensor u = empty({mat.size(0)}, weight.dtype(), weight.device()).normal_(0, 1);
      Tensor v = empty({mat.size(1)}, weight.dtype(), weight.device()).normal_(0, 1);
      u_ = register_buffer("_u", normalized(u));
      v_ = register_buffer("_v", normalized(v));
      power_method(mat, 15);
    }
  }

  Tensor forward(const Tensor& weight) override {
    if (weight.ndim() == 1) return functional::normalize(weight, functional::NormalizeFuncOptions().dim(0).eps(eps_));
    const Tensor mat = to_matrix(weight);
    if (is_training()) power_method(mat, n_power_iterations_);
    const Tensor u = u_.clone(), v = v_.clone();
    const Tensor sigma = (u * mv(mat, v)).sum();
    return weight / sigma;
  }
  std::vector<Tensor> right_inverse(const Tensor& value) override { return {value}; }

 private:
  // dim first, the rest flattened.
  Tensor to_matrix(const Tensor& weight) const {
    Tensor w = weight;
    if (dim_ != 0) {
      std::vector<int32_t> order = {static_cast<int32_t>(dim_)};
      for (int64_t d = 0; d < weight.ndim(); ++d)
        if (d != dim_) order.push_back(static_cast<int32_t>(d));
      w = w.permute(order);
    }
    return w.reshape({w.size(0), -1});
  }
  static Tensor mv(const Tensor& mat, const Tensor& vec) {
    return mat.matmul(vec.reshape({vec.size(0), 1})).reshape({mat.size(0)});
  }
  Tensor normalized(const Tensor& x) const {
    return functional::normalize(x, functional::NormalizeFuncOptions().dim(0).eps(eps_));
  }
  // u and v move toward the top singular vectors, in place (no history).
  void power_method(const Tensor& mat, int64_t iterations) {
    NoGradGuard no_grad;
    for (int64_t i = 0; i < iterations; ++i) {
      u_.copy_(normalized(mv(mat, v_)));
      v_.copy_(normalized(mv(mat.t(), u_)));
    }
  }

  double eps_;
  int64_t dim_ = 0;
  int64_t n_power_iterations_ = 1;
  Tensor u_, v_;
};

// W / sigma(W), sigma the largest singular value of W reshaped to a matrix
// with dim first (dim defaults to 1 for ConvTranspose, else 0), estimated by
// power iteration in training mode.
inline ModuleHandle spectral_norm(const ModuleHandle& module, const std::string& name = "weight",
                                  int64_t n_power_iterations = 1, double eps = 1e-12,
                                  std::optional<int64_t> dim = std::nullopt) {
  const Tensor weight = module.get_tensor(name);
  if (!dim) {
    const std::string type = parametrize::type_before_parametrizations(module);
    dim = type.rfind("ConvTranspose", 0) == 0 ? 1 : 0;
  }
  return parametrize::register_parametrization(module, name, make<SpectralNorm>(weight, n_power_iterations, *dim, eps));
}

// The parametrization weight_norm registers (PyTorch's _WeightNorm):
// forward(g, v) = v * g / ||v||, the norm over every dimension but dim (all
// of them for dim -1).
class WeightNorm : public Module {
 public:
  explicit WeightNorm(std::optional<int64_t> dim = 0) : Module("_WeightNorm"), dim_(dim.value_or(-1)) {}
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  "_WeightNorm: forward takes (weight_g, weight_v), got " + std::to_string(inputs.size()) + " tensors");
    const Tensor &g = inputs[0], &v = inputs[1];
    return v * (g / norm_except_dim(v));
  }
  std::vector<Tensor> right_inverse(const Tensor& weight) override { return {norm_except_dim(weight), weight}; }

 private:
  // PyTorch's norm_except_dim(v, 2, dim), keeping the reduced dimensions.
  Tensor norm_except_dim(const Tensor& v) const {
    if (dim_ == -1) return v.pow(2.0).sum().sqrt();
    const int64_t dim = dim_ < 0 ? dim_ + v.ndim() : dim_;
    if (dim < 0 || dim >= v.ndim())
      throw Error(NNP_INVALID_ARGUMENT, "weight_norm: dim " + std::to_string(dim_) + " is out of range for a " +
                                            std::to_string(v.ndim()) + "-d weight");
    std::vector<int32_t> others;
    for (int64_t d = 0; d < v.ndim(); ++d)
      if (d != dim) others.push_back(static_cast<int32_t>(d));
    return v.pow(2.0).sum(others, true).sqrt();
  }
  int64_t dim_;
};

namespace detail {
// PyTorch 2's _weight_norm_compat_hook: a state dict of the older
// torch.nn.utils.weight_norm (<name>_g and <name>_v, what PyTorch 1.13
// saves) loads into the parametrized form. A C callback: nothing throws.
inline nnp_status weight_norm_compat_hook(nnp_module*, nnp_list* state, nnp_list*, const char* prefix,
                                          void* user_data) {
  const nnp_api& c = api();
  const std::string& name = *static_cast<const std::string*>(user_data);
  const std::string g_key = std::string(prefix) + name + "_g", v_key = std::string(prefix) + name + "_v";
  const int32_t g = c.list_find(state, g_key.c_str()), v = c.list_find(state, v_key.c_str());
  if (g < 0 || v < 0) return NNP_OK;
  nnp_tensor* tensors[2] = {c.list_tensor(state, g), c.list_tensor(state, v)};
  if (!tensors[0] || !tensors[1]) return NNP_OK;
  for (nnp_tensor* t : tensors) c.tensor_retain(t);
  nnp_status s = c.list_remove(state, g > v ? g : v);
  if (s == NNP_OK) s = c.list_remove(state, g > v ? v : g);
  const std::string base = std::string(prefix) + "parametrizations." + name + ".original";
  if (s == NNP_OK) s = c.list_append_tensor(state, (base + "0").c_str(), tensors[0]);
  if (s == NNP_OK) s = c.list_append_tensor(state, (base + "1").c_str(), tensors[1]);
  for (nnp_tensor* t : tensors) c.tensor_release(t);
  return s;
}
}  // namespace detail

// The module keeps loading state dicts of PyTorch's older weight_norm
// (<name>_g, <name>_v), as PyTorch 2's does.
inline ModuleHandle weight_norm(const ModuleHandle& module, const std::string& name = "weight",
                                std::optional<int64_t> dim = 0) {
  parametrize::register_parametrization(module, name, make<WeightNorm>(dim), true);
  nnp_hook_handle* hook = nullptr;
  check(api().register_state_hook(
      module.handle(), NNP_LOAD_STATE_DICT_PRE, detail::weight_norm_compat_hook, new std::string(name),
      [](void* user_data) { delete static_cast<std::string*>(user_data); }, &hook));
  api().hook_release(hook);  // the handle goes; the hook stays with the module
  return module;
}

}  // namespace nnp::nn::utils::parametrizations
