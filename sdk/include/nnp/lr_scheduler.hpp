// nnp/lr_scheduler.hpp - torch.optim.lr_scheduler in C++ (included by
// nnp/optim.hpp): LambdaLR, MultiplicativeLR, StepLR, MultiStepLR,
// ConstantLR, LinearLR, ExponentialLR, PolynomialLR, CosineAnnealingLR,
// SequentialLR, ChainedScheduler, CyclicLR, OneCycleLR,
// CosineAnnealingWarmRestarts and ReduceLROnPlateau, as PyTorch 1.13
// computes them.
//
// As PyTorch's, a scheduler takes its first step when constructed (epoch 0)
// and each step() reads the optimizer's current learning rates and scales
// them (the "chainable" form), so several schedulers on one optimizer
// compose; base_lrs are each group's lr before the first scheduler
// (PyTorch's group['initial_lr']).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <nnp/optim.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::optim {

namespace detail {
constexpr double kPi = 3.14159265358979323846;
// Python's a % b for b > 0: never negative.
inline int64_t python_mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }
[[noreturn]] inline void scheduler_error(const std::string& message) { throw Error(NNP_INVALID_ARGUMENT, message); }
}  // namespace detail

// What the schedulers share (PyTorch's _LRScheduler). A subclass's
// constructor ends with initial_step(); get_lr() gives the next learning
// rates from the current ones, closed_form_lr() (where PyTorch has one)
// those of any epoch, used when a SequentialLR restarts a scheduler.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
    for (int32_t g = 0; g < optimizer.group_count(); ++g) base_lrs_.push_back(optimizer.initial_lr(g));
  }
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // One epoch (or one batch, for CyclicLR and OneCycleLR).
  virtual void step() {
    ++last_epoch_;
    apply(get_lr());
  }
  // PyTorch's deprecated step(epoch): jump to an epoch, with the closed form
  // where there is one.
  virtual void step_to(int64_t epoch) {
    last_epoch_ = epoch;
    std::optional<std::vector<double>> closed = closed_form_lr();
    apply(closed ? *closed : get_lr());
  }
  std::vector<double> get_last_lr() const { return last_lr_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  Optimizer& optimizer() const { return optimizer_; }

 protected:
  virtual std::vector<double> get_lr() = 0;
  virtual std::optional<std::vector<double>> closed_form_lr() const { return std::nullopt; }
  void initial_step() { step(); }
  double group_lr(size_t g) const { return optimizer_.get("lr", static_cast<int32_t>(g)); }
  size_t groups() const { return base_lrs_.size(); }
  // Each group's current lr times factor(group).
  template <typename Factor>
  std::vector<double> scaled(Factor factor) const {
    std::vector<double> lrs;
    for (size_t g = 0; g < groups(); ++g) lrs.push_back(group_lr(g) * factor(g));
    return lrs;
  }
  std::vector<double> current() const {
    return scaled([](size_t) { return 1.0; });
  }
  template <typename Lr>
  std::vector<double> from_base(Lr lr) const {
    std::vector<double> lrs;
    for (size_t g = 0; g < groups(); ++g) lrs.push_back(lr(base_lrs_[g], g));
    return lrs;
  }
  void apply(const std::vector<double>& lrs) {
    for (size_t g = 0; g < lrs.size(); ++g) optimizer_.set("lr", lrs[g], static_cast<int32_t>(g));
    last_lr_ = lrs;
  }
  friend class SequentialLR;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;
};

// lr = base_lr * lr_lambda(epoch), one function for every group or one per group.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Lambda lr_lambda) : LambdaLR(optimizer, std::vector<Lambda>{std::move(lr_lambda)}) {}
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas) : LRScheduler(optimizer) {
    lambdas_ = per_group(std::move(lr_lambdas), groups(), "LambdaLR");
    initial_step();
  }
  static std::vector<Lambda> per_group(std::vector<Lambda> lambdas, size_t groups, const char* who) {
    if (lambdas.size() == 1) return std::vector<Lambda>(groups, lambdas[0]);
    if (lambdas.size() != groups)
      detail::scheduler_error(std::string("Expected ") + std::to_string(groups) + " lr_lambdas, but got " +
                              std::to_string(lambdas.size()) + " (" + who + ")");
    return lambdas;
  }

 protected:
  std::vector<double> get_lr() override {
    return from_base([&](double base, size_t g) { return base * lambdas_[g](last_epoch_); });
  }
  std::vector<Lambda> lambdas_;
};

