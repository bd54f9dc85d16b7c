// A training step captured once and replayed (nnp::compile_step, ABI 1.25):
// CUDA graphs' idea for every backend. The step is a function of input
// tensors (forward, loss, backward and the optimizer's step, as the user
// writes them). Its calls run it for real while recording the kernels it
// makes (tape.hpp); once two consecutive runs made the same kernel calls on
// the same memory (warm-up over: gradients and optimizer state exist), later
// calls point the recorded views at the new inputs and make the recorded
// calls alone - no autograd graph, no allocation, no dispatch. A step that
// reads a value on the host, or whose kernels keep changing (a host-side
// value such as Adam's step count baked into them), runs as written on every
// call, and explain() says why. Inputs of other dtypes, devices or shapes,
// or host-side state changed between calls (an optimizer's options, a
// parameter or gradient replaced), make the next call capture again.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../tensor.hpp"
#include "tape.hpp"

namespace nnp::core::capture {

using StepFunction = std::function<std::vector<TensorRef>(const std::vector<TensorRef>& inputs)>;

class CapturedStep {
 public:
  explicit CapturedStep(StepFunction fn);
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;

  // One step on these inputs; the results are new tensors (no history).
  std::vector<TensorRef> call(const std::vector<TensorRef>& inputs);
  std::string explain() const;

 private:
  struct Capture;
  std::vector<TensorRef> run_eagerly(const std::vector<TensorRef>& inputs);
  std::vector<TensorRef> capture(const std::vector<TensorRef>& inputs);
  std::vector<TensorRef> replay(const std::vector<TensorRef>& inputs);
  bool fits(const std::vector<TensorRef>& inputs, std::string& why) const;
  void forget(const std::string& why);

  enum class State { CAPTURING, REPLAYING, EAGER };
  StepFunction fn_;
  mutable std::mutex mutex_;
  std::atomic<std::thread::id> running_on_{};  // the thread inside call(), to refuse a step calling itself
  State state_ = State::CAPTURING;
  std::unique_ptr<Capture> last_;  // the latest capture
  int32_t captures_in_a_row_ = 0;
  int32_t read_changes_ = 0;
  size_t removed_by_passes_ = 0;  // calls the tape's passes saved
  uint64_t epoch_ = 0;            // host state as the replayed tape saw it
  std::string reason_;            // why it runs eagerly, or last captured again
  int64_t calls_ = 0, captured_calls_ = 0, replayed_calls_ = 0;
};

}  // namespace nnp::core::capture

// The C handle (nnp_step in nnp.h).
struct nnp_step {
  explicit nnp_step(nnp::core::capture::StepFunction fn) : step(std::move(fn)) {}
  nnp::core::capture::CapturedStep step;
};
