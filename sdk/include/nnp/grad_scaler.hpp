// nnp::amp::GradScaler: PyTorch 1.13's torch.cuda.amp.GradScaler, on every
// backend (ABI 1.27). Loss scaling keeps small f16 gradients from flushing
// to zero: the loss is multiplied by the scale before backward, the
// gradients divided by it before the step, and a step whose gradients hold
// an inf or NaN is skipped while the scale backs off.
//
//   nnp::amp::GradScaler scaler;
//   for (...) {
//     optimizer.zero_grad();
//     { nnp::autocast amp("cuda", nnp::Dtype::f16); loss = loss_fn(model(x), y); }
//     scaler.scale(loss).backward();
//     scaler.step(optimizer);   // unscales (one pass a gradient), steps unless inf/NaN
//     scaler.update();          // backoff after a skipped step, growth after growth_interval clean ones
//   }
//
// The scale lives on the device of the first scale() call's tensor, as a
// one-element f32 tensor; state_dict() gives PyTorch's keys.
#pragma once

#include <cmath>
#include <map>
#include <nnp/optim.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::amp {

class GradScaler {
 public:
  explicit GradScaler(double init_scale = 65536.0, double growth_factor = 2.0, double backoff_factor = 0.5,
                      int64_t growth_interval = 2000, bool enabled = true)
      : enabled_(enabled),
        init_scale_(init_scale),
        growth_factor_(growth_factor),
        backoff_factor_(backoff_factor),
        growth_interval_(growth_interval) {
    if (!enabled_) return;
    if (!(growth_factor > 1.0)) throw Error(NNP_INVALID_ARGUMENT, "The growth factor must be > 1.0.");
    if (!(backoff_factor < 1.0)) throw Error(NNP_INVALID_ARGUMENT, "The backoff factor must be < 1.0.");
  }

  // outputs * scale (a 16-bit loss is scaled in f32, as PyTorch's promotion).
  Tensor scale(const Tensor& outputs) {
    if (!enabled_) return outputs;
    if (!scale_.defined()) lazy_init(outputs.device());
    const Tensor wide =
        outputs.dtype() == Dtype::f16 || outputs.dtype() == Dtype::bf16 ? outputs.to(Dtype::f32) : outputs;
    return wide * scale_.to(wide.device()).to(wide.dtype());
  }
  std::vector<Tensor> scale(const std::vector<Tensor>& outputs) {
    std::vector<Tensor> out;
    for (const Tensor& t : outputs) out.push_back(scale(t));
    return out;
  }

  // Divides the optimizer's gradients by the scale in place, once between
  // updates (call it before clipping gradients; step() then does not again).
  void unscale_(optim::Optimizer& optimizer) {
    if (!enabled_) return;
    check_initialized("unscale_");
    PerOptimizer& state = states_[optimizer.get()];
    if (state.stage == Stage::UNSCALED)
      throw Error(NNP_INVALID_ARGUMENT,
                  "unscale_() has already been called on this optimizer since the last update().");
    if (state.stage == Stage::STEPPED) throw Error(NNP_INVALID_ARGUMENT, "unscale_() is being called after step().");
    // PyTorch's scale.double().reciprocal().float().
    const double inv_scale = static_cast<float>(1.0 / static_cast<double>(scale_value_));
    state.found_inf = zeros({1}, Dtype::f32, scale_.device());
    check(api().amp_unscale_grads(optimizer.get(), inv_scale, state.found_inf.get(), 0));
    state.stage = Stage::UNSCALED;
  }

  // Unscales (unless unscale_ did) and steps unless a gradient held inf or
  // NaN. Returns whether the optimizer stepped.
  bool step(optim::Optimizer& optimizer) {
    if (!enabled_) {
      optimizer.step();
      return true;
    }
    check_initialized("step");
    PerOptimizer& state = states_[optimizer.get()];
    if (state.stage == Stage::STEPPED)
      throw Error(NNP_INVALID_ARGUMENT, "step() has already been called since the last update().");
    if (state.stage == Stage::READY) unscale_(optimizer);
    const bool stepped = state.found_inf.item<float>() == 0.0f;
    if (stepped) optimizer.step();
    state.stage = Stage::STEPPED;
    return stepped;
  }

