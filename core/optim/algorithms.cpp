#include "algorithms.hpp"

#include <cmath>

#include "../error.hpp"
#include "../ops.hpp"
#include "fused_sgd.hpp"

namespace nnp::core::optim {
namespace {

using Options = std::map<std::string, double>;
using State = std::map<std::string, Tensor>;

// A state tensor, created (filled with init) on first use. Updates assign a
// new tensor to the entry: state is never changed in place, so the caller can
// discard a half-computed step.
Tensor& buffer(State& state, const std::string& name, const Tensor& like, double init = 0) {
  auto it = state.find(name);
  if (it == state.end()) it = state.emplace(name, full(like.shape(), init, like.dtype(), like.device())).first;
  return it->second;
}

// The step count, kept as a 0-d f64 tensor as PyTorch does.
double next_step(State& state) {
  auto it = state.find("step");
  double step = it == state.end() ? 1 : it->second.item<double>() + 1;
  state["step"] = full({}, step, Dtype::f64);
  return step;
}

Tensor sgd(const Options& o, const Tensor& p, Tensor g, State& state) {
  {
    auto it = state.find("momentum_buffer");
    Tensor value, buffer;
    if (fused_sgd(o, p, g, it == state.end() ? nullptr : &it->second, &value, &buffer)) {
      if (buffer.defined()) state["momentum_buffer"] = buffer;
      return value;
    }
  }
  const double lr = o.at("lr"), momentum = o.at("momentum"), dampening = o.at("dampening");
  if (o.at("maximize") != 0) g = g.neg();
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
  if (momentum != 0) {
    auto it = state.find("momentum_buffer");
    Tensor buf = it == state.end() ? g.clone() : it->second * momentum + (dampening != 0 ? g * (1 - dampening) : g);
    state["momentum_buffer"] = buf;
    g = o.at("nesterov") != 0 ? g + buf * momentum : buf;
  }
  return p - g * lr;
}

Tensor adam(const Options& o, const Tensor& p, Tensor g, State& state, bool decoupled) {
  const double lr = o.at("lr"), beta1 = o.at("beta1"), beta2 = o.at("beta2"), eps = o.at("eps"),
               wd = o.at("weight_decay");
  if (o.at("maximize") != 0) g = g.neg();
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
  if (o.at("amsgrad") != 0) {
    Tensor& vmax = buffer(state, "max_exp_avg_sq", p);
    vmax = vmax.maximum(v);
    second = vmax;
  }
  Tensor denom = second.sqrt() * (1 / std::sqrt(bias2)) + eps;
  return start - m / denom * (lr / bias1);
}

Tensor adagrad(const Options& o, const Tensor& p, Tensor g, State& state) {
  if (o.at("maximize") != 0) g = g.neg();
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
  const double step = next_step(state);
  const double clr = o.at("lr") / (1 + (step - 1) * o.at("lr_decay"));
  Tensor& sum = buffer(state, "sum", p, o.at("initial_accumulator_value"));
  sum = sum + g * g;
  return p - g / (sum.sqrt() + o.at("eps")) * clr;
}

Tensor adadelta(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double rho = o.at("rho"), eps = o.at("eps");
  if (o.at("maximize") != 0) g = g.neg();
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
  next_step(state);
  Tensor& square_avg = buffer(state, "square_avg", p);
  Tensor& acc_delta = buffer(state, "acc_delta", p);
  square_avg = square_avg * rho + g * g * (1 - rho);
  Tensor delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g;
  acc_delta = acc_delta * rho + delta * delta * (1 - rho);
  return p - delta * o.at("lr");
}

Tensor rmsprop(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double alpha = o.at("alpha"), eps = o.at("eps"), momentum = o.at("momentum");
  if (o.at("maximize") != 0) g = g.neg();
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
  next_step(state);
  Tensor& square_avg = buffer(state, "square_avg", p);
  square_avg = square_avg * alpha + g * g * (1 - alpha);
  Tensor avg;
  if (o.at("centered") != 0) {
    Tensor& grad_avg = buffer(state, "grad_avg", p);
    grad_avg = grad_avg * alpha + g * (1 - alpha);
    avg = (square_avg - grad_avg * grad_avg).sqrt() + eps;
  } else {
    avg = square_avg.sqrt() + eps;
  }
  if (momentum > 0) {
    Tensor& buf = buffer(state, "momentum_buffer", p);
    buf = buf * momentum + g / avg;
    return p - buf * o.at("lr");
  }
  return p - g / avg * o.at("lr");
}

// A host-side number kept in the state as a 0-d f64 tensor, as PyTorch keeps
// step, mu_product, eta and mu.
double scalar(const State& state, const std::string& name, double init) {
  auto it = state.find(name);
  return it == state.end() ? init : it->second.item<double>();
}
void set_scalar(State& state, const std::string& name, double value) { state[name] = full({}, value, Dtype::f64); }

Tensor adamax(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double lr = o.at("lr"), beta1 = o.at("beta1"), beta2 = o.at("beta2"), eps = o.at("eps");
  if (o.at("maximize") != 0) g = g.neg();
  const double step = next_step(state);
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
  Tensor& m = buffer(state, "exp_avg", p);
  Tensor& inf = buffer(state, "exp_inf", p);
  m = m * beta1 + g * (1 - beta1);
  inf = (inf * beta2).maximum(g.abs() + eps);
  return p - m / inf * (lr / (1 - std::pow(beta1, step)));
}

// PyTorch 1.13's NAdam, including its mu_product_next = mu_product * mu *
// mu_next (mu counted twice; later releases drop the second mu).
Tensor nadam(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double lr = o.at("lr"), beta1 = o.at("beta1"), beta2 = o.at("beta2"), eps = o.at("eps"),
               decay = o.at("momentum_decay");
  const double step = next_step(state);
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
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
  const double lr = o.at("lr"), beta1 = o.at("beta1"), beta2 = o.at("beta2"), eps = o.at("eps");
  const double step = next_step(state);
  const double bias1 = 1 - std::pow(beta1, step), bias2 = 1 - std::pow(beta2, step);
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
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
  const double lr = o.at("lr"), lambd = o.at("lambd"), alpha = o.at("alpha"), t0 = o.at("t0");
  if (o.at("maximize") != 0) g = g.neg();
  const double step = next_step(state);
  if (o.at("weight_decay") != 0) g = g + p * o.at("weight_decay");
  const double eta = scalar(state, "eta", lr), mu = scalar(state, "mu", 1.0);
  Tensor next = p * (1 - lambd * eta) - g * eta;
  Tensor& ax = buffer(state, "ax", p);
  ax = mu != 1 ? ax + (next - ax) * mu : next;
  set_scalar(state, "eta", lr / std::pow(1 + lambd * lr * step, alpha));
  set_scalar(state, "mu", 1 / std::max(1.0, step - t0));
  return next;
}

Tensor rprop(const Options& o, const Tensor& p, Tensor g, State& state) {
  const double minus = o.at("etaminus"), plus = o.at("etaplus");
  if (o.at("maximize") != 0) g = g.neg();
  next_step(state);
  Tensor& prev = buffer(state, "prev", p);
  Tensor& step_size = buffer(state, "step_size", p, o.at("lr"));
  const Tensor sign = (g * prev).sign();
  const Tensor zero = g.scalar_like(0);
  const Tensor factor =
      where(sign.gt(zero), g.scalar_like(plus), where(sign.lt(zero), g.scalar_like(minus), g.scalar_like(1)));
  step_size = (step_size * factor).clamp(o.at("step_size_min"), o.at("step_size_max"));
  // Where the gradient changed sign, the step is skipped and forgotten.
  const Tensor kept = where(sign.lt(zero), zero, g);
  prev = kept;
  return p - kept.sign() * step_size;
}

}  // namespace

std::map<std::string, double> default_options(const std::string& kind) {
  if (kind == "SGD")
    return {{"lr", 1e-3}, {"momentum", 0}, {"dampening", 0}, {"weight_decay", 0}, {"nesterov", 0}, {"maximize", 0}};
  if (kind == "Adam" || kind == "AdamW")
    return {
        {"lr", 1e-3},   {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", kind == "AdamW" ? 1e-2 : 0},
        {"amsgrad", 0}, {"maximize", 0}};
  if (kind == "Adagrad")
    return {{"lr", 1e-2},   {"lr_decay", 0}, {"weight_decay", 0}, {"initial_accumulator_value", 0},
            {"eps", 1e-10}, {"maximize", 0}};
  if (kind == "Adadelta") return {{"lr", 1.0}, {"rho", 0.9}, {"eps", 1e-6}, {"weight_decay", 0}, {"maximize", 0}};
  if (kind == "RMSprop")
    return {{"lr", 1e-2},    {"alpha", 0.99}, {"eps", 1e-8},  {"weight_decay", 0},
            {"momentum", 0}, {"centered", 0}, {"maximize", 0}};
  if (kind == "Adamax")
    return {{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0}, {"maximize", 0}};
  if (kind == "NAdam")
    return {{"lr", 2e-3},  {"beta1", 0.9},      {"beta2", 0.999},
            {"eps", 1e-8}, {"weight_decay", 0}, {"momentum_decay", 4e-3}};
  if (kind == "RAdam") return {{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0}};
  if (kind == "ASGD")
    return {{"lr", 1e-2}, {"lambd", 1e-4}, {"alpha", 0.75}, {"t0", 1e6}, {"weight_decay", 0}, {"maximize", 0}};
  if (kind == "Rprop")
    return {{"lr", 1e-2},          {"etaminus", 0.5}, {"etaplus", 1.2}, {"step_size_min", 1e-6},
            {"step_size_max", 50}, {"maximize", 0}};
  fail(NNP_NOT_FOUND, "unknown optimizer '", kind,
       "' (SGD, Adam, AdamW, Adagrad, Adadelta, RMSprop, Adamax, NAdam, RAdam, ASGD, Rprop)");
}

Tensor updated(const std::string& kind, const std::map<std::string, double>& options, const Tensor& p, Tensor g,
               std::map<std::string, Tensor>& state) {
  if (kind == "SGD") return sgd(options, p, g, state);
  if (kind == "Adam") return adam(options, p, g, state, false);
  if (kind == "AdamW") return adam(options, p, g, state, true);
  if (kind == "Adagrad") return adagrad(options, p, g, state);
  if (kind == "Adadelta") return adadelta(options, p, g, state);
  if (kind == "Adamax") return adamax(options, p, g, state);
  if (kind == "NAdam") return nadam(options, p, g, state);
  if (kind == "RAdam") return radam(options, p, g, state);
  if (kind == "ASGD") return asgd(options, p, g, state);
  if (kind == "Rprop") return rprop(options, p, g, state);
  return rmsprop(options, p, g, state);
}

}  // namespace nnp::core::optim
