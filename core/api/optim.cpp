// Adapters: optimizers (torch.optim), their algorithms, the fused SGD step
// and gradient clipping.
#include "../optim/fused_sgd.hpp"
#include "../optim/optimizer.hpp"
#include "../plugin_registry.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

nnp_optimizer& optimizer_arg(const nnp_optimizer* o, const char* op) {
  return *const_cast<nnp_optimizer*>(&in_arg(o, op, "opt"));
}

}  // namespace

nnp_status optimizer_create(const char* kind, const nnp_list* params, const nnp_attrs* options, nnp_optimizer** out) {
  return guard([&] {
    nnp_optimizer*& result = out_arg(out, "optimizer_create");
    result = optim::create(string_arg(kind, "optimizer_create", "kind"), list_arg(params, "optimizer_create", "params"),
                           options)
                 .release();
  });
}
void optimizer_release(nnp_optimizer* o) { delete o; }
nnp_status optimizer_add_param_group(nnp_optimizer* o, const nnp_list* params, const nnp_attrs* options) {
  return guard([&] {
    optim::add_param_group(optimizer_arg(o, "optimizer_add_param_group"),
                           list_arg(params, "optimizer_add_param_group", "params"), options);
  });
}
int32_t optimizer_group_count(const nnp_optimizer* o) { return o ? static_cast<int32_t>(o->groups.size()) : 0; }
nnp_status optimizer_get_option(const nnp_optimizer* o, int32_t group, const char* name, double* out) {
  return guard([&] {
    double& value = out_arg(out, "optimizer_get_option");
    value = optim::get_option(optimizer_arg(o, "optimizer_get_option"), group,
                              string_arg(name, "optimizer_get_option", "name"));
  });
}
nnp_status optimizer_set_option(nnp_optimizer* o, int32_t group, const char* name, double value) {
  return guard([&] {
    optim::set_option(optimizer_arg(o, "optimizer_set_option"), group, string_arg(name, "optimizer_set_option", "name"),
                      value);
  });
}
nnp_status optimizer_step(nnp_optimizer* o) {
  return guard([&] { optim::step(optimizer_arg(o, "optimizer_step")); });
}
nnp_status optimizer_zero_grad(nnp_optimizer* o, int32_t set_to_none) {
  return guard([&] { optim::zero_grad(optimizer_arg(o, "optimizer_zero_grad"), set_to_none != 0); });
}
nnp_status optimizer_state_dict(const nnp_optimizer* o, nnp_list** out) {
  return list_out(out, "optimizer_state_dict",
                  [&](nnp_list& l) { optim::state_dict(optimizer_arg(o, "optimizer_state_dict"), l); });
}
nnp_status optimizer_load_state_dict(nnp_optimizer* o, const nnp_list* state) {
  return guard([&] {
    optim::load_state_dict(optimizer_arg(o, "optimizer_load_state_dict"),
                           list_arg(state, "optimizer_load_state_dict", "state"));
  });
}
// total may be NULL.
nnp_status clip_grad_norm(const nnp_list* params, double max_norm, double norm_type, double* total) {
  return guard([&] {
    optional_out(total, optim::clip_grad_norm(list_arg(params, "clip_grad_norm", "params"), max_norm, norm_type));
  });
}


nnp_status register_optimizer(nnp_plugin_host* host, const nnp_optimizer_algorithm* algorithm) {
  return PluginRegistry::register_optimizer(host, algorithm);
}
int32_t optimizer_kind_count() {
  int32_t count = 0;
  guard([&] {
    PluginRegistry::instance().discover();  // plugins' kinds count too
    count = optim::algorithms().count();
  });
  return count;
}
nnp_status optimizer_kind_info(int32_t i, nnp_optimizer_algorithm* out) {
  return guard([&] {
    info_arg(out, "optimizer_kind_info");
    PluginRegistry::instance().discover();
    write_info(out, optim::algorithms().at(i).c_algorithm);
  });
}
nnp_status sgd_step_fused(const nnp_tensor* param, const nnp_tensor* grad, const nnp_tensor* buffer,
                          const nnp_sgd_params* p, nnp_tensor** param_out, nnp_tensor** buffer_out) {
  return guard([&] {
    nnp_tensor*& value = out_arg(param_out, "sgd_step_fused", "param_out");
    nnp_tensor*& new_buffer = out_arg(buffer_out, "sgd_step_fused", "buffer_out");
    const nnp_sgd_params& params = params_arg(p, NNP_SGD_PARAMS_SIZE_1_12, "sgd_step_fused");
    TensorRef v, b;
    optim::fused_sgd(params, tensor_arg(param, "sgd_step_fused", "param"), tensor_arg(grad, "sgd_step_fused", "grad"),
                     buffer ? &tensor_arg(buffer, "sgd_step_fused", "buffer") : nullptr, &v, &b);
    value = v.take();
    new_buffer = b.take();
  });
}

}  // namespace nnp::core::api