  // After every optimizer's step: the scale times backoff_factor if any
  // step saw inf or NaN (and the count of clean steps restarts), times
  // growth_factor after growth_interval clean steps in a row. new_scale
  // sets it instead.
  void update(std::optional<double> new_scale = std::nullopt) {
    if (!enabled_) return;
    check_initialized("update");
    if (new_scale) {
      set_scale(static_cast<float>(*new_scale));
    } else {
      bool any_recorded = false;
      float found = 0;
      for (auto& [opt, state] : states_)
        if (state.found_inf.defined()) {
          any_recorded = true;
          found += state.found_inf.item<float>();
        }
      if (!any_recorded) throw Error(NNP_INVALID_ARGUMENT, "No inf checks were recorded prior to update.");
      // PyTorch's _amp_update_scale_, in its arithmetic: float * double
      // rounded back to float; growth only to a finite scale.
      if (found != 0.0f) {
        set_scale(static_cast<float>(static_cast<double>(scale_value_) * backoff_factor_));
        growth_tracker_ = 0;
      } else if (growth_tracker_ + 1 == growth_interval_) {
        const float grown = static_cast<float>(static_cast<double>(scale_value_) * growth_factor_);
        if (std::isfinite(grown)) set_scale(grown);
        growth_tracker_ = 0;
      } else {
        ++growth_tracker_;
      }
    }
    states_.clear();
  }

  double get_scale() const {
    if (!enabled_) return 1.0;
    return scale_.defined() ? static_cast<double>(scale_value_) : init_scale_;
  }
  double get_growth_factor() const { return growth_factor_; }
  void set_growth_factor(double f) { growth_factor_ = f; }
  double get_backoff_factor() const { return backoff_factor_; }
  void set_backoff_factor(double f) { backoff_factor_ = f; }
  int64_t get_growth_interval() const { return growth_interval_; }
  void set_growth_interval(int64_t n) { growth_interval_ = n; }
  bool is_enabled() const { return enabled_; }

  // PyTorch's keys; empty when disabled.
  std::map<std::string, double> state_dict() const {
    if (!enabled_) return {};
    return {{"scale", get_scale()},
            {"growth_factor", growth_factor_},
            {"backoff_factor", backoff_factor_},
            {"growth_interval", static_cast<double>(growth_interval_)},
            {"_growth_tracker", static_cast<double>(growth_tracker_)}};
  }
  void load_state_dict(const std::map<std::string, double>& state) {
    if (!enabled_) return;
    if (state.empty())
      throw Error(NNP_INVALID_ARGUMENT,
                  "The source state dict is empty, possibly because it was saved from a disabled instance of "
                  "GradScaler.");
    for (const char* key : {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"})
      if (state.count(key) == 0)
        throw Error(NNP_NOT_FOUND, std::string("GradScaler.load_state_dict: the state has no '") + key + "'");
    init_scale_ = state.at("scale");
    if (scale_.defined()) set_scale(static_cast<float>(init_scale_));
    growth_factor_ = state.at("growth_factor");
    backoff_factor_ = state.at("backoff_factor");
    growth_interval_ = static_cast<int64_t>(state.at("growth_interval"));
    growth_tracker_ = static_cast<int64_t>(state.at("_growth_tracker"));
  }

 private:
  enum class Stage { READY, UNSCALED, STEPPED };
  struct PerOptimizer {
    Stage stage = Stage::READY;
    Tensor found_inf;
  };

  void lazy_init(const Device& device) {
    scale_ = full({1}, init_scale_, Dtype::f32, device);
    scale_value_ = static_cast<float>(init_scale_);
  }
  void set_scale(float value) {
    scale_value_ = value;
    scale_.fill_(value);
  }
  void check_initialized(const char* what) const {
    if (!scale_.defined())
      throw Error(NNP_INVALID_ARGUMENT, std::string("Attempted ") + what +
                                            " but _scale is None.  This may indicate your script did not use "
                                            "scaler.scale(loss or outputs) earlier in the iteration.");
  }

  bool enabled_;
  double init_scale_, growth_factor_, backoff_factor_;
  int64_t growth_interval_;
  int64_t growth_tracker_ = 0;
  Tensor scale_;           // on the device of the first scaled tensor
  float scale_value_ = 0;  // its value, kept on the host: update() needs no read back
  std::map<const nnp_optimizer*, PerOptimizer> states_;
};

}  // namespace nnp::amp
