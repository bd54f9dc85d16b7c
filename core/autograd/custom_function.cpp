#include "custom_function.hpp"

#include <cstring>
#include <string>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "grad_math.hpp"
#include "record.hpp"

// The context a custom function's callbacks see: its saved tensors. It is
// the graph node itself, so it lives exactly as long as the graph needs it.
struct nnp_function_ctx : nnp::core::autograd::Node {
  nnp_function fn{};
  void* user_data = nullptr;
  std::string fn_name;
  std::vector<nnp::core::TensorRef> saved;
  // The same once forward returned, with the versions backward checks.
  std::vector<nnp::core::autograd::math::SavedTensor> kept;
  std::vector<nnp::core::Dims> input_shapes;
  std::vector<nnp_dtype> input_dtypes;
  std::string origin;  // the plugin layer whose forward applied the function, or ""

  ~nnp_function_ctx() override {
    if (fn.release) fn.release(user_data);
  }
  const char* name() const override { return fn_name.c_str(); }
  void release_saved() override {
    saved.clear();
    kept.clear();
  }
  nnp::core::autograd::Grads apply(nnp::core::autograd::Grads& grads) override;
};

nnp::core::autograd::Grads nnp_function_ctx::apply(nnp::core::autograd::Grads& grads) {
  nnp::core::autograd::RunningBackward running(fn_name.c_str());
  using namespace nnp::core;
  std::vector<const nnp_tensor*> grad_outputs;
  for (const TensorRef& g : grads) grad_outputs.push_back(g.get());
  std::vector<nnp_tensor*> grad_inputs(next_edges.size(), nullptr);
  nnp_status status = NNP_OK;
  const uint64_t since = last_error_serial();
  try {
    status = fn.backward(this, grad_outputs.data(), static_cast<int32_t>(grad_outputs.size()), grad_inputs.data(),
                         static_cast<int32_t>(grad_inputs.size()), user_data);
  } catch (...) {
    status = NNP_INTERNAL;
    set_last_error(status, (fn_name + ": backward threw an exception").c_str());
  }
  autograd::Grads out;
  for (nnp_tensor* g : grad_inputs) out.push_back(TensorRef::adopt(g));  // owns them, even on failure
  if (status != NNP_OK) {
    try {
      check_plugin_status(status, fn_name.c_str(), "custom function backward", since);
    } catch (const Error& e) {
      if (origin.empty()) throw;
      throw Error(e.status(), str_cat(origin, " backward: ", e.what()));
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) continue;
    if (out[i]->shape != input_shapes[i])
      fail(NNP_SHAPE_MISMATCH, fn_name, ": backward returned a gradient of shape ", format_dims(out[i]->shape),
           " for input ", i, " of shape ", format_dims(input_shapes[i]));
    // A gradient flows into its input's .grad, so it takes the input's dtype
    // as PyTorch converts it; one that is not a floating value is a bug.
    if (out[i]->dtype != input_dtypes[i] && is_floating(input_dtypes[i])) {
      if (!is_floating(out[i]->dtype))
        fail(NNP_DTYPE_MISMATCH, fn_name, ": backward returned a ", dtype_name(out[i]->dtype), " gradient for input ",
             i, " (", dtype_name(input_dtypes[i]), "); gradients are floating tensors");
      out[i] = to(*out[i], out[i]->device, input_dtypes[i]);
    }
  }
  return out;
}

