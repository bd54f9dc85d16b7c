#include "optimizer.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../nn/attrs.hpp"
#include "../tensor.hpp"
#include "algorithms.hpp"
#include "fused_sgd.hpp"

namespace nnp::core::optim {
namespace {

void check_option(const std::string& kind, const std::string& name, double value) {
  auto non_negative = [&](const char* what) {
    if (!(value >= 0)) fail(NNP_INVALID_ARGUMENT, kind, ": invalid ", what, " value: ", value, " (must be >= 0)");
  };
  if (name == "lr" || name == "eps" || name == "weight_decay" || name == "momentum" || name == "lr_decay" ||
      name == "initial_accumulator_value")
    non_negative(name.c_str());
  if ((name == "beta1" || name == "beta2") && !(value >= 0 && value < 1))
    fail(NNP_INVALID_ARGUMENT, kind, ": invalid ", name, " value: ", value, " (must be in [0, 1))");
  if ((name == "lambd" || name == "momentum_decay" || name == "step_size_min") && !(value >= 0))
    fail(NNP_INVALID_ARGUMENT, kind, ": invalid ", name, " value: ", value, " (must be >= 0)");
  if (name == "etaminus" && !(value > 0 && value < 1))
    fail(NNP_INVALID_ARGUMENT, kind, ": invalid eta values: ", value, " (etaminus must be in (0, 1))");
  if (name == "etaplus" && !(value > 1))
    fail(NNP_INVALID_ARGUMENT, kind, ": invalid eta values: ", value, " (etaplus must be > 1)");
  if ((name == "alpha" || name == "rho") && kind != "ASGD" && !(value >= 0 && value <= 1))
    fail(NNP_INVALID_ARGUMENT, kind, ": invalid ", name, " value: ", value, " (must be in [0, 1])");
}

// PyTorch's pairs: betas=(0.9, 0.999) is beta1 and beta2 here, etas and
// step_sizes Rprop's two bounds.
struct PairOption {
  const char* name;
  const char* first;
  const char* second;
};
constexpr PairOption kPairOptions[] = {
    {"betas", "beta1", "beta2"}, {"etas", "etaminus", "etaplus"}, {"step_sizes", "step_size_min", "step_size_max"}};

// A pair given as a list of two numbers: true when `name` is one and opt has it.
bool merge_pair(const Optimizer& opt, const std::string& name, const nn::AttrValue& value,
                std::map<std::string, double>& options) {
  for (const PairOption& pair : kPairOptions) {
    if (name != pair.name || !opt.defaults.count(pair.first)) continue;
    if (value.type != NNP_ATTR_INTS && value.type != NNP_ATTR_FLOATS)
      fail(NNP_INVALID_ARGUMENT, opt.kind, ": option '", name, "' is a list of two numbers (", pair.first, ", ",
           pair.second, ")");
    const std::vector<double> numbers = value.numbers();
    if (numbers.size() != 2)
      fail(NNP_INVALID_ARGUMENT, opt.kind, ": option '", name, "' takes two numbers, got ", numbers.size());
    check_option(opt.kind, pair.first, numbers[0]);
    check_option(opt.kind, pair.second, numbers[1]);
    options[pair.first] = numbers[0];
    options[pair.second] = numbers[1];
    return true;
  }
  return false;
}

std::map<std::string, double> merged_options(const Optimizer& opt, const nnp_attrs* given) {
  std::map<std::string, double> options = opt.defaults;
  if (!given) return options;
  for (const auto& [name, value] : given->values) {
    if (merge_pair(opt, name, value, options)) continue;
    if (!opt.defaults.count(name)) {
      std::string known;
      for (const auto& [k, v] : opt.defaults) known += (known.empty() ? "" : ", ") + k;
      fail(NNP_INVALID_ARGUMENT, opt.kind, ": unknown option '", name, "' (", opt.kind, " takes: ", known, ")");
    }
    double v;
    switch (value.type) {
      case NNP_ATTR_INT: v = static_cast<double>(value.i); break;
      case NNP_ATTR_FLOAT: v = value.f; break;
      case NNP_ATTR_BOOL: v = value.b ? 1 : 0; break;
      default: fail(NNP_INVALID_ARGUMENT, opt.kind, ": option '", name, "' must be a number or a bool");
    }
    check_option(opt.kind, name, v);
    options[name] = v;
  }
  if (opt.kind == "SGD" && options["nesterov"] != 0 && (options["momentum"] <= 0 || options["dampening"] != 0))
    fail(NNP_INVALID_ARGUMENT, "SGD: nesterov momentum requires a momentum and zero dampening");
  return options;
}

std::vector<Tensor> tensors_of(const std::string& kind, const nnp_list& params, const Optimizer& opt) {
  std::vector<Tensor> out;
  std::set<const nnp_tensor*> seen;
  for (const auto& group : opt.groups)
    for (const Tensor& p : group.params) seen.insert(p.get());
  for (const auto& entry : params.entries) {
    if (!entry.tensor) fail(NNP_INVALID_ARGUMENT, kind, ": parameter '", entry.name, "' is not a tensor");
    if (!seen.insert(entry.tensor.get()).second)
      fail(NNP_INVALID_ARGUMENT, kind, ": some parameters appear in more than one parameter group (or twice)");
    Tensor t = Tensor::borrow(entry.tensor.get());
    if (!t.is_leaf()) fail(NNP_INVALID_ARGUMENT, kind, ": can't optimize a non-leaf tensor ('", entry.name, "')");
    out.push_back(t);
  }
  return out;
}

// A parameter's state follows it: after module.to(device or dtype) the next
// step moves the state where the parameter now is (floating state takes its
// dtype too), so optimizers keep working across devices as the module does.
// Host-side numbers (step, NAdam's mu_product, ASGD's eta and mu: 0-d f64)
// stay where they are.
bool is_host_scalar(const std::string& name) {
  return name == "step" || name == "mu_product" || name == "eta" || name == "mu";
}

void follow(const Tensor& p, std::map<std::string, Tensor>& state) {
  for (auto& [name, t] : state) {
    if (is_host_scalar(name) || !t.defined()) continue;
    Dtype dtype = is_floating(static_cast<nnp_dtype>(t.dtype())) ? p.dtype() : t.dtype();
    if (t.device() != p.device() || t.dtype() != dtype) t = t.to(p.device(), dtype);
  }
}

// One parameter's computed step, not yet applied; or, stepped in place by
// its backend's SGD kernel (in_place), what that step reads.
struct StagedUpdate {
  Tensor* param = nullptr;
  Tensor value;
  std::map<std::string, Tensor> state;
  bool in_place = false;
  Tensor grad;
  const std::map<std::string, double>* options = nullptr;
};

// SGD on a backend that steps in place (NNP_BACKEND_SGD_IN_PLACE): then
// the step runs last, in place, and computes nothing ahead.
bool steps_in_place(const Optimizer& opt, const std::map<std::string, double>& options, const Tensor& p,
                    const Tensor& g, const std::map<std::string, Tensor>& state) {
  if (opt.kind != "SGD") return false;
  auto buffer = state.find("momentum_buffer");
  return sgd_in_place_applies(options, p, g, buffer == state.end() ? nullptr : &buffer->second);
}

}  // namespace

std::unique_ptr<Optimizer> create(const std::string& kind, const nnp_list& params, const nnp_attrs* options) {
  auto opt = std::make_unique<Optimizer>();
  opt->kind = kind;
  opt->defaults = default_options(kind);
  add_param_group(*opt, params, options);
  return opt;
}

void add_param_group(Optimizer& opt, const nnp_list& params, const nnp_attrs* options) {
  Optimizer::Group group;
  group.options = merged_options(opt, options);
  group.params = tensors_of(opt.kind, params, opt);
  if (group.params.empty() && opt.groups.empty())
    fail(NNP_INVALID_ARGUMENT, opt.kind, ": optimizer got an empty parameter list");
  opt.groups.push_back(std::move(group));
}

// A step is all or nothing: every parameter's new value and state are
// computed first, into new tensors; only then is anything changed. An
// allocation or kernel failure part-way (out of memory, a backend error)
// leaves the parameters and the optimizer's state as they were. In-place
// SGD kernels run after everything that can fail: their backends promise
// not to.
void step(Optimizer& opt) {
  NoGradGuard no_grad;
  std::vector<StagedUpdate> staged;
  for (auto& group : opt.groups)
    for (Tensor& p : group.params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      auto it = opt.state.find(p.get());
      StagedUpdate update;
      update.param = &p;
      if (it != opt.state.end()) update.state = it->second;
      follow(p, update.state);
      if (steps_in_place(opt, group.options, p, g, update.state)) {
        update.in_place = true;
        update.grad = g;
        update.options = &group.options;
      } else {
        update.value = updated(opt.kind, group.options, p, g, update.state);
      }
      staged.push_back(std::move(update));
    }
  // Parameters that cannot adopt their new storage (another view or external
  // memory sees theirs) are copied into first: the only part that can fail.
  for (StagedUpdate& u : staged)
    if (!u.in_place && !can_adopt(*u.param->get(), *u.value.get())) u.param->copy_(u.value);
  for (StagedUpdate& u : staged) {
    if (!u.in_place) continue;
    auto buffer = u.state.find("momentum_buffer");
    sgd_in_place(*u.options, *u.param, u.grad, buffer == u.state.end() ? nullptr : &buffer->second);
  }
  for (StagedUpdate& u : staged) {
    if (!u.in_place && can_adopt(*u.param->get(), *u.value.get())) replace_data(*u.param->get(), *u.value.get());
    opt.state[u.param->get()] = std::move(u.state);
  }
}

void zero_grad(Optimizer& opt, bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& group : opt.groups)
    for (Tensor& p : group.params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none)
        p.set_grad(Tensor());
      else
        g.copy_(g.scalar_like(0));
    }
}