// lr *= lr_lambda(epoch) each step after the first.
class MultiplicativeLR : public LRScheduler {
 public:
  using Lambda = LambdaLR::Lambda;
  MultiplicativeLR(Optimizer& optimizer, Lambda lr_lambda)
      : MultiplicativeLR(optimizer, std::vector<Lambda>{std::move(lr_lambda)}) {}
  MultiplicativeLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas) : LRScheduler(optimizer) {
    lambdas_ = LambdaLR::per_group(std::move(lr_lambdas), groups(), "MultiplicativeLR");
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ <= 0) return current();
    return scaled([&](size_t g) { return lambdas_[g](last_epoch_); });
  }
  std::vector<Lambda> lambdas_;
};

// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1)
      : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
    if (step_size < 1) detail::scheduler_error("StepLR: step_size must be >= 1, got " + std::to_string(step_size));
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return current();
    return scaled([&](size_t) { return gamma_; });
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    const double steps = std::floor(static_cast<double>(last_epoch_) / static_cast<double>(step_size_));
    return from_base([&](double base, size_t) { return base * std::pow(gamma_, steps); });
  }
  int64_t step_size_;
  double gamma_;
};

// lr *= gamma at each milestone (a milestone given twice counts twice).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1)
      : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
    std::sort(milestones_.begin(), milestones_.end());
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
    if (hits == 0) return current();
    return scaled([&](size_t) { return std::pow(gamma_, static_cast<double>(hits)); });
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
    return from_base([&](double base, size_t) { return base * std::pow(gamma_, static_cast<double>(passed)); });
  }
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr = base_lr * factor for the first total_iters epochs, then base_lr.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3, int64_t total_iters = 5)
      : LRScheduler(optimizer), factor_(factor), total_iters_(total_iters) {
    if (factor > 1.0 || factor < 0)
      detail::scheduler_error("Constant multiplicative factor expected to be between 0 and 1.");
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ == 0) return scaled([&](size_t) { return factor_; });
    if (last_epoch_ != total_iters_) return current();
    return scaled([&](size_t) { return 1.0 / factor_; });
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    return from_base([&](double base, size_t) {
      return base * (factor_ + (last_epoch_ >= total_iters_ ? 1.0 : 0.0) * (1 - factor_));
    });
  }
  double factor_;
  int64_t total_iters_;
};

// The factor goes linearly from start_factor to end_factor over total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5)
      : LRScheduler(optimizer), start_(start_factor), end_(end_factor), total_iters_(total_iters) {
    if (start_factor > 1.0 || start_factor <= 0)
      detail::scheduler_error("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
    if (end_factor > 1.0 || end_factor < 0)
      detail::scheduler_error("Ending multiplicative factor expected to be between 0 and 1.");
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ == 0) return scaled([&](size_t) { return start_; });
    if (last_epoch_ > total_iters_) return current();
    return scaled([&](size_t) {
      return 1.0 + (end_ - start_) / (static_cast<double>(total_iters_) * start_ +
                                      static_cast<double>(last_epoch_ - 1) * (end_ - start_));
    });
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    return from_base([&](double base, size_t) {
      return base * (start_ + (end_ - start_) * static_cast<double>(std::min(total_iters_, last_epoch_)) /
                                  static_cast<double>(total_iters_));
    });
  }
  double start_, end_;
  int64_t total_iters_;
};

// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) { initial_step(); }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ == 0) return current();
    return scaled([&](size_t) { return gamma_; });
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    return from_base([&](double base, size_t) { return base * std::pow(gamma_, static_cast<double>(last_epoch_)); });
  }
  double gamma_;
};

