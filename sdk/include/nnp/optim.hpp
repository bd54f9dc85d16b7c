// optim.hpp - torch.optim in C++ over the C table (included by nnp.hpp):
// the optimizers (by name, or by type: Adam, SGD, ...), clip_grad_norm_ and
// the learning-rate schedulers (nnp/lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <nnp/nn.hpp>
#include <nnp/optimizers.hpp>
#include <nnp/tensor.hpp>
#include <optional>
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

  // PyTorch's group['initial_lr']: the lr before the first scheduler, where
  // every scheduler on this optimizer starts from.
  double initial_lr(int32_t group) {
    if (group < 0 || group >= group_count())
      throw Error(NNP_INVALID_ARGUMENT, "initial_lr: no parameter group " + std::to_string(group));
    if (initial_lr_.size() <= static_cast<size_t>(group)) initial_lr_.resize(static_cast<size_t>(group) + 1);
    std::optional<double>& lr = initial_lr_[static_cast<size_t>(group)];
    if (!lr) lr = get("lr", group);
    return *lr;
  }
  void set_initial_lr(int32_t group, double lr) {
    initial_lr(group);
    initial_lr_[static_cast<size_t>(group)] = lr;
  }

  static detail::List list_of(const std::vector<Tensor>& params) {
    detail::List list;
    for (const Tensor& p : params) check(api().list_append_tensor(list.get(), "", p.get()));
    return list;
  }

 private:
  std::vector<std::optional<double>> initial_lr_;
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

}  // namespace optim
}  // namespace nnp

#include <nnp/lbfgs.hpp>         // LBFGS, stepped with a closure
#include <nnp/lr_scheduler.hpp>  // the schedulers, over the Optimizer above
