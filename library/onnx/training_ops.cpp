// ONNX's training domain (ai.onnx.preview.training, version 1): the
// optimizer steps Adagrad, Adam and Momentum as graph ops, for graphs that
// carry their own update. Inputs: the learning rate R and the update count
// T (scalars), then each group of tensors (X..., G..., and the states);
// outputs: the new X... and the new states, in ONNX's order.
#include <cmath>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

// R and T, and the tensors after them cut into `groups` groups of equal size.
struct Step {
  double rate = 0;
  int64_t count = 0;
  std::vector<Tensors> groups;
};

Step step_of(const Tensors& in, size_t groups, const char* op) {
  if (in.size() < 2 + groups || (in.size() - 2) % groups != 0)
    invalid(std::string(op) + ": needs R, T and " + std::to_string(groups) + " groups of tensors of one size");
  Step s;
  s.rate = host_reals(need(in, 0, op)).at(0);
  s.count = host_ints(need(in, 1, op)).at(0);
  const size_t n = (in.size() - 2) / groups;
  for (size_t g = 0; g < groups; ++g) {
    Tensors group;
    for (size_t i = 0; i < n; ++i) group.push_back(need(in, 2 + g * n + i, op));
    s.groups.push_back(std::move(group));
  }
  return s;
}

// The gradient with the L2 term: norm_coefficient * X + G.
Tensor regularized(const Tensor& x, const Tensor& g, double norm) { return norm == 0 ? g : g + x * norm; }

Tensors adagrad(const Tensors& in, const Node& a) {
  const Step s = step_of(in, 3, "Adagrad");  // X, G, H (accumulated squared gradients)
  const double decay = attr_float(a, "decay_factor", 0.0), epsilon = attr_float(a, "epsilon", 1e-6),
               norm = attr_float(a, "norm_coefficient", 0.0);
  const double rate = s.rate / (1 + static_cast<double>(s.count) * decay);
  Tensors xs, hs;
  for (size_t i = 0; i < s.groups[0].size(); ++i) {
    const Tensor &x = s.groups[0][i], &h = s.groups[2][i];
    const Tensor g = regularized(x, s.groups[1][i], norm);
    const Tensor h_new = h + g * g;
    xs.push_back(x - g * rate / (h_new.sqrt() + epsilon));
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

Tensors adam(const Tensors& in, const Node& a) {
  const Step s = step_of(in, 4, "Adam");  // X, G, V (first moments), H (second moments)
  const double alpha = attr_float(a, "alpha", 0.9), beta = attr_float(a, "beta", 0.999),
               epsilon = attr_float(a, "epsilon", 1e-6), norm = attr_float(a, "norm_coefficient", 0.0),
               norm_post = attr_float(a, "norm_coefficient_post", 0.0);
  // Bias correction once steps have been taken.
  const double t = static_cast<double>(s.count);
  const double rate = s.count > 0 ? s.rate * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : s.rate;
  Tensors xs, vs, hs;
  for (size_t i = 0; i < s.groups[0].size(); ++i) {
    const Tensor& x = s.groups[0][i];
    const Tensor g = regularized(x, s.groups[1][i], norm);
    const Tensor v = s.groups[2][i] * alpha + g * (1 - alpha);
    const Tensor h = s.groups[3][i] * beta + g * g * (1 - beta);
    const Tensor moved = x - v / (h.sqrt() + epsilon) * rate;
    xs.push_back(norm_post == 0 ? moved : moved * (1 - norm_post));
    vs.push_back(v);
    hs.push_back(h);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

Tensors momentum(const Tensors& in, const Node& a) {
  const Step s = step_of(in, 3, "Momentum");  // X, G, V (momenta)
  const double alpha = attr_float(a, "alpha", 0.0), beta = attr_float(a, "beta", 0.0),
               norm = attr_float(a, "norm_coefficient", 0.0);
  const std::string mode = attr_string(a, "mode", "standard");
  if (mode != "standard" && mode != "nesterov") invalid("Momentum: mode must be standard or nesterov");
  const double beta_now = s.count > 0 ? beta : 1;  // the first step takes the whole gradient
  Tensors xs, vs;
  for (size_t i = 0; i < s.groups[0].size(); ++i) {
    const Tensor& x = s.groups[0][i];
    const Tensor g = regularized(x, s.groups[1][i], norm);
    const Tensor v = s.groups[2][i] * alpha + g * beta_now;
    xs.push_back(mode == "standard" ? x - v * s.rate : x - (g + v * alpha) * s.rate);
    vs.push_back(v);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

}  // namespace

void add_training_ops(OpTable& t) { t.insert({{"Adagrad", adagrad}, {"Adam", adam}, {"Momentum", momentum}}); }

}  // namespace nnp::library::onnx