// lr = base_lr (1 - epoch / total_iters)^power, then 0.
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& optimizer, int64_t total_iters = 5, double power = 1.0)
      : LRScheduler(optimizer), total_iters_(total_iters), power_(power) {
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    if (last_epoch_ == 0 || last_epoch_ > total_iters_) return current();
    const double t = static_cast<double>(total_iters_), e = static_cast<double>(last_epoch_);
    const double decay = std::pow((1.0 - e / t) / (1.0 - (e - 1) / t), power_);
    return scaled([&](size_t) { return decay; });
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    return from_base([&](double base, size_t) {
      return base * std::pow(1.0 - static_cast<double>(std::min(total_iters_, last_epoch_)) /
                                       static_cast<double>(total_iters_),
                             power_);
    });
  }
  int64_t total_iters_;
  double power_;
};

// lr follows half a cosine from base_lr down to eta_min over T_max epochs,
// and back up over the next T_max.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0)  // NOLINT: PyTorch's names
      : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
    if (T_max < 1) detail::scheduler_error("CosineAnnealingLR: T_max must be >= 1, got " + std::to_string(T_max));
    initial_step();
  }

 protected:
  std::vector<double> get_lr() override {
    const double t = static_cast<double>(t_max_), e = static_cast<double>(last_epoch_);
    if (last_epoch_ == 0) return current();
    if (detail::python_mod(last_epoch_ - 1 - t_max_, 2 * t_max_) == 0)
      return from_base(
          [&](double base, size_t g) { return group_lr(g) + (base - eta_min_) * (1 - std::cos(detail::kPi / t)) / 2; });
    std::vector<double> lrs;
    for (size_t g = 0; g < groups(); ++g)
      lrs.push_back((1 + std::cos(detail::kPi * e / t)) / (1 + std::cos(detail::kPi * (e - 1) / t)) *
                        (group_lr(g) - eta_min_) +
                    eta_min_);
    return lrs;
  }
  std::optional<std::vector<double>> closed_form_lr() const override {
    return from_base([&](double base, size_t) {
      return eta_min_ +
             (base - eta_min_) *
                 (1 + std::cos(detail::kPi * static_cast<double>(last_epoch_) / static_cast<double>(t_max_))) / 2;
    });
  }
  int64_t t_max_;
  double eta_min_;
};

// Runs schedulers[i] from milestones[i - 1] on, each restarted at its epoch 0.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones)
      : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
    if (schedulers_.empty()) detail::scheduler_error("SequentialLR expects at least one scheduler");
    for (size_t i = 0; i < schedulers_.size(); ++i)
      if (&schedulers_[i]->optimizer() != &optimizer)
        detail::scheduler_error(
            "Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
            "got schedulers at index " +
            std::to_string(i) + " to be different than the optimizer passed in.");
    if (milestones_.size() != schedulers_.size() - 1)
      detail::scheduler_error(
          "Sequential Schedulers expects number of schedulers provided to be one more than the "
          "number of milestone points, but got number of schedulers " +
          std::to_string(schedulers_.size()) + " and the number of milestones to be equal to " +
          std::to_string(milestones_.size()));
    last_epoch_ = 0;
    for (size_t g = 0; g < groups(); ++g) optimizer.set("lr", base_lrs_[g], static_cast<int32_t>(g));
    for (const auto& s : schedulers_) s->last_epoch_ -= 1;  // undo their initial steps
    schedulers_[0]->initial_step();
    last_lr_ = schedulers_[0]->get_last_lr();
  }
  void step() override {
    ++last_epoch_;
    const size_t i = static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                                         milestones_.begin());
    if (i > 0 && milestones_[i - 1] == last_epoch_)
      schedulers_[i]->step_to(0);
    else
      schedulers_[i]->step();
    last_lr_ = schedulers_[i]->get_last_lr();
  }

 protected:
  std::vector<double> get_lr() override { return current(); }
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// Steps every scheduler at each step: their factors multiply.
class ChainedScheduler {
 public:
  explicit ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers) : schedulers_(std::move(schedulers)) {
    if (schedulers_.empty()) detail::scheduler_error("ChainedScheduler expects at least one scheduler");
    for (size_t i = 1; i < schedulers_.size(); ++i)
      if (&schedulers_[i]->optimizer() != &schedulers_[0]->optimizer())
        detail::scheduler_error(
            "ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
            "schedulers at index 0 and " +
            std::to_string(i) + " to be different");
    last_lr_ = current();
  }
  void step() {
    for (const auto& s : schedulers_) s->step();
    last_lr_ = current();
  }
  std::vector<double> get_last_lr() const { return last_lr_; }

 private:
  std::vector<double> current() const {
    Optimizer& opt = schedulers_.back()->optimizer();
    std::vector<double> lrs;
    for (int32_t g = 0; g < opt.group_count(); ++g) lrs.push_back(opt.get("lr", g));
    return lrs;
  }
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<double> last_lr_;
};

