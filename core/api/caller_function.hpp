// A caller's tensor function (nnp_tensor_fn: a captured step's, an
// activation checkpoint's) as the core calls it: its failures become the
// core's errors naming `who`, its results references the core owns (its
// user data: owned_user_data of arguments.hpp, held by every copy).
#pragma once

#include <nnp/nnp.h>

#include <functional>
#include <memory>
#include <vector>

#include "../error.hpp"
#include "../tensor.hpp"

namespace nnp::core::api {

using CallerFn = nnp_status (*)(void* user, nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                                int32_t* n_outputs);

inline std::function<std::vector<TensorRef>(const std::vector<TensorRef>&)> caller_function(CallerFn fn,
                                                                                            std::shared_ptr<void> user,
                                                                                            const char* who) {
  return [fn, user, who](const std::vector<TensorRef>& inputs) {
    std::vector<nnp_tensor*> in;
    in.reserve(inputs.size());
    for (const TensorRef& t : inputs) in.push_back(t.get());
    nnp_tensor* out[NNP_STEP_MAX_OUTPUTS] = {};
    int32_t n_out = 0;
    const nnp_status status = fn(user.get(), in.data(), static_cast<int32_t>(in.size()), out, &n_out);
    std::vector<TensorRef> results;
    for (int32_t i = 0; i < NNP_STEP_MAX_OUTPUTS; ++i)
      if (out[i]) results.push_back(TensorRef::adopt(out[i]));  // owned whatever happened next
    check_plugin_status(status, who, "the function");
    if (n_out < 0 || n_out > NNP_STEP_MAX_OUTPUTS || static_cast<size_t>(n_out) != results.size())
      fail(NNP_INVALID_ARGUMENT, who, ": the function reported ", n_out, " results but wrote ", results.size(),
           " (at most ", NNP_STEP_MAX_OUTPUTS, ", each non-NULL)");
    return results;
  };
}

}  // namespace nnp::core::api
