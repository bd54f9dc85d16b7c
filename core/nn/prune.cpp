#include "prune.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "../autograd/functions.hpp"
#include "../autograd/grad_mode.hpp"
#include "../autograd/node.hpp"
#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "derived_tensor.hpp"
#include "module_call.hpp"

namespace nnp::core::nn {
namespace {

const char* method_name(nnp_prune_method method) {
  static const char* const names[] = {"identity",          "random_unstructured", "l1_unstructured",
                                      "random_structured", "ln_structured",       "custom_from_mask"};
  return method >= 0 && method <= NNP_PRUNE_CUSTOM_FROM_MASK ? names[method] : "unknown";
}

enum class PruneType { UNSTRUCTURED, STRUCTURED, GLOBAL };

PruneType prune_type(nnp_prune_method method) {
  switch (method) {
    case NNP_PRUNE_RANDOM_STRUCTURED:
    case NNP_PRUNE_LN_STRUCTURED: return PruneType::STRUCTURED;
    case NNP_PRUNE_CUSTOM_FROM_MASK: return PruneType::GLOBAL;
    default: return PruneType::UNSTRUCTURED;
  }
}

// One pruning step as the spec gave it (the mask tensor read to the host).
struct Method {
  nnp_prune_method method = NNP_PRUNE_IDENTITY;
  bool by_count = false;
  double amount = 0.0;
  double n = 2.0;
  int64_t dim = -1;
  std::vector<double> custom_mask;
};

// The state of a pruned tensor, held by its forward pre-hook (PyTorch keeps
// its pruning method objects, a PruningContainer once pruned twice, there).
struct PruneHook {
  std::string name;
  std::vector<Method> methods;
  nnp_hook_handle* handle = nullptr;
  ~PruneHook() {
    if (handle) release(handle);
  }
};

std::vector<double> host_values(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  TensorRef h = core::contiguous(*core::to(t, parse_device("cpu"), NNP_F64));
  std::vector<double> out(static_cast<size_t>(h->numel));
  copy_to_host(*h, out.data(), out.size() * sizeof(double));
  return out;
}

TensorRef tensor_like(const std::vector<double>& values, const Tensor& like) {
  TensorRef h = from_host(values.data(), like.shape, NNP_F64, parse_device("cpu"));
  return core::to(*h, like.device, like.dtype);
}

std::vector<double> uniform_draws(size_t count) {
  if (count == 0) return {};
  Dims shape;
  shape.ndim = 1;
  shape.d[0] = static_cast<int64_t>(count);
  return host_values(*core::random(NNP_RANDOM_UNIFORM, 0.0, 1.0, shape, NNP_F64, parse_device("cpu")));
}

Method read_spec(const nnp_prune_spec* spec, const char* op) {
  if (spec == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": spec is NULL");
  if (spec->struct_size < NNP_PRUNE_SPEC_SIZE_1_6)
    fail(NNP_INVALID_ARGUMENT, op, ": spec struct_size ", spec->struct_size,
         " is too small (set it to sizeof(nnp_prune_spec))");
  Method m;
  m.method = spec->method;
  if (m.method < NNP_PRUNE_IDENTITY || m.method > NNP_PRUNE_CUSTOM_FROM_MASK)
    fail(NNP_INVALID_ARGUMENT, op, ": unknown pruning method ", m.method,
         " (NNP_PRUNE_IDENTITY .. NNP_PRUNE_CUSTOM_FROM_MASK)");
  m.by_count = spec->amount_is_count != 0;
  m.amount = spec->amount;
  m.n = spec->n;
  m.dim = spec->dim;
  const bool uses_amount = m.method != NNP_PRUNE_IDENTITY && m.method != NNP_PRUNE_CUSTOM_FROM_MASK;
  if (uses_amount) {
    const bool bad = m.by_count ? !(m.amount >= 0) || m.amount != std::floor(m.amount) || m.amount > 9.0e15
                                : !(m.amount >= 0.0 && m.amount <= 1.0);
    if (bad)
      fail(NNP_INVALID_ARGUMENT, op, " (", method_name(m.method), "): amount=", m.amount,
           " should either be a float in the range [0, 1] or a non-negative integer");
  }
  if (m.method == NNP_PRUNE_LN_STRUCTURED && std::isnan(m.n))
    fail(NNP_INVALID_ARGUMENT, op, " (ln_structured): the norm order n is NaN");
  if (m.method == NNP_PRUNE_CUSTOM_FROM_MASK && spec->mask == nullptr)
    fail(NNP_INVALID_ARGUMENT, op, " (custom_from_mask): mask is NULL");
  return m;
}

// PyTorch's _compute_nparams_toprune and _validate_pruning_amount: a count
// as given, a fraction rounded half to even (Python's round).
int64_t nparams_toprune(const Method& m, int64_t size, const char* op) {
  const int64_t k = m.by_count ? static_cast<int64_t>(m.amount)
                               : static_cast<int64_t>(std::nearbyint(m.amount * static_cast<double>(size)));
  if (m.by_count && k > size)
    fail(NNP_INVALID_ARGUMENT, op, " (", method_name(m.method), "): amount=", k,
         " should be smaller than the number of parameters to prune=", size);
  return k;
}

double channel_norm(const std::vector<double>& values, double p) {
  if (std::isinf(p)) {
    double best = p > 0 ? 0.0 : INFINITY;
    for (double v : values) best = p > 0 ? std::max(best, std::fabs(v)) : std::min(best, std::fabs(v));
    return best;
  }
  if (p == 0.0)
    return static_cast<double>(std::count_if(values.begin(), values.end(), [](double v) { return v != 0; }));
  double sum = 0.0;
  for (double v : values) sum += std::pow(std::fabs(v), p);
  return std::pow(sum, 1.0 / p);
}

// PruningContainer._combine_masks for the latest method: it sees only the
// entries (unstructured) or channels (structured) the mask still keeps.
std::vector<double> combine(const Method& method, const std::vector<double>& scores, const Dims& shape,
                            std::vector<double> mask, const char* op) {
  const PruneType type = prune_type(method.method);
  if (method.method == NNP_PRUNE_IDENTITY) return mask;
  if (type == PruneType::GLOBAL) {
    for (size_t i = 0; i < mask.size(); ++i) mask[i] *= method.custom_mask[i];
    return mask;
  }
  if (type == PruneType::UNSTRUCTURED) {
    std::vector<size_t> kept;
    for (size_t i = 0; i < mask.size(); ++i)
      if (mask[i] == 1.0) kept.push_back(i);
    const int64_t k = nparams_toprune(method, static_cast<int64_t>(kept.size()), op);
    if (k == 0) return mask;
    std::vector<double> rank(kept.size());
    if (method.method == NNP_PRUNE_L1_UNSTRUCTURED) {
      for (size_t j = 0; j < kept.size(); ++j) rank[j] = std::fabs(scores[kept[j]]);
    } else {  // random: the entries of largest draw go (topk of rand_like)
      rank = uniform_draws(kept.size());
      for (double& r : rank) r = -r;
    }
    std::vector<size_t> order(kept.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
    for (int64_t j = 0; j < k; ++j) mask[kept[order[static_cast<size_t>(j)]]] = 0.0;
    return mask;
  }
  // Structured: channels along dim.
  if (shape.ndim <= 1)
    fail(NNP_INVALID_ARGUMENT, op, " (", method_name(method.method),
         "): structured pruning can only be applied to multidimensional tensors. Found tensor of shape ",
         format_dims(shape), " with ", shape.ndim, " dims");
  int64_t dim = method.dim < 0 ? method.dim + shape.ndim : method.dim;
  if (dim < 0 || dim >= shape.ndim)
    fail(NNP_INVALID_ARGUMENT, op, " (", method_name(method.method), "): invalid dim ", method.dim,
         " for a tensor of shape ", format_dims(shape));
  const int64_t channels = shape[static_cast<int32_t>(dim)];
  int64_t inner = 1;
  for (int32_t d = static_cast<int32_t>(dim) + 1; d < shape.ndim; ++d) inner *= shape[d];
  auto channel_of = [&](size_t i) { return (static_cast<int64_t>(i) / inner) % channels; };
  std::vector<double> mask_sum(static_cast<size_t>(channels), 0.0);
  for (size_t i = 0; i < mask.size(); ++i) mask_sum[static_cast<size_t>(channel_of(i))] += mask[i];
  std::vector<int64_t> kept;
  for (int64_t c = 0; c < channels; ++c)
    if (mask_sum[static_cast<size_t>(c)] != 0.0) kept.push_back(c);
  const int64_t k = nparams_toprune(method, static_cast<int64_t>(kept.size()), op);
  if (k == 0) return mask;
  std::vector<double> rank(kept.size());
  if (method.method == NNP_PRUNE_LN_STRUCTURED) {
    std::vector<std::vector<double>> values(static_cast<size_t>(channels));
    for (size_t i = 0; i < scores.size(); ++i) values[static_cast<size_t>(channel_of(i))].push_back(scores[i]);
    for (size_t j = 0; j < kept.size(); ++j) rank[j] = channel_norm(values[static_cast<size_t>(kept[j])], method.n);
  } else {
    rank = uniform_draws(kept.size());
  }
  // The k channels of least rank go (ln: topk of the norms keeps the rest;
  // random: those at or below the k-th smallest draw).
  std::vector<size_t> order(kept.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank[a] > rank[b]; });
  std::vector<bool> drop(static_cast<size_t>(channels), false);
  for (size_t j = kept.size() - static_cast<size_t>(k); j < kept.size(); ++j)
    drop[static_cast<size_t>(kept[order[j]])] = true;
  for (size_t i = 0; i < mask.size(); ++i)
    if (drop[static_cast<size_t>(channel_of(i))]) mask[i] = 0.0;
  return mask;
}

nnp_status prune_pre_hook(nnp_module* module, const nnp_tensor* const*, int32_t, const nnp_tensor* const*, int32_t,
                          nnp_tensor**, void* user_data);

std::shared_ptr<PruneHook> find_hook(const Module& m, const std::string& name) {
  for (const auto& hook : hooks_to_run(*m.hooks[NNP_HOOK_FORWARD_PRE]))
    if (hook.fn.tensors == &prune_pre_hook) {
      auto state = std::static_pointer_cast<PruneHook>(hook.user_data);
      if (state->name == name) return state;
    }
  return nullptr;
}

void attach_hook(Module& m, const std::shared_ptr<PruneHook>& state) {
  ModuleHookFn fn;
  fn.tensors = &prune_pre_hook;
  state->handle = register_hook(m, NNP_HOOK_FORWARD_PRE, fn, state, false);
}

// apply_mask: <name> = mask * <name>_orig, recorded when grad mode is on.
void recompute(Module& m, const std::string& name) {
  DerivedTensor* d = m.derived.find(name);
  TensorRef* orig = m.parameters.find(name + "_orig");
  TensorRef* mask = m.buffers.find(name + "_mask");
  if (!d || !orig || !*orig || !mask || !*mask)
    fail(NNP_INVALID_ARGUMENT, m.type_name, ": pruned tensor '", name, "' has lost its ", name, "_orig or ", name,
         "_mask (were they replaced by hand?)");
  const Fingerprint inputs = fingerprint({orig->get(), mask->get()});
  TensorRef factor = (*mask)->dtype == (*orig)->dtype ? *mask : core::to(**mask, (*mask)->device, (*orig)->dtype);
  TensorRef value = autograd::binary(NNP_BINARY_MUL, *factor, **orig);
  bind_derived(*d, value, &inputs);
}

nnp_status prune_pre_hook(nnp_module* module, const nnp_tensor* const*, int32_t, const nnp_tensor* const*, int32_t,
                          nnp_tensor**, void* user_data) {
  return guard([&] { recompute(*module, static_cast<PruneHook*>(user_data)->name); });
}

// The tensor PyTorch's getattr(module, name) gives: the pruned value, or the parameter.
TensorRef current_tensor(const Module& m, const std::string& name, const std::shared_ptr<PruneHook>& hook,
                         const char* op) {
  if (hook) return m.derived.find(name)->visible;
  const TensorRef* p = m.parameters.find(name);
  if (!p) {
    const bool other = m.buffers.find(name) || m.derived.find(name);
    fail(NNP_INVALID_ARGUMENT, op, ": ", m.type_name, " has no parameter '", name, "'",
         other ? " (only parameters can be pruned; it is a buffer or a parametrized tensor)" : "");
  }
  if (!*p) fail(NNP_INVALID_ARGUMENT, op, ": parameter '", name, "' of ", m.type_name, " is None");
  return *p;
}

void check_free_name(const Module& m, const std::string& name, const char* op) {
  if (m.parameters.find(name) || m.buffers.find(name) || m.children.find(name) || m.derived.find(name))
    fail(NNP_INVALID_ARGUMENT, op, ": ", m.type_name, " already has an attribute '", name,
         "', which pruning would take for itself");
}

// The new mask for one tensor, computed before anything changes.
struct Plan {
  Module* m;
  std::string name;
  std::shared_ptr<PruneHook> hook;  // null on first pruning
  TensorRef current;
  TensorRef mask;
  Method method;
};

Plan plan_prune(Module& m, const std::string& name, Method method, const Tensor* importance, const char* op) {
  Plan plan{&m, name, find_hook(m, name), TensorRef(), TensorRef(), std::move(method)};
  plan.current = current_tensor(m, name, plan.hook, op);
  const Tensor& t = *plan.current;
  if (!plan.hook) {
    check_free_name(m, name + "_orig", op);
    check_free_name(m, name + "_mask", op);
  }
  if (importance && importance->shape != t.shape)
    fail(NNP_INVALID_ARGUMENT, op, ": importance_scores should have the same shape as parameter ", name, " of ",
         m.type_name, ": ", format_dims(importance->shape), " vs ", format_dims(t.shape));
  if (plan.method.method == NNP_PRUNE_CUSTOM_FROM_MASK &&
      static_cast<int64_t>(plan.method.custom_mask.size()) != t.numel)
    fail(NNP_INVALID_ARGUMENT, op, ": the mask has ", plan.method.custom_mask.size(), " elements but ", name,
         " has shape ", format_dims(t.shape));
  std::vector<double> mask = plan.hook ? host_values(**m.buffers.find(name + "_mask"))
                                       : std::vector<double>(static_cast<size_t>(t.numel), 1.0);
  const bool ranks = plan.method.method == NNP_PRUNE_L1_UNSTRUCTURED || plan.method.method == NNP_PRUNE_LN_STRUCTURED;
  std::vector<double> scores = ranks ? host_values(importance ? *importance : t) : std::vector<double>();
  plan.mask = tensor_like(combine(plan.method, scores, t.shape, std::move(mask), op), t);
  return plan;
}

void commit(Plan& plan) {
  Module& m = *plan.m;
  const std::string& name = plan.name;
  plan.method.custom_mask.clear();
  plan.method.custom_mask.shrink_to_fit();
  if (!plan.hook) {
    Tensor& visible = *plan.current;
    TensorRef orig = take_leaf_identity(visible, (name + "_orig").c_str());
    m.parameters.erase(name);
    m.parameters.put(name + "_orig", orig);
    m.buffers.put(name + "_mask", plan.mask);
    DerivedTensor d;
    d.kind = DerivedTensor::PRUNED;
    d.visible = plan.current;
    m.derived.put(name, std::move(d));
    auto state = std::make_shared<PruneHook>();
    state->name = name;
    state->methods.push_back(std::move(plan.method));
    attach_hook(m, state);
  } else {
    m.buffers.put(name + "_mask", plan.mask);
    plan.hook->methods.push_back(std::move(plan.method));
    // PyTorch takes the hook out and registers the container again: it moves last.
    plan.hook->handle->remove();
    release(plan.hook->handle);
    attach_hook(m, plan.hook);
  }
  recompute(m, name);
}

}  // namespace

void prune(Module& m, const std::string& name, const nnp_prune_spec& spec) {
  Method method = read_spec(&spec, "prune");
  if (method.method == NNP_PRUNE_CUSTOM_FROM_MASK) method.custom_mask = host_values(*spec.mask);
  Plan plan = plan_prune(m, name, std::move(method), spec.importance_scores, "prune");
  commit(plan);
}

void prune_global(const std::vector<Module*>& modules, const std::vector<std::string>& names,
                  const nnp_prune_spec& spec, const std::vector<const Tensor*>& importance) {
  const char* op = "prune_global";
  Method method = read_spec(&spec, op);
  if (prune_type(method.method) != PruneType::UNSTRUCTURED)
    fail(NNP_INVALID_ARGUMENT, op,
         ": only unstructured pruning methods are supported (identity, random_unstructured, "
         "l1_unstructured); got ",
         method_name(method.method));
  // The scores and masks of every tensor, one after another (parameters_to_vector).
  std::vector<double> scores, mask;
  std::vector<TensorRef> currents;
  for (size_t i = 0; i < modules.size(); ++i) {
    Module& m = *modules[i];
    auto hook = find_hook(m, names[i]);
    TensorRef current = current_tensor(m, names[i], hook, op);
    const Tensor* given = importance.empty() ? nullptr : importance[i];
    if (given && given->shape != current->shape)
      fail(NNP_INVALID_ARGUMENT, op, ": importance_scores[", i, "] has shape ", format_dims(given->shape), " but ",
           names[i], " of ", m.type_name, " has shape ", format_dims(current->shape));
    std::vector<double> s = host_values(given ? *given : *current);
    scores.insert(scores.end(), s.begin(), s.end());
    std::vector<double> k = hook ? host_values(**m.buffers.find(names[i] + "_mask"))
                                 : std::vector<double>(static_cast<size_t>(current->numel), 1.0);
    mask.insert(mask.end(), k.begin(), k.end());
    currents.push_back(current);
  }
  Dims flat;
  flat.ndim = 1;
  flat.d[0] = static_cast<int64_t>(scores.size());
  std::vector<double> final_mask = combine(method, scores, flat, std::move(mask), op);
  // Each tensor's part, as custom_from_mask; planned for all before any commits.
  std::vector<Plan> plans;
  size_t at = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    Method part;
    part.method = NNP_PRUNE_CUSTOM_FROM_MASK;
    const size_t n = static_cast<size_t>(currents[i]->numel);
    part.custom_mask.assign(final_mask.begin() + static_cast<std::ptrdiff_t>(at),
                            final_mask.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    plans.push_back(plan_prune(*modules[i], names[i], std::move(part), nullptr, op));
  }
  for (size_t i = 0; i < plans.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (plans[i].m == plans[j].m && plans[i].name == plans[j].name)
        fail(NNP_INVALID_ARGUMENT, op, ": ", names[i], " of ", plans[i].m->type_name, " is listed twice");
  for (Plan& plan : plans) commit(plan);
}

void prune_remove(Module& m, const std::string& name) {
  auto hook = find_hook(m, name);
  if (!hook)
    fail(NNP_INVALID_ARGUMENT, "prune_remove: parameter '", name, "' of module ", m.type_name,
         " has to be pruned before pruning can be removed");
  TensorRef* orig_entry = m.parameters.find(name + "_orig");
  TensorRef* mask_entry = m.buffers.find(name + "_mask");
  if (!orig_entry || !*orig_entry || !mask_entry || !*mask_entry || !m.derived.find(name))
    fail(NNP_INVALID_ARGUMENT, "prune_remove: pruned tensor '", name, "' of ", m.type_name, " has lost its ", name,
         "_orig or ", name, "_mask (were they replaced by hand?)");
  TensorRef orig = *orig_entry, mask = *mask_entry;
  TensorRef value;
  {
    autograd::NoGradGuard no_grad;
    TensorRef factor = mask->dtype == orig->dtype ? mask : core::to(*mask, mask->device, orig->dtype);
    value = core::binary(NNP_BINARY_MUL, *factor, *orig);
  }
  TensorRef visible = m.derived.find(name)->visible;
  hook->handle->remove();
  m.derived.erase(name);
  m.parameters.erase(name + "_orig");
  m.buffers.erase(name + "_mask");
  m.non_persistent.erase(name + "_mask");
  restore_leaf_identity(*visible, *orig, *value);
  if (visible->autograd) visible->autograd->name = name;
  m.parameters.put(name, visible);
}

bool is_pruned(const Module& m) {
  for (const auto& hook : hooks_to_run(*m.hooks[NNP_HOOK_FORWARD_PRE]))
    if (hook.fn.tensors == &prune_pre_hook) return true;
  for (const auto& [name, child] : m.children)
    if (child && is_pruned(*child)) return true;
  return false;
}

void refresh_pruned(Module& m) {
  for (const auto& hook : hooks_to_run(*m.hooks[NNP_HOOK_FORWARD_PRE]))
    if (hook.fn.tensors == &prune_pre_hook) recompute(m, static_cast<PruneHook*>(hook.user_data.get())->name);
}

}  // namespace nnp::core::nn
