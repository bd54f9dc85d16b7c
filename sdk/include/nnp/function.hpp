// function.hpp - custom autograd functions in C++ (included by nnp.hpp), as
// torch.autograd.Function: a layer with kernels of its own writes forward
// and backward, and the core records one node for them.
//
//   struct Square {
//     static constexpr const char* name = "SquareBackward";
//     static std::vector<nnp::Tensor> forward(nnp::FunctionContext& ctx, const std::vector<nnp::Tensor>& in) {
//       ctx.save_for_backward({in[0]});
//       return {in[0] * in[0]};
//     }
//     static std::vector<nnp::Tensor> backward(nnp::FunctionContext& ctx, const std::vector<nnp::Tensor>& grad) {
//       return {grad[0] * ctx.saved_tensors()[0] * 2.0};
//     }
//   };
//   nnp::Tensor y = nnp::apply_function<Square>({x})[0];
//
// forward runs with no history recorded; backward returns one gradient per
// input (an undefined Tensor for none) shaped like that input. F may carry
// state: apply_function<F>(inputs, f) passes f (copied into the graph) as
// the first argument of non-static forward/backward members.
#pragma once

#include <memory>
#include <nnp/tensor.hpp>
#include <vector>

namespace nnp {

class FunctionContext {
 public:
  explicit FunctionContext(nnp_function_ctx* ctx) : ctx_(ctx) {}
  void save_for_backward(const std::vector<Tensor>& tensors) {
    std::vector<const nnp_tensor*> raw;
    for (const Tensor& t : tensors) raw.push_back(t.get());
    check(api().function_save(ctx_, raw.data(), static_cast<int32_t>(raw.size())));
  }
  std::vector<Tensor> saved_tensors() const {
    std::vector<Tensor> out;
    int32_t count = api().function_saved_count(ctx_);
    for (int32_t i = 0; i < count; ++i) {
      nnp_tensor* t = nullptr;
      check(api().function_saved(ctx_, i, &t));
      out.push_back(Tensor::adopt(t));
    }
    return out;
  }

 private:
  nnp_function_ctx* ctx_;
};

namespace detail {

template <typename F>
struct FunctionTrampolines {
  static nnp_status forward(nnp_function_ctx* ctx, const nnp_tensor* const* inputs, int32_t n_inputs,
                            nnp_tensor** outputs, int32_t n_outputs, void* user_data) {
    return guard([&] {
      FunctionContext context(ctx);
      std::vector<Tensor> result = static_cast<F*>(user_data)->forward(context, borrow_all(inputs, n_inputs));
      if (static_cast<int32_t>(result.size()) != n_outputs)
        throw Error(NNP_INTERNAL, std::string(F::name) + ": forward returned " + std::to_string(result.size()) +
                                      " outputs, " + std::to_string(n_outputs) + " were asked for");
      for (int32_t i = 0; i < n_outputs; ++i) outputs[i] = result[static_cast<size_t>(i)].release();
    });
  }
  static nnp_status backward(nnp_function_ctx* ctx, const nnp_tensor* const* grad_outputs, int32_t n_outputs,
                             nnp_tensor** grad_inputs, int32_t n_inputs, void* user_data) {
    return guard([&] {
      FunctionContext context(ctx);
      std::vector<Tensor> grads = static_cast<F*>(user_data)->backward(context, borrow_all(grad_outputs, n_outputs));
      if (static_cast<int32_t>(grads.size()) != n_inputs)
        throw Error(NNP_INTERNAL, std::string(F::name) + ": backward returned " + std::to_string(grads.size()) +
                                      " gradients for " + std::to_string(n_inputs) + " inputs");
      for (int32_t i = 0; i < n_inputs; ++i) grad_inputs[i] = grads[static_cast<size_t>(i)].release();
    });
  }
  static void release(void* user_data) { delete static_cast<F*>(user_data); }
};

}  // namespace detail

template <typename F>
std::vector<Tensor> apply_function(const std::vector<Tensor>& inputs, F f = F(), int32_t n_outputs = 1) {
  static const nnp_function def = {sizeof(nnp_function), F::name, detail::FunctionTrampolines<F>::forward,
                                   detail::FunctionTrampolines<F>::backward, detail::FunctionTrampolines<F>::release};
  std::vector<const nnp_tensor*> raw;
  for (const Tensor& t : inputs) raw.push_back(t.get());
  std::vector<nnp_tensor*> outputs(static_cast<size_t>(n_outputs), nullptr);
  // The core owns the copy from here on and releases it with the graph.
  auto state = std::make_unique<F>(std::move(f));
  nnp_status status =
      api().function_apply(&def, state.get(), raw.data(), static_cast<int32_t>(raw.size()), outputs.data(), n_outputs);
  state.release();  // NOLINT: passed to the core, which calls release (on failure too)
  check(status);
  std::vector<Tensor> result;
  for (nnp_tensor* t : outputs) result.push_back(Tensor::adopt(t));
  return result;
}

}  // namespace nnp
