// nnp::compile_step: a training step captured once and replayed (ABI 1.25),
// the idea of CUDA graphs on every backend.
//
//   nnp::CapturedStep step = nnp::compile_step([&](const std::vector<nnp::Tensor>& in) {
//     optimizer.zero_grad();
//     nnp::Tensor loss = loss_fn.call({model(in[0]), in[1]});
//     loss.backward();
//     optimizer.step();
//     return std::vector<nnp::Tensor>{loss};
//   });
//   for (...) { nnp::Tensor loss = step({x, y})[0]; }
//   std::puts(step.explain().c_str());
//
// The first calls run the function for real while the kernels it makes are
// recorded; once two calls in a row made the same kernel calls on the same
// memory, later calls make those calls alone on the new inputs (the same
// numbers as eager, without its autograd graph, allocations or dispatch).
// What a replay cannot repeat - reading a value on the host (item(), an if
// on a tensor), a collective, host code in the step, a host-side value that
// changes every step (Adam's step count) - leaves the step running as
// written on every call, and explain() says why. Inputs of another shape,
// dtype or device, an optimizer's options changed, or a parameter, buffer
// or gradient replaced between calls make the next call capture again.
// The results are new tensors without history; parameters, gradients and
// optimizer state hold what the last call wrote, as after an eager step.
#pragma once

#include <functional>
#include <memory>
#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp {

class CapturedStep {
 public:
  using Function = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

  explicit CapturedStep(Function step) {
    auto trampoline = [](void* user, nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                         int32_t* n_outputs) -> nnp_status {
      return detail::guard([&] {
        std::vector<Tensor> in;
        in.reserve(static_cast<size_t>(n_inputs));
        for (int32_t i = 0; i < n_inputs; ++i) in.push_back(Tensor::borrow(inputs[i]));
        std::vector<Tensor> out = (*static_cast<Function*>(user))(in);
        if (out.size() > NNP_STEP_MAX_OUTPUTS)
          throw Error(NNP_INVALID_ARGUMENT, "compile_step: the step returned " + std::to_string(out.size()) +
                                                " tensors; at most " + std::to_string(NNP_STEP_MAX_OUTPUTS));
        for (size_t i = 0; i < out.size(); ++i) outputs[i] = out[i].release();
        *n_outputs = static_cast<int32_t>(out.size());
      });
    };
    nnp_step* handle = nullptr;
    check(api().step_compile(
        trampoline, new Function(std::move(step)), [](void* user) { delete static_cast<Function*>(user); }, &handle));
    handle_.reset(handle, [](nnp_step* s) { api().step_release(s); });
  }

  // One step on these inputs: what the step function returned, as new tensors.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const {
    std::vector<const nnp_tensor*> in;
    in.reserve(inputs.size());
    for (const Tensor& t : inputs) in.push_back(t.get());
    nnp_tensor* out[NNP_STEP_MAX_OUTPUTS] = {};
    int32_t n = 0;
    check(api().step_call(handle_.get(), in.data(), static_cast<int32_t>(in.size()), out, NNP_STEP_MAX_OUTPUTS, &n));
    std::vector<Tensor> results;
    results.reserve(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) results.push_back(Tensor::adopt(out[i]));
    return results;
  }

  // What the step does now (replays, captures, or runs as written and why).
  std::string explain() const {
    return detail::query_string(
        [&](char* buf, size_t size, size_t* needed) { return api().step_explain(handle_.get(), buf, size, needed); },
        check);
  }

 private:
  std::shared_ptr<nnp_step> handle_;
};

inline CapturedStep compile_step(CapturedStep::Function step) { return CapturedStep(std::move(step)); }

}  // namespace nnp