// Whether an optimizer has `option` (momentum for SGD and RMSprop, beta1
// for the Adam family).
inline bool has_option(const Optimizer& optimizer, const std::string& option) {
  double v = 0;
  return api().optimizer_get_option(optimizer.get(), 0, option.c_str(), &v) == NNP_OK;
}

struct CyclicLROptions {
  CyclicLROptions(double base_lr, double max_lr) : base_lr_(base_lr), max_lr_(max_lr) {}
  NNP_ARG(double, base_lr);
  NNP_ARG(double, max_lr);
  NNP_ARG(int64_t, step_size_up) = 2000;
  NNP_ARG(std::optional<int64_t>, step_size_down);  // default: step_size_up
  NNP_ARG(std::string, mode) = "triangular";        // "triangular", "triangular2" or "exp_range"
  NNP_ARG(double, gamma) = 1.0;
  // A custom amplitude scale (mode is then ignored), of the cycle number or
  // of the iteration (scale_mode "iterations").
  NNP_ARG(std::function<double(double)>, scale_fn);
  NNP_ARG(std::string, scale_mode) = "cycle";
  NNP_ARG(bool, cycle_momentum) = true;
  NNP_ARG(double, base_momentum) = 0.8;
  NNP_ARG(double, max_momentum) = 0.9;
};

// lr cycles between base_lr and max_lr (a triangle per cycle), stepped per
// batch; momentum cycles the other way.
class CyclicLR : public LRScheduler {
 public:
  CyclicLR(Optimizer& optimizer, const CyclicLROptions& o) : LRScheduler(starting_at(optimizer, o.base_lr())), o_(o) {
    const double up = static_cast<double>(o.step_size_up());
    const double down = o.step_size_down() ? static_cast<double>(*o.step_size_down()) : up;
    total_size_ = up + down;
    step_ratio_ = up / total_size_;
    if (!o.scale_fn()) {
      if (o.mode() == "triangular") {
        scale_fn_ = [](double) { return 1.0; };
        scale_mode_ = "cycle";
      } else if (o.mode() == "triangular2") {
        scale_fn_ = [](double x) { return 1 / std::pow(2.0, x - 1); };
        scale_mode_ = "cycle";
      } else if (o.mode() == "exp_range") {
        const double gamma = o.gamma();
        scale_fn_ = [gamma](double x) { return std::pow(gamma, x); };
        scale_mode_ = "iterations";
      } else {
        detail::scheduler_error("mode is invalid and scale_fn is None");
      }
    } else {
      scale_fn_ = o.scale_fn();
      scale_mode_ = o.scale_mode();
    }
    if (o.cycle_momentum()) {
      if (!has_option(optimizer, "momentum"))
        detail::scheduler_error("optimizer must support momentum with `cycle_momentum` option enabled");
      for (size_t g = 0; g < groups(); ++g) optimizer.set("momentum", o.base_momentum(), static_cast<int32_t>(g));
    }
    initial_step();
    base_lrs_.assign(groups(), o.base_lr());
  }

