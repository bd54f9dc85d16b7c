// nnp/lbfgs.hpp - torch.optim.LBFGS in C++ (included by nnp/optim.hpp):
// limited-memory BFGS over all parameters as one flat vector, with an
// optional strong-Wolfe line search, as PyTorch 1.13 computes it (a port of
// its lbfgs.py, step for step, so the iterates match).
//
// step(closure) re-evaluates the model several times: the closure clears
// the gradients, computes the loss, calls backward() and returns the loss.
// The search state (directions, curvature pairs, step length) lives in the
// object between calls, as PyTorch keeps it in its optimizer state.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <nnp/inplace.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nnp::optim {

struct LBFGSOptions {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, lr);
  NNP_ARG(int64_t, max_iter) = 20;
  NNP_ARG(std::optional<int64_t>, max_eval);  // default: max_iter * 5 / 4
  NNP_ARG(double, tolerance_grad) = 1e-7;
  NNP_ARG(double, tolerance_change) = 1e-9;
  NNP_ARG(int64_t, history_size) = 100;
  NNP_ARG(std::optional<std::string>, line_search_fn);  // none, or "strong_wolfe"
};

class LBFGS {
 public:
  using Closure = std::function<Tensor()>;

  explicit LBFGS(std::vector<Tensor> params, const LBFGSOptions& options = {})
      : params_(std::move(params)), o_(options) {
    if (params_.empty()) throw Error(NNP_INVALID_ARGUMENT, "LBFGS: optimizer got an empty parameter list");
    if (o_.line_search_fn() && *o_.line_search_fn() != "strong_wolfe")
      throw Error(NNP_INVALID_ARGUMENT,
                  "LBFGS: only 'strong_wolfe' is supported as line_search_fn, got '" + *o_.line_search_fn() + "'");
    if (!(o_.lr() >= 0)) throw Error(NNP_INVALID_ARGUMENT, "LBFGS: invalid learning rate " + std::to_string(o_.lr()));
    if (o_.history_size() < 1) throw Error(NNP_INVALID_ARGUMENT, "LBFGS: history_size must be >= 1");
  }

  void zero_grad() {
    for (Tensor& p : params_) p.set_grad(Tensor());
  }
  int64_t func_evals() const { return func_evals_; }
  int64_t n_iter() const { return n_iter_; }
  const LBFGSOptions& options() const { return o_; }

  // Up to max_iter iterations; returns the loss of the first evaluation.
  Tensor step(const Closure& closure) {
    const int64_t max_eval = o_.max_eval() ? *o_.max_eval() : o_.max_iter() * 5 / 4;
    Tensor orig_loss = evaluate(closure);
    double loss = orig_loss.item<double>();
    int64_t current_evals = 1;
    func_evals_ += 1;
    Tensor flat_grad = gather_flat_grad();
    if (abs_max(flat_grad) <= o_.tolerance_grad()) return orig_loss;

    int64_t n_iter = 0;
    while (n_iter < o_.max_iter()) {
      ++n_iter;
      ++n_iter_;
      if (n_iter_ == 1) {
        d_ = flat_grad.neg();
        old_dirs_.clear();
        old_stps_.clear();
        ro_.clear();
        h_diag_ = 1;
      } else {
        update_direction(flat_grad);
      }
      prev_flat_grad_ = flat_grad.clone();
      const double prev_loss = loss;
      t_ = n_iter_ == 1 ? std::min(1.0, 1.0 / flat_grad.abs().sum().item<double>()) * o_.lr() : o_.lr();
      const double gtd = dot(flat_grad, d_);
      if (gtd > -o_.tolerance_change()) break;  // no descent left

      int64_t ls_func_evals = 0;
      bool opt_cond = false;
      if (o_.line_search_fn()) {
        const std::vector<Tensor> x_init = clone_params();
        const auto obj = [&](double t) { return directional_evaluate(closure, x_init, t); };
        LineSearch found = strong_wolfe(obj, t_, loss, flat_grad, gtd);
        loss = found.f;
        flat_grad = found.g;
        t_ = found.t;
        ls_func_evals = found.evals;
        add_grad(t_, d_);
        opt_cond = abs_max(flat_grad) <= o_.tolerance_grad();
      } else {
        add_grad(t_, d_);
        if (n_iter != o_.max_iter()) {
          loss = evaluate(closure).item<double>();
          flat_grad = gather_flat_grad();
          opt_cond = abs_max(flat_grad) <= o_.tolerance_grad();
          ls_func_evals = 1;
        }
      }
      current_evals += ls_func_evals;
      func_evals_ += ls_func_evals;

      if (n_iter == o_.max_iter()) break;
      if (current_evals >= max_eval) break;
      if (opt_cond) break;
      if (abs_max(d_) * std::fabs(t_) <= o_.tolerance_change()) break;
      if (std::fabs(loss - prev_loss) < o_.tolerance_change()) break;
    }
    return orig_loss;
  }

