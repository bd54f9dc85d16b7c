// optimizer_algorithm.hpp - writing an optimizer's update rule in C++ and
// registering it (nnp_api.register_optimizer, since 1.15), as nnplug's own
// SGD, Adam, ... are:
//
//   nnp::optim::register_optimizer(host, {"acme.SignSGD", "steps by the gradient's sign",
//       {{"lr", 1e-3}}, {},
//       nullptr,  // every lr is accepted
//       [](const nnp::optim::OptionValues& o, const nnp::Tensor& p, const nnp::Tensor& g,
//          nnp::optim::OptimizerState&) { return p - g.sign() * o["lr"]; }});
//
// The core keeps the optimizer (groups, per-parameter state, the
// all-or-nothing step, state dicts); the rule computes one parameter's new
// value and replaces its state entries, changing no tensor in place.
#pragma once

#include <nnp/plugin.h>

#include <cstring>
#include <functional>
#include <map>
#include <nnp/tensor.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnp::optim {

// A group's options as a rule receives them, read by name.
class OptionValues {
 public:
  OptionValues(const char* const* names, const double* values, int32_t count)
      : names_(names), values_(values), count_(count) {}
  double operator[](const char* name) const {
    for (int32_t i = 0; i < count_; ++i)
      if (std::strcmp(names_[i], name) == 0) return values_[i];
    throw Error(NNP_INTERNAL, std::string("optimizer option '") + name + "' is not declared");
  }
  bool flag(const char* name) const { return (*this)[name] != 0; }

 private:
  const char* const* names_;
  const double* values_;
  int32_t count_;
};

// One parameter's state: named tensors ("exp_avg", "step", ...).
using OptimizerState = std::map<std::string, Tensor>;

struct OptimizerAlgorithm {
  std::string kind;  // a plugin's: "<vendor>.<Name>"
  std::string doc;   // one line
  std::vector<std::pair<std::string, double>> options;  // names (PyTorch's keywords) and defaults
  std::vector<std::string> host_state;                  // 0-d f64 host numbers that stay put ("step")
  // Throws (nnp::Error) for options out of range; may be empty.
  std::function<void(const OptionValues&)> check;
  // param's new value: a new tensor; state's entries replaced, none changed in place.
  std::function<Tensor(const OptionValues&, const Tensor& param, const Tensor& grad, OptimizerState& state)> update;
};

namespace detail {

// What the core's callbacks reach through user_data: kept until process exit
// (registrations are never undone; a refused one is freed).
struct RegisteredAlgorithm {
  OptimizerAlgorithm algorithm;
  std::vector<const char*> names;
  std::vector<double> defaults;
  std::vector<const char*> host_state;

  OptionValues values(const double* options) const {
    return OptionValues(names.data(), options, static_cast<int32_t>(names.size()));
  }

  static nnp_status check_options(const double* options, void* user_data) {
    return nnp::detail::guard([&] {
      const auto& self = *static_cast<const RegisteredAlgorithm*>(user_data);
      self.algorithm.check(self.values(options));
    });
  }

  static nnp_status update(const nnp_tensor* param, const nnp_tensor* grad, const double* options, nnp_list* list,
                           void* user_data, nnp_tensor** out) {
    return nnp::detail::guard([&] {
      const auto& self = *static_cast<const RegisteredAlgorithm*>(user_data);
      const nnp_api& c = api();
      OptimizerState state;
      for (int32_t i = 0, n = c.list_size(list); i < n; ++i)
        if (nnp_tensor* t = c.list_tensor(list, i)) state.emplace(c.list_name(list, i), Tensor::borrow(t));
      Tensor value = self.algorithm.update(self.values(options), Tensor::borrow(const_cast<nnp_tensor*>(param)),
                                           Tensor::borrow(const_cast<nnp_tensor*>(grad)), state);
      // The list becomes the new state; the caller discards it whole if a
      // later step fails.
      for (int32_t i = c.list_size(list); i > 0; --i) check(c.list_remove(list, i - 1));
      for (const auto& [name, t] : state) check(c.list_append_tensor(list, name.c_str(), t.get()));
      *out = value.release();
    });
  }
};

}  // namespace detail

// Registers algorithm under its kind (host: the plugin's init host, or
// nullptr from an application); throws what the core refuses.
inline void register_optimizer(nnp_plugin_host* host, OptimizerAlgorithm algorithm) {
  auto* held = new detail::RegisteredAlgorithm{std::move(algorithm), {}, {}, {}};
  for (const auto& [name, value] : held->algorithm.options) {
    held->names.push_back(name.c_str());
    held->defaults.push_back(value);
  }
  for (const std::string& name : held->algorithm.host_state) held->host_state.push_back(name.c_str());
  held->host_state.push_back(nullptr);
  nnp_optimizer_algorithm c{};
  c.struct_size = sizeof c;
  c.kind = held->algorithm.kind.c_str();
  c.doc = held->algorithm.doc.c_str();
  c.option_names = held->names.data();
  c.option_defaults = held->defaults.data();
  c.option_count = static_cast<int32_t>(held->names.size());
  c.host_state = held->host_state.data();
  c.check_options = held->algorithm.check ? &detail::RegisteredAlgorithm::check_options : nullptr;
  c.update = &detail::RegisteredAlgorithm::update;
  c.user_data = held;
  const nnp_status status = api().register_optimizer(host, &c);
  if (status != NNP_OK) {
    const std::string message = api().last_error();
    delete held;
    throw Error(status, message);
  }
}

}  // namespace nnp::optim
