#include "algorithms.hpp"

#include <cmath>

#include "../error.hpp"
#include "../ops.hpp"

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
  fail(NNP_NOT_FOUND, "unknown optimizer '", kind, "' (SGD, Adam, AdamW, Adagrad, Adadelta, RMSprop)");
}

Tensor updated(const std::string& kind, const std::map<std::string, double>& options, const Tensor& p, Tensor g,
               std::map<std::string, Tensor>& state) {
  if (kind == "SGD") return sgd(options, p, g, state);
  if (kind == "Adam") return adam(options, p, g, state, false);
  if (kind == "AdamW") return adam(options, p, g, state, true);
  if (kind == "Adagrad") return adagrad(options, p, g, state);
  if (kind == "Adadelta") return adadelta(options, p, g, state);
  return rmsprop(options, p, g, state);
}

}  // namespace nnp::core::optim