 protected:
  std::vector<double> get_lr() override {
    const double e = static_cast<double>(last_epoch_);
    const double cycle = std::floor(1 + e / total_size_);
    const double x = 1. + e / total_size_ - cycle;
    const double scale_factor = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
    const double scale = scale_fn_(scale_mode_ == "cycle" ? cycle : e);
    std::vector<double> lrs(groups(), o_.base_lr() + (o_.max_lr() - o_.base_lr()) * scale_factor * scale);
    if (o_.cycle_momentum())
      for (size_t g = 0; g < groups(); ++g)
        optimizer_.set("momentum", o_.max_momentum() - (o_.max_momentum() - o_.base_momentum()) * scale_factor * scale,
                       static_cast<int32_t>(g));
    return lrs;
  }
  // Every group starts at base_lr, before the scheduler records its initial lr.
  static Optimizer& starting_at(Optimizer& optimizer, double lr) {
    for (int32_t g = 0; g < optimizer.group_count(); ++g) optimizer.set("lr", lr, g);
    return optimizer;
  }
  CyclicLROptions o_;
  double total_size_ = 0, step_ratio_ = 0;
  std::function<double(double)> scale_fn_;
  std::string scale_mode_;
};

struct OneCycleLROptions {
  explicit OneCycleLROptions(double max_lr) : max_lr_(max_lr) {}
  NNP_ARG(double, max_lr);
  NNP_ARG(std::optional<int64_t>, total_steps);  // or epochs * steps_per_epoch
  NNP_ARG(std::optional<int64_t>, epochs);
  NNP_ARG(std::optional<int64_t>, steps_per_epoch);
  NNP_ARG(double, pct_start) = 0.3;
  NNP_ARG(std::string, anneal_strategy) = "cos";  // or "linear"
  NNP_ARG(bool, cycle_momentum) = true;
  NNP_ARG(double, base_momentum) = 0.85;
  NNP_ARG(double, max_momentum) = 0.95;
  NNP_ARG(double, div_factor) = 25.0;
  NNP_ARG(double, final_div_factor) = 1e4;
  NNP_ARG(bool, three_phase) = false;
};

