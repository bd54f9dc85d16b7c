// The update rules of torch.optim (PyTorch 1.13's), one per kind, on the
// SDK's tensors; registration.cpp registers them through the table.
#include "algorithms.hpp"

#include <algorithm>
#include <cmath>
#include <nnp/functional.hpp>
#include <sstream>

namespace nnp::library::optim {
namespace {

using nnp::Dtype;
using nnp::Tensor;
using Options = nnp::optim::OptionValues;
using State = nnp::optim::OptimizerState;

// A state tensor, created (filled with init) on first use. Updates assign a
// new tensor to the entry: state is never changed in place, so the core can
// discard a half-computed step.
Tensor& buffer(State& state, const std::string& name, const Tensor& like, double init = 0) {
  auto it = state.find(name);
  if (it == state.end()) it = state.emplace(name, nnp::full(like.shape(), init, like.dtype(), like.device())).first;
  return it->second;
}

// The step count, kept as a 0-d f64 tensor as PyTorch does.
double next_step(State& state) {
  auto it = state.find("step");
  double step = it == state.end() ? 1 : it->second.item<double>() + 1;
  state["step"] = nnp::full({}, step, Dtype::f64);
  return step;
}

// The backend's fused step where it has one (nnp_api.sgd_step_fused), else
// the same step composed of elementwise ops.
Tensor sgd(const Options& o, const Tensor& p, Tensor g, State& state) {
  {
    auto it = state.find("momentum_buffer");
    nnp_sgd_params params{};
    params.struct_size = sizeof params;
    params.lr = o["lr"];
    params.momentum = o["momentum"];
    params.dampening = o["dampening"];
    params.weight_decay = o["weight_decay"];
    params.nesterov = o.flag("nesterov");
    params.maximize = o.flag("maximize");
    nnp_tensor* value = nullptr;
    nnp_tensor* buffer = nullptr;
    check(api().sgd_step_fused(p.get(), g.get(), it == state.end() ? nullptr : it->second.get(), &params, &value,
                               &buffer));
    Tensor new_value = Tensor::adopt(value), new_buffer = Tensor::adopt(buffer);
    if (new_value.defined()) {
      if (new_buffer.defined()) state["momentum_buffer"] = new_buffer;
      return new_value;
    }
  }
  const double lr = o["lr"], momentum = o["momentum"], dampening = o["dampening"];
  if (o["maximize"] != 0) g = g.neg();
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  if (momentum != 0) {
    auto it = state.find("momentum_buffer");
    Tensor buf = it == state.end() ? g.clone() : it->second * momentum + (dampening != 0 ? g * (1 - dampening) : g);
    state["momentum_buffer"] = buf;
    g = o["nesterov"] != 0 ? g + buf * momentum : buf;
  }
  return p - g * lr;
}

Tensor adam(const Options& o, const Tensor& p, Tensor g, State& state, bool decoupled) {
  const double lr = o["lr"], beta1 = o["beta1"], beta2 = o["beta2"], eps = o["eps"],
               wd = o["weight_decay"];
  if (o["maximize"] != 0) g = g.neg();
  Tensor start = p;
  if (decoupled)
    start = p * (1 - lr * wd);
  else if (wd != 0)
    g = g + p * wd;
  const double step = next_step(state);
  Tensor& m = buffer(state, "exp_avg", p);
  Tensor& v = buffer(state, "exp_avg_sq", p);
  m = m * beta1 + g * (1 - beta1);
  v = v * beta2 + g * g * (1 - beta2);
  const double bias1 = 1 - std::pow(beta1, step), bias2 = 1 - std::pow(beta2, step);
  Tensor second = v;
  if (o["amsgrad"] != 0) {
    Tensor& vmax = buffer(state, "max_exp_avg_sq", p);
    vmax = vmax.maximum(v);
    second = vmax;
  }
  Tensor denom = second.sqrt() * (1 / std::sqrt(bias2)) + eps;
  return start - m / denom * (lr / bias1);
}

Tensor adagrad(const Options& o, const Tensor& p, Tensor g, State& state) {
  if (o["maximize"] != 0) g = g.neg();
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  const double step = next_step(state);
  const double clr = o["lr"] / (1 + (step - 1) * o["lr_decay"]);
  Tensor& sum = buffer(state, "sum", p, o["initial_accumulator_value"]);
  sum = sum + g * g;
  return p - g / (sum.sqrt() + o["eps"]) * clr;
}

Tensor adadelta(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double rho = o["rho"], eps = o["eps"];
  if (o["maximize"] != 0) g = g.neg();
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  next_step(state);
  Tensor& square_avg = buffer(state, "square_avg", p);
  Tensor& acc_delta = buffer(state, "acc_delta", p);
  square_avg = square_avg * rho + g * g * (1 - rho);
  Tensor delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g;
  acc_delta = acc_delta * rho + delta * delta * (1 - rho);
  return p - delta * o["lr"];
}

Tensor rmsprop(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double alpha = o["alpha"], eps = o["eps"], momentum = o["momentum"];
  if (o["maximize"] != 0) g = g.neg();
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  next_step(state);
  Tensor& square_avg = buffer(state, "square_avg", p);
  square_avg = square_avg * alpha + g * g * (1 - alpha);
  Tensor avg;
  if (o["centered"] != 0) {
    Tensor& grad_avg = buffer(state, "grad_avg", p);
    grad_avg = grad_avg * alpha + g * (1 - alpha);
    avg = (square_avg - grad_avg * grad_avg).sqrt() + eps;
  } else {
    avg = square_avg.sqrt() + eps;
  }
  if (momentum > 0) {
    Tensor& buf = buffer(state, "momentum_buffer", p);
    buf = buf * momentum + g / avg;
    return p - buf * o["lr"];
  }
  return p - g / avg * o["lr"];
}

// A host-side number kept in the state as a 0-d f64 tensor, as PyTorch keeps
// step, mu_product, eta and mu.
double scalar(const State& state, const std::string& name, double init) {
  auto it = state.find(name);
  return it == state.end() ? init : it->second.item<double>();
}
void set_scalar(State& state, const std::string& name, double value) { state[name] = full({}, value, Dtype::f64); }

Tensor adamax(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double lr = o["lr"], beta1 = o["beta1"], beta2 = o["beta2"], eps = o["eps"];
  if (o["maximize"] != 0) g = g.neg();
  const double step = next_step(state);
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  Tensor& m = buffer(state, "exp_avg", p);
  Tensor& inf = buffer(state, "exp_inf", p);
  m = m * beta1 + g * (1 - beta1);
  inf = (inf * beta2).maximum(g.abs() + eps);
  return p - m / inf * (lr / (1 - std::pow(beta1, step)));
}

// PyTorch 1.13's NAdam, including its mu_product_next = mu_product * mu *
// mu_next (mu counted twice; later releases drop the second mu).
Tensor nadam(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double lr = o["lr"], beta1 = o["beta1"], beta2 = o["beta2"], eps = o["eps"],
               decay = o["momentum_decay"];
  const double step = next_step(state);
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  const double mu = beta1 * (1 - 0.5 * std::pow(0.96, step * decay));
  const double mu_next = beta1 * (1 - 0.5 * std::pow(0.96, (step + 1) * decay));
  const double mu_product = scalar(state, "mu_product", 1.0) * mu;
  set_scalar(state, "mu_product", mu_product);
  const double mu_product_next = mu_product * mu * mu_next;
  Tensor& m = buffer(state, "exp_avg", p);
  Tensor& v = buffer(state, "exp_avg_sq", p);
  m = m * beta1 + g * (1 - beta1);
  v = v * beta2 + g * g * (1 - beta2);
  Tensor denom = (v * (1 / (1 - std::pow(beta2, step)))).sqrt() + eps;
  return p - g / denom * (lr * (1 - mu) / (1 - mu_product)) - m / denom * (lr * mu_next / (1 - mu_product_next));
}

Tensor radam(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double lr = o["lr"], beta1 = o["beta1"], beta2 = o["beta2"], eps = o["eps"];
  const double step = next_step(state);
  const double bias1 = 1 - std::pow(beta1, step), bias2 = 1 - std::pow(beta2, step);
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  Tensor& m = buffer(state, "exp_avg", p);
  Tensor& v = buffer(state, "exp_avg_sq", p);
  m = m * beta1 + g * (1 - beta1);
  v = v * beta2 + g * g * (1 - beta2);
  const Tensor corrected = m * (1 / bias1);
  // The length of the approximated simple moving average, and its limit.
  const double rho_inf = 2 / (1 - beta2) - 1;
  const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias2;
  if (rho_t <= 5) return p - corrected * lr;
  const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
  return p - corrected * (lr * rect * std::sqrt(bias2)) / (v.sqrt() + eps);
}

Tensor asgd(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double lr = o["lr"], lambd = o["lambd"], alpha = o["alpha"], t0 = o["t0"];
  if (o["maximize"] != 0) g = g.neg();
  const double step = next_step(state);
  if (o["weight_decay"] != 0) g = g + p * o["weight_decay"];
  const double eta = scalar(state, "eta", lr), mu = scalar(state, "mu", 1.0);
  Tensor next = p * (1 - lambd * eta) - g * eta;
  Tensor& ax = buffer(state, "ax", p);
  ax = mu != 1 ? ax + (next - ax) * mu : next;
  set_scalar(state, "eta", lr / std::pow(1 + lambd * lr * step, alpha));
  set_scalar(state, "mu", 1 / std::max(1.0, step - t0));
  return next;
}

Tensor rprop(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double minus = o["etaminus"], plus = o["etaplus"];
  if (o["maximize"] != 0) g = g.neg();
  next_step(state);
  Tensor& prev = buffer(state, "prev", p);
  Tensor& step_size = buffer(state, "step_size", p, o["lr"]);
  const Tensor sign = (g * prev).sign();
  const Tensor zero = g.scalar_like(0);
  const Tensor factor =
      where(sign.gt(zero), g.scalar_like(plus), where(sign.lt(zero), g.scalar_like(minus), g.scalar_like(1)));
  step_size = (step_size * factor).clamp(o["step_size_min"], o["step_size_max"]);
  // Where the gradient changed sign, the step is skipped and forgotten.
  const Tensor kept = where(sign.lt(zero), zero, g);
  prev = kept;
  return p - kept.sign() * step_size;
}


// PyTorch's checks of an option's value, named as its messages name them.
void check_value(const char* kind, const char* name, double value) {
  auto refuse = [&](const char* range) {
    std::ostringstream message;
    message << kind << ": invalid " << name << " value: " << value << " (must be " << range << ")";
    throw nnp::Error(NNP_INVALID_ARGUMENT, message.str());
  };
  const std::string n = name;
  if ((n == "lr" || n == "eps" || n == "weight_decay" || n == "momentum" || n == "lr_decay" ||
       n == "initial_accumulator_value" || n == "lambd" || n == "momentum_decay" || n == "step_size_min") &&
      !(value >= 0))
    refuse(">= 0");
  if ((n == "beta1" || n == "beta2") && !(value >= 0 && value < 1)) refuse("in [0, 1)");
  if (n == "etaminus" && !(value > 0 && value < 1)) refuse("in (0, 1)");
  if (n == "etaplus" && !(value > 1)) refuse("> 1");
  if ((n == "alpha" || n == "rho") && std::string(kind) != "ASGD" && !(value >= 0 && value <= 1)) refuse("in [0, 1]");
}

using Rule = Tensor (*)(const Options&, const Tensor&, Tensor, State&);

nnp::optim::OptimizerAlgorithm algorithm(const char* kind, const char* doc,
                                         std::vector<std::pair<std::string, double>> options, Rule rule,
                                         std::vector<std::string> host_state = {"step"}) {
  nnp::optim::OptimizerAlgorithm a;
  a.kind = kind;
  a.doc = doc;
  a.options = std::move(options);
  a.host_state = std::move(host_state);
  a.check = [kind = std::string(kind), names = a.options](const Options& o) {
    for (const auto& [name, unused] : names) check_value(kind.c_str(), name.c_str(), o[name.c_str()]);
    if (kind == "SGD" && o.flag("nesterov") && (o["momentum"] <= 0 || o["dampening"] != 0))
      throw nnp::Error(NNP_INVALID_ARGUMENT, "SGD: nesterov momentum requires a momentum and zero dampening");
  };
  a.update = [rule](const Options& o, const Tensor& p, const Tensor& g, State& state) { return rule(o, p, g, state); };
  return a;
}

Tensor adam_rule(const Options& o, const Tensor& p, Tensor g, State& state) { return adam(o, p, g, state, false); }
Tensor adamw_rule(const Options& o, const Tensor& p, Tensor g, State& state) { return adam(o, p, g, state, true); }

}  // namespace

std::vector<nnp::optim::OptimizerAlgorithm> algorithms() {
  return {
      algorithm("SGD", "stochastic gradient descent, with momentum and Nesterov's (torch.optim.SGD)",
                {{"lr", 1e-3}, {"momentum", 0}, {"dampening", 0}, {"weight_decay", 0}, {"nesterov", 0}, {"maximize", 0}},
                sgd, {}),
      algorithm("Adam", "Adam, with AMSGrad (torch.optim.Adam)",
                {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0}, {"amsgrad", 0},
                 {"maximize", 0}},
                adam_rule),
      algorithm("AdamW", "Adam with decoupled weight decay (torch.optim.AdamW)",
                {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 1e-2}, {"amsgrad", 0},
                 {"maximize", 0}},
                adamw_rule),
      algorithm("Adagrad", "Adagrad (torch.optim.Adagrad)",
                {{"lr", 1e-2}, {"lr_decay", 0}, {"weight_decay", 0}, {"initial_accumulator_value", 0}, {"eps", 1e-10},
                 {"maximize", 0}},
                adagrad),
      algorithm("Adadelta", "Adadelta (torch.optim.Adadelta)",
                {{"lr", 1.0}, {"rho", 0.9}, {"eps", 1e-6}, {"weight_decay", 0}, {"maximize", 0}}, adadelta),
      algorithm("RMSprop", "RMSprop, centered or not, with momentum (torch.optim.RMSprop)",
                {{"lr", 1e-2}, {"alpha", 0.99}, {"eps", 1e-8}, {"weight_decay", 0}, {"momentum", 0}, {"centered", 0},
                 {"maximize", 0}},
                rmsprop),
      algorithm("Adamax", "Adamax, Adam on the infinity norm (torch.optim.Adamax)",
                {{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0}, {"maximize", 0}},
                adamax),
      algorithm("NAdam", "Adam with Nesterov momentum (torch.optim.NAdam)",
                {{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0},
                 {"momentum_decay", 4e-3}},
                nadam, {"step", "mu_product"}),
      algorithm("RAdam", "rectified Adam (torch.optim.RAdam)",
                {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0}}, radam),
      algorithm("ASGD", "averaged stochastic gradient descent (torch.optim.ASGD)",
                {{"lr", 1e-2}, {"lambd", 1e-4}, {"alpha", 0.75}, {"t0", 1e6}, {"weight_decay", 0}, {"maximize", 0}},
                asgd, {"step", "eta", "mu"}),
      algorithm("Rprop", "resilient backpropagation (torch.optim.Rprop)",
                {{"lr", 1e-2}, {"etaminus", 0.5}, {"etaplus", 1.2}, {"step_size_min", 1e-6}, {"step_size_max", 50},
                 {"maximize", 0}},
                rprop),
  };
}

}  // namespace nnp::library::optim
