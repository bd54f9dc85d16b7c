// nnp/prune.hpp - torch.nn.utils.prune for any module, a plugin's layers
// included (ABI 1.6). Stored as PyTorch stores it, so state dicts cross both
// ways: pruning `weight` turns it into the parameter `weight_orig` and the
// buffer `weight_mask`, and a forward pre-hook recomputes weight = orig *
// mask before each call. The tensor the layer holds as `weight` (a holder's
// linear->weight) shows the pruned values; the original is a new leaf,
// get_parameter("weight_orig"), so build optimizers after pruning.
//
//   namespace prune = nnp::nn::utils::prune;
//   prune::l1_unstructured(fc, "weight", 0.3);     // 30 % of the entries
//   prune::ln_structured(conv, "weight", 2, 2.0, 0);  // 2 output channels, L2
//   prune::remove(fc, "weight");                   // make it permanent
#pragma once

#include <cmath>
#include <nnp/nn.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnp::nn::utils::prune {

// PyTorch's amount: an integer is a number of entries (or channels), a
// floating-point value a fraction in [0, 1] of those still kept.
class Amount {
 public:
  Amount(int count) : Amount(static_cast<int64_t>(count)) {}                      // NOLINT: implicit, as Python's int
  Amount(int64_t count) : by_count_(true), value_(static_cast<double>(count)) {}  // NOLINT
  Amount(double fraction) : by_count_(false), value_(fraction) {}                 // NOLINT: as Python's float
  bool by_count() const { return by_count_; }
  double value() const { return value_; }

 private:
  bool by_count_;
  double value_;
};

// The pruning methods (PyTorch's classes), for global_unstructured.
enum class Method {
  Identity = NNP_PRUNE_IDENTITY,
  RandomUnstructured = NNP_PRUNE_RANDOM_UNSTRUCTURED,
  L1Unstructured = NNP_PRUNE_L1_UNSTRUCTURED,
  RandomStructured = NNP_PRUNE_RANDOM_STRUCTURED,
  LnStructured = NNP_PRUNE_LN_STRUCTURED,
  CustomFromMask = NNP_PRUNE_CUSTOM_FROM_MASK
};

namespace detail {
inline nnp_prune_spec spec(Method method, Amount amount = 0.0, double n = 2.0, int64_t dim = -1,
                           const Tensor& importance_scores = Tensor(), const Tensor& mask = Tensor()) {
  nnp_prune_spec s{};
  s.struct_size = sizeof(s);
  s.method = static_cast<nnp_prune_method>(method);
  s.amount_is_count = amount.by_count() ? 1 : 0;
  s.amount = amount.value();
  s.n = n;
  s.dim = dim;
  s.importance_scores = importance_scores.defined() ? importance_scores.get() : nullptr;
  s.mask = mask.defined() ? mask.get() : nullptr;
  return s;
}
inline ModuleHandle apply(const ModuleHandle& module, const std::string& name, const nnp_prune_spec& s) {
  check(api().prune(module.handle(), name.c_str(), &s));
  return module;
}
// PyTorch's norm orders by name: "fro" is 2; "nuc" is not supported.
inline double norm_order(const std::string& n) {
  if (n == "fro") return 2.0;
  if (n == "inf") return INFINITY;
  if (n == "-inf") return -INFINITY;
  throw Error(NNP_INVALID_ARGUMENT,
              "ln_structured: norm order '" + n + "' is not supported (a number, inf, -inf or fro)");
}
}  // namespace detail

// The mask stays as it is (all ones the first time).
inline ModuleHandle identity(const ModuleHandle& module, const std::string& name) {
  return detail::apply(module, name, detail::spec(Method::Identity));
}
inline ModuleHandle random_unstructured(const ModuleHandle& module, const std::string& name, Amount amount) {
  return detail::apply(module, name, detail::spec(Method::RandomUnstructured, amount));
}
// The amount entries of least |importance| (the tensor itself by default).
inline ModuleHandle l1_unstructured(const ModuleHandle& module, const std::string& name, Amount amount,
                                    const Tensor& importance_scores = Tensor()) {
  return detail::apply(module, name, detail::spec(Method::L1Unstructured, amount, 2.0, -1, importance_scores));
}
// Channels along dim at random.
inline ModuleHandle random_structured(const ModuleHandle& module, const std::string& name, Amount amount, int64_t dim) {
  return detail::apply(module, name, detail::spec(Method::RandomStructured, amount, 2.0, dim));
}
// The channels along dim of least Ln norm (n any real or +-INFINITY).
inline ModuleHandle ln_structured(const ModuleHandle& module, const std::string& name, Amount amount, double n,
                                  int64_t dim, const Tensor& importance_scores = Tensor()) {
  return detail::apply(module, name, detail::spec(Method::LnStructured, amount, n, dim, importance_scores));
}
inline ModuleHandle ln_structured(const ModuleHandle& module, const std::string& name, Amount amount,
                                  const std::string& n, int64_t dim, const Tensor& importance_scores = Tensor()) {
  return ln_structured(module, name, amount, detail::norm_order(n), dim, importance_scores);
}
// Prunes where mask is 0 (mask has the tensor's shape).
inline ModuleHandle custom_from_mask(const ModuleHandle& module, const std::string& name, const Tensor& mask) {
  return detail::apply(module, name, detail::spec(Method::CustomFromMask, 0.0, 2.0, -1, Tensor(), mask));
}

// Ranks every (module, name) together and prunes each with its part of the
// mask. method: Identity, RandomUnstructured or L1Unstructured.
// importance_scores: empty, or one per tensor (undefined ones rank the tensor).
inline void global_unstructured(const std::vector<std::pair<ModuleHandle, std::string>>& parameters, Method method,
                                Amount amount, const std::vector<Tensor>& importance_scores = {}) {
  if (!importance_scores.empty() && importance_scores.size() != parameters.size())
    throw Error(NNP_INVALID_ARGUMENT, "global_unstructured: " + std::to_string(importance_scores.size()) +
                                          " importance_scores for " + std::to_string(parameters.size()) +
                                          " parameters");
  std::vector<nnp_module*> modules;
  std::vector<const char*> names;
  std::vector<const nnp_tensor*> scores;
  for (const auto& [module, name] : parameters) {
    modules.push_back(module.handle());
    names.push_back(name.c_str());
  }
  for (const Tensor& t : importance_scores) scores.push_back(t.defined() ? t.get() : nullptr);
  const nnp_prune_spec s = detail::spec(method, amount);
  check(api().prune_global(modules.data(), names.data(), static_cast<int32_t>(modules.size()), &s,
                           scores.empty() ? nullptr : scores.data()));
}

// Makes the pruning of `name` permanent: a plain parameter again, holding
// orig * mask.
inline ModuleHandle remove(const ModuleHandle& module, const std::string& name) {
  check(api().prune_remove(module.handle(), name.c_str()));
  return module;
}

// Whether module or any module under it has a pruned tensor.
inline bool is_pruned(const ModuleHandle& module) { return api().prune_is_pruned(module.handle()) != 0; }

}  // namespace nnp::nn::utils::prune
