// Adapters: captured training steps (nnp::compile_step, ABI 1.25).
#include "../capture/captured_step.hpp"
#include "../error.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

using StepFn = nnp_status (*)(void* user, nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                              int32_t* n_outputs);

// The caller's function as the core calls a step: its failures become the
// core's errors, its results references the core owns.
capture::StepFunction step_function(StepFn fn, std::shared_ptr<void> user) {
  return [fn, user](const std::vector<TensorRef>& inputs) {
    std::vector<nnp_tensor*> in;
    in.reserve(inputs.size());
    for (const TensorRef& t : inputs) in.push_back(t.get());
    nnp_tensor* out[NNP_STEP_MAX_OUTPUTS] = {};
    int32_t n_out = 0;
    const nnp_status status = fn(user.get(), in.data(), static_cast<int32_t>(in.size()), out, &n_out);
    std::vector<TensorRef> results;
    for (int32_t i = 0; i < NNP_STEP_MAX_OUTPUTS; ++i)
      if (out[i]) results.push_back(TensorRef::adopt(out[i]));  // owned whatever happened next
    check_plugin_status(status, "captured step", "the step function");
    if (n_out < 0 || n_out > NNP_STEP_MAX_OUTPUTS || static_cast<size_t>(n_out) != results.size())
      fail(NNP_INVALID_ARGUMENT, "captured step: the step function reported ", n_out, " results but wrote ",
           results.size(), " (at most ", NNP_STEP_MAX_OUTPUTS, ", each non-NULL)");
    return results;
  };
}

}  // namespace

nnp_status step_compile(StepFn fn, void* user, void (*release_user)(void*), nnp_step** out) {
  // The caller's data is released whatever happens, once.
  std::shared_ptr<void> owned(user, [release_user](void* u) {
    if (release_user) release_user(u);
  });
  return guard([&] {
    nnp_step*& result = out_arg(out, "step_compile");
    in_arg(fn, "step_compile", "fn");
    result = new nnp_step(step_function(fn, std::move(owned)));
  });
}

nnp_status step_call(nnp_step* step, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                     int32_t capacity, int32_t* n_outputs) {
  const char* op = "step_call";
  return guard([&] {
    nnp_step& s = *const_cast<nnp_step*>(&in_arg(step, op, "step"));
    int32_t& count = out_arg(n_outputs, op, "n_outputs");
    count = 0;
    if (n_inputs < 0) fail(NNP_INVALID_ARGUMENT, op, ": n_inputs is ", n_inputs);
    if (n_inputs > 0) in_arg(inputs, op, "inputs");
    if (capacity > 0) in_arg(outputs, op, "outputs");
    std::vector<TensorRef> in;
    for (int32_t i = 0; i < n_inputs; ++i) in.push_back(TensorRef::share(&tensor_arg(inputs[i], op, "inputs")));
    std::vector<TensorRef> results = s.step.call(in);
    if (results.size() > static_cast<size_t>(capacity < 0 ? 0 : capacity))
      fail(NNP_INVALID_ARGUMENT, op, ": the step gave ", results.size(), " results; outputs has room for ", capacity);
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = results[i].take();
    count = static_cast<int32_t>(results.size());
  });
}

nnp_status step_explain(const nnp_step* step, char* buf, size_t size, size_t* needed) {
  return guard([&] { detail::write_string(in_arg(step, "step_explain", "step").step.explain(), buf, size, needed); });
}

void step_release(nnp_step* step) { delete step; }

}  // namespace nnp::core::api
