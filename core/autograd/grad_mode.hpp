// Whether ops record autograd history on this thread (PyTorch's grad mode).
#pragma once

namespace nnp::core::autograd {

bool grad_enabled();
void set_grad_enabled(bool enabled);

// Turns recording off for a scope (the core's own backward passes).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Sets grad mode for a scope (an activation checkpoint's recomputation
// records inside a backward pass, which runs with it off).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace nnp::core::autograd
