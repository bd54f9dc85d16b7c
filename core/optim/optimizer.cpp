#include "optimizer.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "../autograd/functions.hpp"
#include "../autograd/grad_mode.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../nn/attrs.hpp"
#include "../ops.hpp"
#include "../capture/tape.hpp"
#include "fused_sgd.hpp"

namespace nnp::core::optim {
namespace {

using State = Optimizer::State;
using autograd::NoGradGuard;

// The value of a 0-d (or one-element) tensor as a double.
double scalar_value(const Tensor& t) {
  TensorRef host = core::to(t, parse_device("cpu"), NNP_F64);
  double value = 0;
  copy_to_host(*host, &value, sizeof value);
  return value;
}

TensorRef host_scalar(double value) { return full(Dims{}, value, NNP_F64, parse_device("cpu")); }

// The algorithm's check of a group's options, refusals reported as its.
void check_options(const Algorithm& a, const std::vector<double>& options) {
  if (!a.check_options) return;
  const nnp_status status = a.check_options(options.data(), a.user_data);
  if (status != NNP_OK) fail(status, last_error_status() == status ? last_error_message() : a.name + ": invalid options");
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

// A pair given as a list of two numbers: true when `name` is one and the
// algorithm has it.
bool merge_pair(const Algorithm& a, const std::string& name, const nn::AttrValue& value,
                std::vector<double>& options) {
  for (const PairOption& pair : kPairOptions) {
    const int32_t first = a.option_index(pair.first), second = a.option_index(pair.second);
    if (name != pair.name || first < 0 || second < 0) continue;
    if (value.type != NNP_ATTR_INTS && value.type != NNP_ATTR_FLOATS)
      fail(NNP_INVALID_ARGUMENT, a.name, ": option '", name, "' is a list of two numbers (", pair.first, ", ",
           pair.second, ")");
    const std::vector<double> numbers = value.numbers();
    if (numbers.size() != 2)
      fail(NNP_INVALID_ARGUMENT, a.name, ": option '", name, "' takes two numbers, got ", numbers.size());
    options[static_cast<size_t>(first)] = numbers[0];
    options[static_cast<size_t>(second)] = numbers[1];
    return true;
  }
  return false;
}

std::vector<double> merged_options(const Algorithm& a, const nnp_attrs* given) {
  std::vector<double> options = a.option_defaults;
  if (given) {
    for (const auto& [name, value] : given->values) {
      if (merge_pair(a, name, value, options)) continue;
      const int32_t index = a.option_index(name);
      if (index < 0) {
        std::string known;
        for (const std::string& k : a.option_names) known += (known.empty() ? "" : ", ") + k;
        fail(NNP_INVALID_ARGUMENT, a.name, ": unknown option '", name, "' (", a.name, " takes: ", known, ")");
      }
      double v;
      switch (value.type) {
        case NNP_ATTR_INT: v = static_cast<double>(value.i); break;
        case NNP_ATTR_FLOAT: v = value.f; break;
        case NNP_ATTR_BOOL: v = value.b ? 1 : 0; break;
        default: fail(NNP_INVALID_ARGUMENT, a.name, ": option '", name, "' must be a number or a bool");
      }
      options[static_cast<size_t>(index)] = v;
    }
  }
  check_options(a, options);
  return options;
}

std::vector<TensorRef> tensors_of(const std::string& kind, const nnp_list& params, const Optimizer& opt) {
  std::vector<TensorRef> out;
  std::set<const nnp_tensor*> seen;
  for (const auto& group : opt.groups)
    for (const TensorRef& p : group.params) seen.insert(p.get());
  for (const auto& entry : params.entries) {
    if (!entry.tensor) fail(NNP_INVALID_ARGUMENT, kind, ": parameter '", entry.name, "' is not a tensor");
    if (!seen.insert(entry.tensor.get()).second)
      fail(NNP_INVALID_ARGUMENT, kind, ": some parameters appear in more than one parameter group (or twice)");
    if (!autograd::is_leaf(*entry.tensor))
      fail(NNP_INVALID_ARGUMENT, kind, ": can't optimize a non-leaf tensor ('", entry.name, "')");
    out.push_back(entry.tensor);
  }
  return out;
}

// A parameter's state follows it: after module.to(device or dtype) the next
// step moves the state where the parameter now is (floating state takes its
// dtype too), so optimizers keep working across devices as the module does.
// The algorithm's host numbers (step, NAdam's mu_product, ...) stay put.
void follow(const Algorithm& a, const Tensor& p, State& state) {
  for (auto& [name, t] : state) {
    if (a.is_host_state(name) || !t) continue;
    const nnp_dtype dtype = is_floating(t->dtype) ? p.dtype : t->dtype;
    if (!(t->device.backend == p.device.backend && t->device.index == p.device.index) || t->dtype != dtype)
      t = core::to(*t, p.device, dtype);
  }
}

// The built-in SGD's options as the backend's sgd_step kernel takes them, or
// NULL for any other algorithm (a plugin's "SGD" cannot exist: the name is
// the library's).
std::optional<nnp_sgd_params> sgd_params(const Algorithm& a, const std::vector<double>& o) {
  if (a.name != "SGD") return std::nullopt;
  auto at = [&](const char* name) {
    const int32_t i = a.option_index(name);
    if (i < 0) fail(NNP_INTERNAL, "SGD has no option '", name, "'");
    return o[static_cast<size_t>(i)];
  };
  nnp_sgd_params params{};
  params.struct_size = sizeof params;
  params.lr = at("lr");
  params.momentum = at("momentum");
  params.dampening = at("dampening");
  params.weight_decay = at("weight_decay");
  params.nesterov = at("nesterov") != 0;
  params.maximize = at("maximize") != 0;
  return params;
}

// One parameter's new value by the algorithm's update; state is replaced by
// what the update leaves in its list.
TensorRef updated(const Algorithm& a, const std::vector<double>& options, const Tensor& p, const Tensor& g,
                  State& state) {
  nnp_list list;
  for (const auto& [name, t] : state) list.add(name, t);
  nnp_tensor* out = nullptr;
  const nnp_status status = a.update(&p, &g, options.data(), &list, a.user_data, &out);
  TensorRef value = TensorRef::adopt(out);
  if (status != NNP_OK)
    fail(status, a.name, ": ", last_error_status() == status ? last_error_message() : "the update failed");
  if (!value) fail(NNP_INTERNAL, a.name, ": the update returned NNP_OK but no tensor");
  if (!(value->shape == p.shape) || value->dtype != p.dtype || value.get() == &p)
    fail(NNP_INTERNAL, a.name, ": the update gave a tensor of shape ", format_dims(value->shape), " and dtype ",
         dtype_name(value->dtype), " for a parameter of shape ", format_dims(p.shape), " and dtype ",
         dtype_name(p.dtype), (value.get() == &p ? " (the parameter itself)" : ""));
  State next;
  for (auto& entry : list.entries) {
    if (!entry.tensor) fail(NNP_INTERNAL, a.name, ": the update left state '", entry.name, "' that is not a tensor");
    if (!next.emplace(entry.name, std::move(entry.tensor)).second)
      fail(NNP_INTERNAL, a.name, ": the update left state '", entry.name, "' twice");
  }
  state = std::move(next);
  return value;
}

// One parameter's computed step, not yet applied; or, stepped in place by
// its backend's SGD kernel (in_place), what that step reads.
struct StagedUpdate {
  TensorRef param;
  TensorRef value;
  State state;
  std::optional<nnp_sgd_params> in_place;
  TensorRef grad;
};

Tensor* momentum_buffer(State& state) {
  auto it = state.find("momentum_buffer");
  return it == state.end() ? nullptr : it->second.get();
}

}  // namespace

std::unique_ptr<Optimizer> create(const std::string& kind, const nnp_list& params, const nnp_attrs* options) {
  auto opt = std::make_unique<Optimizer>();
  opt->algorithm = &algorithm(kind);
  add_param_group(*opt, params, options);
  return opt;
}

void add_param_group(Optimizer& opt, const nnp_list& params, const nnp_attrs* options) {
  Optimizer::Group group;
  group.options = merged_options(*opt.algorithm, options);
  group.params = tensors_of(opt.algorithm->name, params, opt);
  if (group.params.empty() && opt.groups.empty())
    fail(NNP_INVALID_ARGUMENT, opt.algorithm->name, ": optimizer got an empty parameter list");
  opt.groups.push_back(std::move(group));
  capture::note_host_state_change();
}

// A step is all or nothing: every parameter's new value and state are
// computed first, into new tensors; only then is anything changed. An
// allocation or kernel failure part-way (out of memory, a backend error)
// leaves the parameters and the optimizer's state as they were. In-place
// SGD kernels run after everything that can fail: their backends promise
// not to.
void step(Optimizer& opt) {
  NoGradGuard no_grad;
  const Algorithm& a = *opt.algorithm;
  std::vector<StagedUpdate> staged;
  for (auto& group : opt.groups) {
    const std::optional<nnp_sgd_params> sgd = sgd_params(a, group.options);
    for (const TensorRef& p : group.params) {
      TensorRef g = autograd::grad(*p);
      if (!g) continue;
      StagedUpdate update;
      update.param = p;
      if (auto it = opt.state.find(p.get()); it != opt.state.end()) update.state = it->second;
      follow(a, *p, update.state);
      if (sgd && sgd_in_place_applies(*sgd, *p, *g, momentum_buffer(update.state))) {
        update.in_place = sgd;
        update.grad = g;
      } else {
        update.value = updated(a, group.options, *p, *g, update.state);
      }
      staged.push_back(std::move(update));
    }
  }
  // Parameters that cannot adopt their new storage (another view or external
  // memory sees theirs) are copied into first: the only part that can fail.
  for (StagedUpdate& u : staged)
    if (!u.in_place && !can_adopt(*u.param, *u.value)) core::copy_into(*u.param, *u.value);
  for (StagedUpdate& u : staged)
    if (u.in_place) sgd_in_place(*u.in_place, *u.param, *u.grad, momentum_buffer(u.state));
  for (StagedUpdate& u : staged) {
    if (!u.in_place && can_adopt(*u.param, *u.value)) replace_data(*u.param, *u.value);
    opt.state[u.param.get()] = std::move(u.state);
  }
}

void zero_grad(Optimizer& opt, bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& group : opt.groups)
    for (const TensorRef& p : group.params) {
      TensorRef g = autograd::grad(*p);
      if (!g) continue;
      if (set_to_none)
        autograd::set_grad(*p, nullptr);
      else
        autograd::assign(*g, *full(Dims{}, 0, g->dtype, g->device));
    }
}

void state_dict(const Optimizer& opt, nnp_list& out) {
  const Algorithm& a = *opt.algorithm;
  int64_t index = 0;
  for (size_t gi = 0; gi < opt.groups.size(); ++gi) {
    const auto& group = opt.groups[gi];
    std::vector<int64_t> ids;
    for (const TensorRef& p : group.params) {
      auto it = opt.state.find(p.get());
      if (it != opt.state.end())
        for (const auto& [name, t] : it->second) out.add("state." + std::to_string(index) + "." + name, t);
      ids.push_back(index++);
    }
    // Sorted by name, as the options' map kept them before algorithms
    // declared their own order: state dicts keep their key order.
    std::map<std::string, double> options;
    for (size_t i = 0; i < a.option_names.size(); ++i) options[a.option_names[i]] = group.options[i];
    std::string prefix = "param_groups." + std::to_string(gi) + ".";
    for (const auto& [name, value] : options) out.add(prefix + name, host_scalar(value));
    Dims shape;
    shape.ndim = 1;
    shape.d[0] = static_cast<int64_t>(ids.size());
    out.add(prefix + "params", from_host(ids.data(), shape, NNP_I64, parse_device("cpu")));
  }
}

void load_state_dict(Optimizer& opt, const nnp_list& state) {
  NoGradGuard no_grad;
  capture::note_host_state_change();
  const Algorithm& a = *opt.algorithm;
  // Index the parameters as the state dict numbers them.
  std::vector<const Tensor*> by_index;
  for (const auto& group : opt.groups)
    for (const TensorRef& p : group.params) by_index.push_back(p.get());
  std::vector<std::vector<double>> options(opt.groups.size());
  for (size_t gi = 0; gi < opt.groups.size(); ++gi) options[gi] = opt.groups[gi].options;
  std::map<const nnp_tensor*, State> new_state;
  std::set<size_t> groups_seen;
  for (const auto& entry : state.entries) {
    const std::string& key = entry.name;
    if (!entry.tensor) fail(NNP_INVALID_ARGUMENT, "load_state_dict: '", key, "' holds no tensor");
    const Tensor& value = *entry.tensor;
    size_t first = key.find('.'), second = key.find('.', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      fail(NNP_INVALID_ARGUMENT, "load_state_dict: unexpected key '", key, "' in an optimizer state dict");
    std::string section = key.substr(0, first), name = key.substr(second + 1);
    const std::string number = key.substr(first + 1, second - first - 1);
    if (number.empty() || number.size() > 9 || number.find_first_not_of("0123456789") != std::string::npos)
      fail(NNP_INVALID_ARGUMENT, "load_state_dict: unexpected key '", key, "' in an optimizer state dict");
    const size_t index = std::stoul(number);
    if (section == "param_groups") {
      if (index >= opt.groups.size())
        fail(NNP_INVALID_ARGUMENT, "load_state_dict: the state dict has parameter group ", index,
             " but the optimizer has ", opt.groups.size());
      groups_seen.insert(index);
      if (name == "params") {
        if (value.numel != static_cast<int64_t>(opt.groups[index].params.size()))
          fail(NNP_INVALID_ARGUMENT, "load_state_dict: parameter group ", index, " has ", value.numel,
               " parameters in the state dict but ", opt.groups[index].params.size(), " in the optimizer");
        continue;
      }
      const int32_t option = a.option_index(name);
      if (option < 0) fail(NNP_INVALID_ARGUMENT, "load_state_dict: unknown option '", name, "'");
      if (value.numel != 1)
        fail(NNP_INVALID_ARGUMENT, "load_state_dict: option '", key, "' holds ", value.numel, " values, not one");
      options[index][static_cast<size_t>(option)] = scalar_value(value);
    } else if (section == "state") {
      if (index >= by_index.size())
        fail(NNP_INVALID_ARGUMENT, "load_state_dict: state for parameter ", index, " but the optimizer has ",
             by_index.size(), " parameters");
      const Tensor& p = *by_index[index];
      const bool scalar = a.is_host_state(name);
      if (!scalar && !(value.shape == p.shape))
        fail(NNP_SHAPE_MISMATCH, "load_state_dict: state '", key, "' does not match the shape of parameter ", index);
      new_state[&p][name] = scalar ? clone(*core::to(value, parse_device("cpu"), NNP_F64))
                                   : clone(*core::to(value, p.device, p.dtype));
    } else {
      fail(NNP_INVALID_ARGUMENT, "load_state_dict: unexpected key '", key, "' in an optimizer state dict");
    }
  }
  if (groups_seen.size() != opt.groups.size())
    fail(NNP_INVALID_ARGUMENT, "load_state_dict: the state dict has ", groups_seen.size(),
         " parameter groups but the optimizer has ", opt.groups.size());
  for (const std::vector<double>& o : options) check_options(a, o);
  for (size_t gi = 0; gi < opt.groups.size(); ++gi) opt.groups[gi].options = options[gi];
  opt.state = std::move(new_state);
}

double clip_grad_norm(const nnp_list& params, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  std::vector<TensorRef> grads;
  for (const auto& entry : params.entries) {
    if (!entry.tensor) continue;
    TensorRef g = autograd::grad(*entry.tensor);
    if (g) grads.push_back(g);
  }
  if (grads.empty()) return 0.0;
  double total = 0;
  if (std::isinf(norm_type)) {
    for (const TensorRef& g : grads)
      total = std::max(total, scalar_value(*reduce(NNP_REDUCE_MAX, *unary(NNP_UNARY_ABS, *g), nullptr, 0, false, 0)));
  } else {
    for (const TensorRef& g : grads) {
      TensorRef magnitude = unary(NNP_UNARY_ABS, *core::to(*g, g->device, NNP_F64));
      TensorRef powered = binary(NNP_BINARY_POW, *magnitude, *full(Dims{}, norm_type, NNP_F64, g->device));
      total += scalar_value(*reduce(NNP_REDUCE_SUM, *powered, nullptr, 0, false, 0));
    }
    total = std::pow(total, 1.0 / norm_type);
  }
  const double coefficient = max_norm / (total + 1e-6);
  if (coefficient < 1)
    for (const TensorRef& g : grads)
      autograd::assign(*g, *binary(NNP_BINARY_MUL, *g, *full(Dims{}, coefficient, g->dtype, g->device)));
  return total;
}

namespace {

template <typename Opt>
auto& option_slot(Opt& opt, int32_t group, const std::string& name, const char* op) {
  if (group < 0 || group >= static_cast<int32_t>(opt.groups.size()))
    fail(NNP_INVALID_ARGUMENT, op, ": group ", group, " is out of range (", opt.groups.size(), " groups)");
  const int32_t index = opt.algorithm->option_index(name);
  if (index < 0) fail(NNP_NOT_FOUND, op, ": ", opt.algorithm->name, " has no option '", name, "'");
  return opt.groups[static_cast<size_t>(group)].options[static_cast<size_t>(index)];
}

}  // namespace

double get_option(const Optimizer& opt, int32_t group, const std::string& name) {
  return option_slot(opt, group, name, "optimizer_get_option");
}

void set_option(Optimizer& opt, int32_t group, const std::string& name, double value) {
  option_slot(opt, group, name, "optimizer_set_option") = value;
  capture::note_host_state_change();
}

}  // namespace nnp::core::optim
