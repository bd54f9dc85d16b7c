// nnp/optimizers.hpp - the optimizers by type, as libtorch writes them:
//
//   nnp::optim::Adam opt(model->parameters(), nnp::optim::AdamOptions(1e-3).weight_decay(1e-4));
//
// Each is an nnp::optim::Optimizer of that kind made from its options
// (PyTorch's names and defaults); included by nnp/optim.hpp.
#pragma once

#include <nnp/nn.hpp>
#include <nnp/options.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace nnp::optim {

class Optimizer;
using Betas = std::tuple<double, double>;

struct SGDOptions {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(double, momentum) = 0;
  NNP_ARG(double, dampening) = 0;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(bool, nesterov) = false;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("momentum", momentum()).set("dampening", dampening()).set("weight_decay", weight_decay());
    a.set("nesterov", nesterov()).set("maximize", maximize());
    return a;
  }
};

// Adam and AdamW share their options; AdamW's weight decay defaults to 1e-2.
template <bool Decoupled>
struct AdamOptionsOf {
  AdamOptionsOf(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(Betas, betas) = Betas(0.9, 0.999);
  NNP_ARG(double, eps) = 1e-8;
  NNP_ARG(double, weight_decay) = Decoupled ? 1e-2 : 0;
  NNP_ARG(bool, amsgrad) = false;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("beta1", std::get<0>(betas())).set("beta2", std::get<1>(betas())).set("eps", eps());
    a.set("weight_decay", weight_decay()).set("amsgrad", amsgrad()).set("maximize", maximize());
    return a;
  }
};
using AdamOptions = AdamOptionsOf<false>;
using AdamWOptions = AdamOptionsOf<true>;

struct AdagradOptions {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(double, lr_decay) = 0;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(double, initial_accumulator_value) = 0;
  NNP_ARG(double, eps) = 1e-10;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("lr_decay", lr_decay()).set("weight_decay", weight_decay());
    a.set("initial_accumulator_value", initial_accumulator_value()).set("eps", eps()).set("maximize", maximize());
    return a;
  }
};

struct AdadeltaOptions {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(double, rho) = 0.9;
  NNP_ARG(double, eps) = 1e-6;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr())
        .set("rho", rho())
        .set("eps", eps())
        .set("weight_decay", weight_decay())
        .set("maximize", maximize());
    return a;
  }
};

struct RMSpropOptions {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(double, alpha) = 0.99;
  NNP_ARG(double, eps) = 1e-8;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(double, momentum) = 0;
  NNP_ARG(bool, centered) = false;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("alpha", alpha()).set("eps", eps()).set("weight_decay", weight_decay());
    a.set("momentum", momentum()).set("centered", centered()).set("maximize", maximize());
    return a;
  }
};

struct AdamaxOptions {
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(Betas, betas) = Betas(0.9, 0.999);
  NNP_ARG(double, eps) = 1e-8;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("beta1", std::get<0>(betas())).set("beta2", std::get<1>(betas())).set("eps", eps());
    a.set("weight_decay", weight_decay()).set("maximize", maximize());
    return a;
  }
};

// PyTorch 1.13's NAdam (no maximize).
struct NAdamOptions {
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(Betas, betas) = Betas(0.9, 0.999);
  NNP_ARG(double, eps) = 1e-8;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(double, momentum_decay) = 4e-3;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("beta1", std::get<0>(betas())).set("beta2", std::get<1>(betas())).set("eps", eps());
    a.set("weight_decay", weight_decay()).set("momentum_decay", momentum_decay());
    return a;
  }
};

struct RAdamOptions {
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(Betas, betas) = Betas(0.9, 0.999);
  NNP_ARG(double, eps) = 1e-8;
  NNP_ARG(double, weight_decay) = 0;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("beta1", std::get<0>(betas())).set("beta2", std::get<1>(betas())).set("eps", eps());
    a.set("weight_decay", weight_decay());
    return a;
  }
};

struct ASGDOptions {
  ASGDOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(double, lambd) = 1e-4;
  NNP_ARG(double, alpha) = 0.75;
  NNP_ARG(double, t0) = 1e6;
  NNP_ARG(double, weight_decay) = 0;
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("lambd", lambd()).set("alpha", alpha()).set("t0", t0());
    a.set("weight_decay", weight_decay()).set("maximize", maximize());
    return a;
  }
};

struct RpropOptions {
  RpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(Betas, etas) = Betas(0.5, 1.2);        // (etaminus, etaplus)
  NNP_ARG(Betas, step_sizes) = Betas(1e-6, 50);  // (step_size_min, step_size_max)
  NNP_ARG(bool, maximize) = false;

 public:
  nn::Attrs attrs() const {
    nn::Attrs a;
    a.set("lr", lr()).set("etaminus", std::get<0>(etas())).set("etaplus", std::get<1>(etas()));
    a.set("step_size_min", std::get<0>(step_sizes())).set("step_size_max", std::get<1>(step_sizes()));
    a.set("maximize", maximize());
    return a;
  }
};

}  // namespace nnp::optim