 private:
  struct LineSearch {
    double f;
    Tensor g;
    double t;
    int64_t evals;
  };

  static double dot(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }
  static double abs_max(const Tensor& a) { return a.abs().amax().item<double>(); }

  // The closure runs with autograd on, even inside a caller's no-grad scope.
  static Tensor evaluate(const Closure& closure) {
    struct GradOn {
      int32_t previous = api().set_grad_enabled(1);
      ~GradOn() { api().set_grad_enabled(previous); }
    } grad_on;
    Tensor loss = closure();
    if (!loss.defined()) throw Error(NNP_INVALID_ARGUMENT, "LBFGS: the closure returned no loss");
    return loss;
  }

  Tensor gather_flat_grad() const {
    std::vector<Tensor> views;
    for (const Tensor& p : params_) {
      const Tensor g = p.grad();
      views.push_back(g.defined() ? g.reshape({-1}) : zeros({p.numel()}, p.dtype(), p.device()));
    }
    return cat(views, 0);
  }

  // p += step * update[p's slice], every parameter.
  void add_grad(double step, const Tensor& update) {
    NoGradGuard no_grad;
    int64_t offset = 0;
    for (Tensor& p : params_) {
      const int64_t n = p.numel();
      p.add_(update.slice(0, offset, offset + n).reshape(p.shape()) * step);
      offset += n;
    }
  }

  std::vector<Tensor> clone_params() const {
    NoGradGuard no_grad;
    std::vector<Tensor> copies;
    for (const Tensor& p : params_) copies.push_back(p.detach().clone());
    return copies;
  }