// The 1cycle policy, stepped per batch: lr rises from max_lr / div_factor
// to max_lr over pct_start of the steps, then anneals to initial_lr /
// final_div_factor (three_phase: back to the initial lr first); momentum
// (or Adam's beta1) moves the other way.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o) : LRScheduler(optimizer), o_(o) {
    if (o.total_steps()) {
      if (*o.total_steps() <= 0)
        detail::scheduler_error("Expected positive integer total_steps, but got " + std::to_string(*o.total_steps()));
      total_steps_ = *o.total_steps();
    } else if (o.epochs() && o.steps_per_epoch()) {
      if (*o.epochs() <= 0)
        detail::scheduler_error("Expected positive integer epochs, but got " + std::to_string(*o.epochs()));
      if (*o.steps_per_epoch() <= 0)
        detail::scheduler_error("Expected positive integer steps_per_epoch, but got " +
                                std::to_string(*o.steps_per_epoch()));
      total_steps_ = *o.epochs() * *o.steps_per_epoch();
    } else {
      detail::scheduler_error("You must define either total_steps OR (epochs AND steps_per_epoch)");
    }
    if (o.pct_start() < 0 || o.pct_start() > 1)
      detail::scheduler_error("Expected float between 0 and 1 pct_start, but got " + std::to_string(o.pct_start()));
    if (o.anneal_strategy() != "cos" && o.anneal_strategy() != "linear")
      detail::scheduler_error("anneal_strategy must by one of 'cos' or 'linear', instead got " + o.anneal_strategy());
    const double t = static_cast<double>(total_steps_), pct = o.pct_start();
    initial_ = o.max_lr() / o.div_factor();
    min_ = initial_ / o.final_div_factor();
    // Phases: end step, start and end lr, start and end momentum.
    if (o.three_phase())
      phases_ = {{pct * t - 1, initial_, o.max_lr(), o.max_momentum(), o.base_momentum()},
                 {2 * pct * t - 2, o.max_lr(), initial_, o.base_momentum(), o.max_momentum()},
                 {t - 1, initial_, min_, o.max_momentum(), o.max_momentum()}};
    else
      phases_ = {{pct * t - 1, initial_, o.max_lr(), o.max_momentum(), o.base_momentum()},
                 {t - 1, o.max_lr(), min_, o.base_momentum(), o.max_momentum()}};
    for (size_t g = 0; g < groups(); ++g) {
      optimizer.set("lr", initial_, static_cast<int32_t>(g));
      optimizer.set_initial_lr(static_cast<int32_t>(g), initial_);
    }
    if (o.cycle_momentum()) {
      momentum_option_ = has_option(optimizer, "momentum") ? "momentum" : has_option(optimizer, "beta1") ? "beta1" : "";
      if (momentum_option_.empty())
        detail::scheduler_error("optimizer must support momentum with `cycle_momentum` option enabled");
      for (size_t g = 0; g < groups(); ++g) optimizer.set(momentum_option_, o.max_momentum(), static_cast<int32_t>(g));
    }
    base_lrs_.assign(groups(), initial_);
    initial_step();
  }

 protected:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  double anneal(double start, double end, double pct) const {
    if (o_.anneal_strategy() == "cos") return end + (start - end) / 2.0 * (std::cos(detail::kPi * pct) + 1);
    return (end - start) * pct + start;
  }
  std::vector<double> get_lr() override {
    const int64_t step_num = last_epoch_;
    if (step_num > total_steps_)
      detail::scheduler_error("Tried to step " + std::to_string(step_num + 1) +
                              " times. The specified number of total steps is " + std::to_string(total_steps_));
    const double s = static_cast<double>(step_num);
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& p = phases_[i];
      if (s <= p.end_step || i + 1 == phases_.size()) {
        const double pct = (s - start_step) / (p.end_step - start_step);
        lr = anneal(p.start_lr, p.end_lr, pct);
        momentum = anneal(p.start_momentum, p.end_momentum, pct);
        break;
      }
      start_step = p.end_step;
    }
    if (o_.cycle_momentum())
      for (size_t g = 0; g < groups(); ++g) optimizer_.set(momentum_option_, momentum, static_cast<int32_t>(g));
    return std::vector<double>(groups(), lr);
  }
  OneCycleLROptions o_;
  int64_t total_steps_ = 0;
  double initial_ = 0, min_ = 0;
  std::vector<Phase> phases_;
  std::string momentum_option_;
};

// Cosine annealing restarted every T_i epochs, T_i = T_0 T_mult^i; step(epoch)
// takes fractional epochs (per batch: epoch + batch / batches).
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1,  // NOLINT: PyTorch's names
                              double eta_min = 0)
      : LRScheduler(optimizer), t_0_(T_0), t_i_(static_cast<double>(T_0)), t_mult_(T_mult), eta_min_(eta_min) {
    if (T_0 <= 0) detail::scheduler_error("Expected positive integer T_0, but got " + std::to_string(T_0));
    if (T_mult < 1) detail::scheduler_error("Expected integer T_mult >= 1, but got " + std::to_string(T_mult));
    initial_step();
  }
  void step() override {
    if (last_epoch_ < 0) return step_epoch(0);
    t_cur_ += 1;
    if (t_cur_ >= t_i_) {
      t_cur_ -= t_i_;
      t_i_ *= static_cast<double>(t_mult_);
    }
    last_epoch_ += 1;
    apply(get_lr());
  }
  void step_to(int64_t epoch) override { step_epoch(static_cast<double>(epoch)); }
  void step_epoch(double epoch) {
    if (epoch < 0) detail::scheduler_error("Expected non-negative epoch, but got " + std::to_string(epoch));
    const double t0 = static_cast<double>(t_0_), mult = static_cast<double>(t_mult_);
    if (epoch >= t0) {
      if (t_mult_ == 1) {
        t_cur_ = std::fmod(epoch, t0);
      } else {
        const double n = std::floor(std::log(epoch / t0 * (mult - 1) + 1) / std::log(mult));
        t_cur_ = epoch - t0 * (std::pow(mult, n) - 1) / (mult - 1);
        t_i_ = t0 * std::pow(mult, n);
      }
    } else {
      t_i_ = t0;
      t_cur_ = epoch;
    }
    last_epoch_ = static_cast<int64_t>(std::floor(epoch));
    apply(get_lr());
  }

 protected:
  std::vector<double> get_lr() override {
    return from_base([&](double base, size_t) {
      return eta_min_ + (base - eta_min_) * (1 + std::cos(detail::kPi * t_cur_ / t_i_)) / 2;
    });
  }
  int64_t t_0_;
  double t_i_;
  int64_t t_mult_;
  double eta_min_;
  double t_cur_ = -1;
};

