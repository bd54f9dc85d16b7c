// optim.hpp - torch.optim in C++ over the C table (included by nnp.hpp):
// the optimizers (by name, or by type: Adam, SGD, ...), clip_grad_norm_ and
// the StepLR / CosineAnnealingLR schedulers.
#pragma once

#include <cmath>
#include <nnp/nn.hpp>
#include <nnp/optimizers.hpp>
#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp {
namespace detail {
struct OptimizerTraits {
  static void release(nnp_optimizer* o) { api().optimizer_release(o); }
};
}  // namespace detail

namespace optim {

class Optimizer : public detail::Handle<nnp_optimizer, detail::OptimizerTraits> {
 public:
  // kind: "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "RMSprop", "Adamax",
  // "NAdam", "RAdam", "ASGD", "Rprop".
  Optimizer(const std::string& kind, const std::vector<Tensor>& params, const nn::Attrs& options = nn::Attrs()) {
    detail::List list = list_of(params);
    check(api().optimizer_create(kind.c_str(), list.get(), options.get(), out()));
  }
  Optimizer(Optimizer&&) noexcept = default;
  Optimizer& operator=(Optimizer&&) noexcept = default;
  using Handle::get;  // the handle, beside get(option) below

  void add_param_group(const std::vector<Tensor>& params, const nn::Attrs& options = nn::Attrs()) {
    detail::List list = list_of(params);
    check(api().optimizer_add_param_group(get(), list.get(), options.get()));
  }
  void step() { check(api().optimizer_step(get())); }
  void zero_grad(bool set_to_none = true) { check(api().optimizer_zero_grad(get(), set_to_none)); }
  int32_t group_count() const { return api().optimizer_group_count(get()); }
  double get(const std::string& option, int32_t group = 0) const {
    double v = 0;
    check(api().optimizer_get_option(get(), group, option.c_str(), &v));
    return v;
  }
  void set(const std::string& option, double value, int32_t group = 0) {
    check(api().optimizer_set_option(get(), group, option.c_str(), value));
  }
  StateDict state_dict() const {
    detail::List list(nullptr);
    check(api().optimizer_state_dict(get(), list.out()));
    return list.tensors();
  }
  void load_state_dict(const StateDict& state) {
    detail::List list = detail::List::of(state);
    check(api().optimizer_load_state_dict(get(), list.get()));
  }

  static detail::List list_of(const std::vector<Tensor>& params) {
    detail::List list;
    for (const Tensor& p : params) check(api().list_append_tensor(list.get(), "", p.get()));
    return list;
  }
};

// The optimizers by type (options in nnp/optimizers.hpp).
#define NNP_TYPED_OPTIMIZER(Name, OptionsType)                                                   \
  class Name : public Optimizer {                                                                \
   public:                                                                                       \
    explicit Name(const std::vector<Tensor>& params, const OptionsType& options = OptionsType()) \
        : Optimizer(#Name, params, options.attrs()) {}                                           \
  }
NNP_TYPED_OPTIMIZER(Adam, AdamOptions);
NNP_TYPED_OPTIMIZER(AdamW, AdamWOptions);
NNP_TYPED_OPTIMIZER(Adagrad, AdagradOptions);
NNP_TYPED_OPTIMIZER(Adadelta, AdadeltaOptions);
NNP_TYPED_OPTIMIZER(RMSprop, RMSpropOptions);
NNP_TYPED_OPTIMIZER(Adamax, AdamaxOptions);
NNP_TYPED_OPTIMIZER(NAdam, NAdamOptions);
NNP_TYPED_OPTIMIZER(RAdam, RAdamOptions);
NNP_TYPED_OPTIMIZER(ASGD, ASGDOptions);
NNP_TYPED_OPTIMIZER(Rprop, RpropOptions);
#undef NNP_TYPED_OPTIMIZER
// SGD has no default learning rate, as PyTorch's.
class SGD : public Optimizer {
 public:
  SGD(const std::vector<Tensor>& params, const SGDOptions& options) : Optimizer("SGD", params, options.attrs()) {}
};

// Scales gradients in place so their total norm is at most max_norm;
// returns the norm before (norm_type may be INFINITY).
inline double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0) {
  detail::List list = Optimizer::list_of(params);
  double total = 0;
  check(api().clip_grad_norm(list.get(), max_norm, norm_type, &total));
  return total;
}

// What the schedulers share: each group's starting lr and the epoch count.
// Subclasses say what the lr is at an epoch; step() once per epoch applies it.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& opt) : opt_(opt) {
    for (int32_t g = 0; g < opt.group_count(); ++g) base_.push_back(opt.get("lr", g));
  }
  virtual ~LRScheduler() = default;
  void step() {
    ++epoch_;
    for (int32_t g = 0; g < opt_.group_count(); ++g) opt_.set("lr", lr_at(base_[static_cast<size_t>(g)], epoch_), g);
  }
  int64_t last_epoch() const { return epoch_; }

 protected:
  virtual double lr_at(double base_lr, int64_t epoch) const = 0;

 private:
  Optimizer& opt_;
  std::vector<double> base_;
  int64_t epoch_ = 0;
};

// lr = base_lr * gamma^(epoch // step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1)
      : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {}

 protected:
  double lr_at(double base_lr, int64_t epoch) const override {
    return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
  }

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0)
      : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min) {}

 protected:
  double lr_at(double base_lr, int64_t epoch) const override {
    const double pi = 3.14159265358979323846;
    return eta_min_ +
           (base_lr - eta_min_) * (1 + std::cos(pi * static_cast<double>(epoch) / static_cast<double>(t_max_))) / 2;
  }

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace optim
}  // namespace nnp
