// Adapters: captured training steps (nnp::compile_step, ABI 1.25).
#include "../capture/captured_step.hpp"
#include "../error.hpp"
#include "arguments.hpp"
#include "caller_function.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status step_compile(CallerFn fn, void* user, void (*release_user)(void*), nnp_step** out) {
  std::shared_ptr<void> owned = owned_user_data(user, release_user);  // released whatever happens, once
  return guard([&] {
    nnp_step*& result = out_arg(out, "step_compile");
    in_arg(fn, "step_compile", "fn");
    result = new nnp_step(caller_function(fn, std::move(owned), "captured step"));
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