namespace nnp::core::autograd {
namespace {
thread_local const std::string* g_origin = nullptr;
}  // namespace

FunctionOrigin::FunctionOrigin(const std::string& origin) : previous_(g_origin) { g_origin = &origin; }
FunctionOrigin::~FunctionOrigin() { g_origin = previous_; }
const std::string* FunctionOrigin::current() { return g_origin; }

std::vector<TensorRef> apply_function(const nnp_function& def, void* user_data, const Tensor* const* inputs,
                                      int32_t n_inputs, int32_t n_outputs) {
  if (def.struct_size < NNP_FUNCTION_SIZE_1_0 || !def.forward || !def.backward)
    fail(NNP_INVALID_ARGUMENT, "function_apply: the nnp_function needs struct_size, forward and backward");
  // user_data is released exactly once, refusals included (the caller has
  // handed it over).
  auto refuse = [&](auto&&... parts) {
    if (def.release) def.release(user_data);
    fail(NNP_INVALID_ARGUMENT, "function_apply: ", parts...);
  };
  if (n_inputs < 0 || n_outputs <= 0 || (n_inputs > 0 && inputs == nullptr))
    refuse("needs inputs and at least one output");
  for (int32_t i = 0; i < n_inputs; ++i)
    if (inputs[i] == nullptr) refuse("input ", i, " is NULL");
  auto ctx = std::make_shared<nnp_function_ctx>();
  std::memcpy(&ctx->fn, &def, sizeof(nnp_function) < def.struct_size ? sizeof(nnp_function) : def.struct_size);
  ctx->user_data = user_data;
  ctx->fn_name = def.name ? def.name : "CustomFunctionBackward";
  if (const std::string* origin = FunctionOrigin::current()) ctx->origin = *origin;

  std::vector<nnp_tensor*> raw(static_cast<size_t>(n_outputs), nullptr);
  nnp_status status = NNP_OK;
  const uint64_t since = last_error_serial();
  {
    NoGradGuard no_grad;
    try {
      status = def.forward(ctx.get(), inputs, n_inputs, raw.data(), n_outputs, user_data);
    } catch (...) {
      status = NNP_INTERNAL;
      set_last_error(status, (ctx->fn_name + ": forward threw an exception").c_str());
    }
  }
  std::vector<TensorRef> outputs;
  for (nnp_tensor* t : raw) outputs.push_back(TensorRef::adopt(t));
  if (status != NNP_OK) check_plugin_status(status, ctx->fn_name.c_str(), "custom function forward", since);
  for (int32_t i = 0; i < n_outputs; ++i)
    if (!outputs[static_cast<size_t>(i)])
      fail(NNP_INVALID_ARGUMENT, ctx->fn_name, ": forward left output ", i, " unset");

  bool record_it = false;
  for (int32_t i = 0; i < n_inputs; ++i) record_it = record_it || should_record({inputs[i]});
  if (!record_it) return outputs;
  ctx->sequence_nr = next_sequence_nr();
  for (int32_t i = 0; i < n_inputs; ++i) {
    ctx->next_edges.push_back(gradient_edge(*inputs[i]));
    ctx->input_shapes.push_back(inputs[i]->shape);
    ctx->input_dtypes.push_back(inputs[i]->dtype);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    // An output that is an input (or a view of one) must not be rewired.
    if (outputs[i]->autograd && outputs[i]->autograd->grad_fn)
      outputs[i] = make_view(*outputs[i], outputs[i]->shape, outputs[i]->strides, outputs[i]->offset);
    ctx->outputs.push_back(OutputMeta{outputs[i]->shape, outputs[i]->dtype, outputs[i]->device});
    if (is_floating(outputs[i]->dtype)) set_history(*outputs[i], ctx, static_cast<uint32_t>(i));
  }
  // Saved outputs become aliases without autograd state: the output holds the
  // node, and the node must not hold the output (a cycle never freed).
  for (TensorRef& kept : ctx->saved)
    for (const TensorRef& out : outputs)
      if (kept && kept.get() == out.get()) kept = make_view(*out, out->shape, out->strides, out->offset);
  for (const TensorRef& t : ctx->saved) ctx->kept.emplace_back(t);
  return outputs;
}

void save_for_backward(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count) {
  if (ctx == nullptr) fail(NNP_INVALID_ARGUMENT, "function_save: ctx is NULL");
  for (int32_t i = 0; i < count; ++i) ctx->saved.push_back(tensors[i] ? TensorRef::share(tensors[i]) : TensorRef());
}

int32_t saved_count(const nnp_function_ctx* ctx) { return ctx ? static_cast<int32_t>(ctx->saved.size()) : 0; }

TensorRef saved(const nnp_function_ctx* ctx, int32_t i) {
  if (ctx == nullptr) fail(NNP_INVALID_ARGUMENT, "function_saved: ctx is NULL");
  if (i < 0 || i >= saved_count(ctx)) {
    if (ctx->released)
      fail(NNP_INVALID_ARGUMENT, ctx->fn_name,
           ": saved tensors were freed after the first backward; pass "
           "retain_graph to go backward twice");
    fail(NNP_INVALID_ARGUMENT, ctx->fn_name, ": saved tensor ", i, " does not exist (", saved_count(ctx), " saved)");
  }
  if (ctx->kept.size() == ctx->saved.size()) return ctx->kept[static_cast<size_t>(i)];  // checked
  return ctx->saved[static_cast<size_t>(i)];
}

}  // namespace nnp::core::autograd