  // The loss and gradient at x + t d, leaving the parameters at x.
  std::pair<double, Tensor> directional_evaluate(const Closure& closure, const std::vector<Tensor>& x, double t) {
    add_grad(t, d_);
    const double loss = evaluate(closure).item<double>();
    Tensor flat_grad = gather_flat_grad();
    NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) params_[i].copy_(x[i]);
    return {loss, flat_grad};
  }

  // The two-loop recursion over the stored curvature pairs.
  void update_direction(const Tensor& flat_grad) {
    const Tensor y = flat_grad - prev_flat_grad_;
    const Tensor s = d_ * t_;
    const double ys = dot(y, s);
    if (ys > 1e-10) {
      if (static_cast<int64_t>(old_dirs_.size()) == o_.history_size()) {
        old_dirs_.pop_front();
        old_stps_.pop_front();
        ro_.pop_front();
      }
      old_dirs_.push_back(y);
      old_stps_.push_back(s);
      ro_.push_back(1.0 / ys);
      h_diag_ = ys / dot(y, y);
    }
    const size_t num_old = old_dirs_.size();
    std::vector<double> al(num_old);
    Tensor q = flat_grad.neg();
    for (size_t k = num_old; k-- > 0;) {
      al[k] = dot(old_stps_[k], q) * ro_[k];
      q = q - old_dirs_[k] * al[k];
    }
    Tensor r = q * h_diag_;
    for (size_t k = 0; k < num_old; ++k) {
      const double be_i = dot(old_dirs_[k], r) * ro_[k];
      r = r + old_stps_[k] * (al[k] - be_i);
    }
    d_ = r;
  }

  // The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds.
  static double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                                  std::optional<std::pair<double, double>> bounds = std::nullopt) {
    const auto [lo, hi] = bounds ? *bounds : (x1 <= x2 ? std::pair{x1, x2} : std::pair{x2, x1});
    const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
    const double d2_square = d1 * d1 - g1 * g2;
    if (d2_square >= 0) {
      const double d2 = std::sqrt(d2_square);
      const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                      : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
      return std::min(std::max(min_pos, lo), hi);
    }
    return (lo + hi) / 2.;
  }

  // A step t satisfying the strong Wolfe conditions along d_ (bracketing,
  // then zooming with cubic interpolation), as PyTorch's _strong_wolfe.
  template <typename Objective>
  LineSearch strong_wolfe(Objective obj, double t, double f, const Tensor& g, double gtd) const {
    const double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;
    const int64_t max_ls = 25;
    const double d_norm = abs_max(d_);
    auto [f_new, g_new] = obj(t);
    int64_t evals = 1;
    double gtd_new = dot(g_new, d_);
    double t_prev = 0, f_prev = f, gtd_prev = gtd;
    Tensor g_prev = g;
    bool done = false;
    int64_t ls_iter = 0;
    std::vector<double> bracket, bracket_f, bracket_gtd;
    std::vector<Tensor> bracket_g;
    while (ls_iter < max_ls) {
      if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
        bracket = {t_prev, t};
        bracket_f = {f_prev, f_new};
        bracket_g = {g_prev, g_new};
        bracket_gtd = {gtd_prev, gtd_new};
        break;
      }
      if (std::fabs(gtd_new) <= -c2 * gtd) {
        bracket = {t};
        bracket_f = {f_new};
        bracket_g = {g_new};
        done = true;
        break;
      }
      if (gtd_new >= 0) {
        bracket = {t_prev, t};
        bracket_f = {f_prev, f_new};
        bracket_g = {g_prev, g_new};
        bracket_gtd = {gtd_prev, gtd_new};
        break;
      }
      const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10, previous = t;
      t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair{min_step, max_step});
      t_prev = previous;
      f_prev = f_new;
      g_prev = g_new;
      gtd_prev = gtd_new;
      std::tie(f_new, g_new) = obj(t);
      ++evals;
      gtd_new = dot(g_new, d_);
      ++ls_iter;
    }
    if (ls_iter == max_ls) {
      bracket = {0, t};
      bracket_f = {f, f_new};
      bracket_g = {g, g_new};
    }
    // Zoom: shrink the bracket until a point meets the conditions.
    bool insuf_progress = false;
    size_t low = bracket_f.front() <= bracket_f.back() ? 0 : 1, high = 1 - low;
    while (!done && ls_iter < max_ls) {
      if (std::fabs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
      t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
      const double top = std::max(bracket[0], bracket[1]), bottom = std::min(bracket[0], bracket[1]);
      const double eps = 0.1 * (top - bottom);
      if (std::min(top - t, t - bottom) < eps) {
        if (insuf_progress || t >= top || t <= bottom) {
          t = std::fabs(t - top) < std::fabs(t - bottom) ? top - eps : bottom + eps;
          insuf_progress = false;
        } else {
          insuf_progress = true;
        }
      } else {
        insuf_progress = false;
      }
      std::tie(f_new, g_new) = obj(t);
      ++evals;
      gtd_new = dot(g_new, d_);
      ++ls_iter;
      if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
        bracket[high] = t;
        bracket_f[high] = f_new;
        bracket_g[high] = g_new;
        bracket_gtd[high] = gtd_new;
        low = bracket_f[0] <= bracket_f[1] ? 0 : 1;
        high = 1 - low;
      } else {
        if (std::fabs(gtd_new) <= -c2 * gtd) {
          done = true;
        } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
          bracket[high] = bracket[low];
          bracket_f[high] = bracket_f[low];
          bracket_g[high] = bracket_g[low];
          bracket_gtd[high] = bracket_gtd[low];
        }
        bracket[low] = t;
        bracket_f[low] = f_new;
        bracket_g[low] = g_new;
        bracket_gtd[low] = gtd_new;
      }
    }
    return {bracket_f[low], bracket_g[low], bracket[low], evals};
  }

  std::vector<Tensor> params_;
  LBFGSOptions o_;
  // PyTorch's state: direction, step, curvature pairs, Hessian diagonal.
  Tensor d_, prev_flat_grad_;
  double t_ = 0, h_diag_ = 1;
  std::deque<Tensor> old_dirs_, old_stps_;
  std::deque<double> ro_;
  int64_t func_evals_ = 0, n_iter_ = 0;
};

}  // namespace nnp::optim