struct ReduceLROnPlateauOptions {
  NNP_ARG(std::string, mode) = "min";  // or "max"
  NNP_ARG(double, factor) = 0.1;
  NNP_ARG(int64_t, patience) = 10;
  NNP_ARG(double, threshold) = 1e-4;
  NNP_ARG(std::string, threshold_mode) = "rel";  // or "abs"
  NNP_ARG(int64_t, cooldown) = 0;
  NNP_ARG(std::vector<double>, min_lr) = std::vector<double>{0.0};  // one for all groups, or one per group
  NNP_ARG(double, eps) = 1e-8;
};

// Divides the lr by 1 / factor when a metric stops improving for patience epochs.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& o = {})
      : optimizer_(optimizer), o_(o) {
    if (o.factor() >= 1.0) detail::scheduler_error("Factor should be < 1.0.");
    const size_t groups = static_cast<size_t>(optimizer.group_count());
    min_lrs_ = o.min_lr();
    if (min_lrs_.size() == 1) min_lrs_.assign(groups, min_lrs_[0]);
    if (min_lrs_.size() != groups)
      detail::scheduler_error("expected " + std::to_string(groups) + " min_lrs, got " +
                              std::to_string(o.min_lr().size()));
    if (o.mode() != "min" && o.mode() != "max") detail::scheduler_error("mode " + o.mode() + " is unknown!");
    if (o.threshold_mode() != "rel" && o.threshold_mode() != "abs")
      detail::scheduler_error("threshold mode " + o.threshold_mode() + " is unknown!");
    best_ = mode_worse();
    for (int32_t g = 0; g < optimizer.group_count(); ++g) last_lr_.push_back(optimizer.get("lr", g));
  }
  void step(double metric) {
    last_epoch_ += 1;
    if (is_better(metric)) {
      best_ = metric;
      bad_epochs_ = 0;
    } else {
      bad_epochs_ += 1;
    }
    if (cooldown_counter_ > 0) {
      cooldown_counter_ -= 1;
      bad_epochs_ = 0;
    }
    if (bad_epochs_ > o_.patience()) {
      reduce_lr();
      cooldown_counter_ = o_.cooldown();
      bad_epochs_ = 0;
    }
    last_lr_.clear();
    for (int32_t g = 0; g < optimizer_.group_count(); ++g) last_lr_.push_back(optimizer_.get("lr", g));
  }
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t num_bad_epochs() const { return bad_epochs_; }
  double best() const { return best_; }
  int64_t last_epoch() const { return last_epoch_; }

 private:
  double mode_worse() const {
    return o_.mode() == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  bool is_better(double a) const {
    const bool rel = o_.threshold_mode() == "rel";
    if (o_.mode() == "min") return rel ? a < best_ * (1 - o_.threshold()) : a < best_ - o_.threshold();
    return rel ? a > best_ * (o_.threshold() + 1) : a > best_ + o_.threshold();
  }
  void reduce_lr() {
    for (int32_t g = 0; g < optimizer_.group_count(); ++g) {
      const double old_lr = optimizer_.get("lr", g);
      const double new_lr = std::max(old_lr * o_.factor(), min_lrs_[static_cast<size_t>(g)]);
      if (old_lr - new_lr > o_.eps()) optimizer_.set("lr", new_lr, g);
    }
  }
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions o_;
  std::vector<double> min_lrs_;
  double best_ = 0;
  int64_t bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace nnp::optim