void state_dict(const Optimizer& opt, nnp_list& out) {
  int64_t index = 0;
  for (size_t gi = 0; gi < opt.groups.size(); ++gi) {
    const auto& group = opt.groups[gi];
    std::vector<int64_t> ids;
    for (const Tensor& p : group.params) {
      auto it = opt.state.find(p.get());
      if (it != opt.state.end())
        for (const auto& [name, t] : it->second)
          out.add("state." + std::to_string(index) + "." + name, TensorRef::share(t.get()));
      ids.push_back(index++);
    }
    std::string prefix = "param_groups." + std::to_string(gi) + ".";
    for (const auto& [name, value] : group.options)
      out.add(prefix + name, TensorRef::share(full({}, value, Dtype::f64).get()));
    Tensor params = ids.empty() ? zeros({0}, Dtype::i64) : from_vector(ids);
    out.add(prefix + "params", TensorRef::share(params.get()));
  }
}

void load_state_dict(Optimizer& opt, const nnp_list& state) {
  // Index the parameters as the state dict numbers them.
  std::vector<Tensor*> by_index;
  std::vector<size_t> group_of;
  for (size_t gi = 0; gi < opt.groups.size(); ++gi)
    for (Tensor& p : opt.groups[gi].params) {
      by_index.push_back(&p);
      group_of.push_back(gi);
    }
  std::vector<std::map<std::string, double>> options(opt.groups.size());
  for (size_t gi = 0; gi < opt.groups.size(); ++gi) options[gi] = opt.groups[gi].options;
  std::map<const nnp_tensor*, std::map<std::string, Tensor>> new_state;
  std::set<size_t> groups_seen;
  for (const auto& entry : state.entries) {
    const std::string& key = entry.name;
    Tensor value = Tensor::borrow(entry.tensor.get());
    if (!value.defined()) fail(NNP_INVALID_ARGUMENT, "load_state_dict: '", key, "' holds no tensor");
    size_t first = key.find('.'), second = key.find('.', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      fail(NNP_INVALID_ARGUMENT, "load_state_dict: unexpected key '", key, "' in an optimizer state dict");
    std::string section = key.substr(0, first), name = key.substr(second + 1);
    size_t index = std::stoul(key.substr(first + 1, second - first - 1));
    if (section == "param_groups") {
      if (index >= opt.groups.size())
        fail(NNP_INVALID_ARGUMENT, "load_state_dict: the state dict has parameter group ", index,
             " but the optimizer has ", opt.groups.size());
      groups_seen.insert(index);
      if (name == "params") {
        if (value.numel() != static_cast<int64_t>(opt.groups[index].params.size()))
          fail(NNP_INVALID_ARGUMENT, "load_state_dict: parameter group ", index, " has ", value.numel(),
               " parameters in the state dict but ", opt.groups[index].params.size(), " in the optimizer");
        continue;
      }
      if (!opt.defaults.count(name)) fail(NNP_INVALID_ARGUMENT, "load_state_dict: unknown option '", name, "'");
      options[index][name] = value.to(Dtype::f64).item<double>();
    } else if (section == "state") {
      if (index >= by_index.size())
        fail(NNP_INVALID_ARGUMENT, "load_state_dict: state for parameter ", index, " but the optimizer has ",
             by_index.size(), " parameters");
      const Tensor& p = *by_index[index];
      bool scalar = is_host_scalar(name);
      if (!scalar && value.shape() != p.shape())
        fail(NNP_SHAPE_MISMATCH, "load_state_dict: state '", key, "' does not match the shape of parameter ", index);
      new_state[p.get()][name] = scalar ? value.to(Dtype::f64).clone() : value.to(p.device(), p.dtype()).clone();
    } else {
      fail(NNP_INVALID_ARGUMENT, "load_state_dict: unexpected key '", key, "' in an optimizer state dict");
    }
  }
  if (groups_seen.size() != opt.groups.size())
    fail(NNP_INVALID_ARGUMENT, "load_state_dict: the state dict has ", groups_seen.size(),
         " parameter groups but the optimizer has ", opt.groups.size());
  for (size_t gi = 0; gi < opt.groups.size(); ++gi) opt.groups[gi].options = options[gi];
  opt.state = std::move(new_state);
}

double clip_grad_norm(const nnp_list& params, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const auto& entry : params.entries) {
    if (!entry.tensor) continue;
    Tensor g = Tensor::borrow(entry.tensor.get()).grad();
    if (g.defined()) grads.push_back(g);
  }
  if (grads.empty()) return 0.0;
  double total = 0;
  if (std::isinf(norm_type)) {
    for (const Tensor& g : grads) total = std::max(total, g.abs().amax().to(Dtype::f64).item<double>());
  } else {
    for (const Tensor& g : grads) total += g.to(Dtype::f64).abs().pow(norm_type).sum().item<double>();
    total = std::pow(total, 1.0 / norm_type);
  }
  double coefficient = max_norm / (total + 1e-6);
  if (coefficient < 1)
    for (Tensor& g : grads) g.copy_(g * coefficient);
  return total;
}

namespace {

template <typename Opt>
auto& option_slot(Opt& opt, int32_t group, const std::string& name, const char* op) {
  if (group < 0 || group >= static_cast<int32_t>(opt.groups.size()))
    fail(NNP_INVALID_ARGUMENT, op, ": group ", group, " is out of range (", opt.groups.size(), " groups)");
  auto& options = opt.groups[static_cast<size_t>(group)].options;
  auto it = options.find(name);
  if (it == options.end()) fail(NNP_NOT_FOUND, op, ": ", opt.kind, " has no option '", name, "'");
  return it->second;
}

}  // namespace

double get_option(const Optimizer& opt, int32_t group, const std::string& name) {
  return option_slot(opt, group, name, "optimizer_get_option");
}

void set_option(Optimizer& opt, int32_t group, const std::string& name, double value) {
  option_slot(opt, group, name, "optimizer_set_option") = value;
}

}  // namespace nnp::core::optim
