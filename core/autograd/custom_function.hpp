// Custom autograd functions defined through the C API (nnp_function).
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <vector>

#include "../tensor.hpp"

namespace nnp::core::autograd {

// While a plugin layer's forward runs, the custom functions it applies
// remember the layer ("norm.RMSNorm (plugin nnplug.norms)"), so a failure of
// their backward, which runs later, still names it.
class FunctionOrigin {
 public:
  explicit FunctionOrigin(const std::string& origin);
  ~FunctionOrigin();
  FunctionOrigin(const FunctionOrigin&) = delete;
  FunctionOrigin& operator=(const FunctionOrigin&) = delete;
  // The innermost origin on this thread, or nullptr.
  static const std::string* current();

 private:
  const std::string* previous_;
};

std::vector<TensorRef> apply_function(const nnp_function& fn, void* user_data, const Tensor* const* inputs,
                                      int32_t n_inputs, int32_t n_outputs);
void save_for_backward(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count);
int32_t saved_count(const nnp_function_ctx* ctx);
TensorRef saved(const nnp_function_ctx* ctx, int32_t i);

}  // namespace nnp::core::autograd
