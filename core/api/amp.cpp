// Adapters: mixed precision (ABI 1.27): autocast scopes, the casts composed
// ops ask for, and a gradient scaler's unscale.
#include <vector>

#include "../autocast/autocast.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "../dtype.hpp"
#include "../optim/grad_unscale.hpp"
#include "../optim/optimizer.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status autocast_enter(const char* device_type, int32_t dtype, int32_t enabled, int32_t cache_enabled) {
  return guard([&] {
    const std::string_view type = text_arg(device_type, "autocast_enter", "device_type");
    if (dtype != NNP_AUTOCAST_PREFERRED && !is_valid_dtype(static_cast<nnp_dtype>(dtype)))
      fail(NNP_INVALID_ARGUMENT, "autocast(", type, "): unknown dtype ", dtype,
           "; pass NNP_BF16, NNP_F16 or NNP_AUTOCAST_PREFERRED");
    const nnp_dtype chosen =
        dtype == NNP_AUTOCAST_PREFERRED ? autocast::state(type).dtype : static_cast<nnp_dtype>(dtype);
    autocast::enter(type, chosen, enabled != 0, cache_enabled != 0);
  });
}

nnp_status autocast_exit(const char* device_type) {
  return guard([&] { autocast::exit(text_arg(device_type, "autocast_exit", "device_type")); });
}

nnp_status autocast_state(const char* device_type, int32_t* enabled, nnp_dtype* dtype, int32_t* cache_enabled) {
  return guard([&] {
    const autocast::DeviceState s = autocast::state(text_arg(device_type, "autocast_state", "device_type"));
    optional_out(enabled, int32_t(s.enabled));
    optional_out(dtype, s.dtype);
    optional_out(cache_enabled, int32_t(s.cache_enabled));
  });
}

nnp_status autocast_args(const char* op, const nnp_tensor* const* inputs, int32_t count, nnp_tensor** outputs) {
  const char* entry = "autocast_args";
  return guard([&] {
    const std::string_view name = text_arg(op, entry, "op");
    if (count < 0 || count > 64) fail(NNP_INVALID_ARGUMENT, entry, ": count is ", count, " (0 to 64 tensors)");
    if (count == 0) return;
    in_arg(inputs, entry, "inputs");
    in_arg(outputs, entry, "outputs");
    for (int32_t i = 0; i < count; ++i) outputs[i] = nullptr;
    std::vector<TensorRef> casts(static_cast<size_t>(count));
    const Tensor* first = nullptr;
    for (int32_t i = 0; i < count && !first; ++i)
      if (inputs[i] && is_floating(inputs[i]->dtype)) first = inputs[i];
    if (first && autocast::active()) {
      const autocast::Policy policy = autocast::policy_named(name, autocast::device_type_of(*first));
      autocast::cast_inputs(policy, op, inputs, count, casts.data());
    } else {
      autocast::policy_named(name, "cpu");  // an unknown name is refused whether or not autocast is on
    }
    for (int32_t i = 0; i < count; ++i)
      if (inputs[i]) outputs[i] = casts[i] ? casts[i].take() : TensorRef::share(inputs[i]).take();
  });
}

nnp_status amp_unscale_grads(nnp_optimizer* opt, double inv_scale, nnp_tensor* found_inf, int32_t allow_f16) {
  const char* entry = "amp_unscale_grads";
  return guard([&] {
    const nnp_optimizer& o = in_arg(opt, entry, "opt");
    Tensor& found = *const_cast<Tensor*>(&tensor_arg(found_inf, entry, "found_inf"));
    std::vector<TensorRef> grads;  // held: the list below points at them
    for (const nnp_optimizer::Group& group : o.groups)
      for (const TensorRef& p : group.params)
        if (TensorRef g = autograd::grad(*p)) {
          if (g->dtype == NNP_F16 && !allow_f16)
            fail(NNP_DTYPE_MISMATCH,
                 "Attempting to unscale FP16 gradients: keep the parameters in f32 under autocast (their "
                 "gradients then are f32)");
          grads.push_back(std::move(g));
        }
    std::vector<const Tensor*> list;
    for (const TensorRef& g : grads) list.push_back(g.get());
    optim::unscale_grads(list, inv_scale, found);
  });
}

}  // namespace nnp::core::api
