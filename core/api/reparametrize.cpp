// Adapters: pruning and parametrizations (ABI 1.6), and getattr for the
// tensors they compute.
#include <vector>

#include "../nn/parametrize.hpp"
#include "../nn/prune.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status prune(nnp_module* m, const char* name, const nnp_prune_spec* spec) {
  return guard([&] {
    nn::Module& module = module_arg(m, "prune");
    nn::prune(module, text_arg(name, "prune", "name"), in_arg(spec, "prune", "spec"));
  });
}

nnp_status prune_global(nnp_module* const* modules, const char* const* names, int32_t n, const nnp_prune_spec* spec,
                        const nnp_tensor* const* importance_scores) {
  return guard([&] {
    const char* op = "prune_global";
    if (n < 0) fail(NNP_INVALID_ARGUMENT, op, ": n is negative (", n, ")");
    if (n > 0) {
      in_arg(modules, op, "modules");
      in_arg(names, op, "names");
    }
    std::vector<nn::Module*> ms;
    std::vector<std::string> ns;
    std::vector<const Tensor*> scores;
    for (int32_t i = 0; i < n; ++i) {
      ms.push_back(&module_arg(modules[i], op));
      ns.emplace_back(text_arg(names[i], op, "names[i]"));
      if (importance_scores) scores.push_back(importance_scores[i]);
    }
    nn::prune_global(ms, ns, in_arg(spec, op, "spec"), scores);
  });
}

nnp_status prune_remove(nnp_module* m, const char* name) {
  return guard([&] { nn::prune_remove(module_arg(m, "prune_remove"), text_arg(name, "prune_remove", "name")); });
}

int32_t prune_is_pruned(const nnp_module* m) { return m && nn::is_pruned(*m) ? 1 : 0; }

nnp_status register_parametrization(nnp_module* m, const char* name, nnp_module* parametrization, int32_t unsafe) {
  return guard([&] {
    const char* op = "register_parametrization";
    nn::register_parametrization(module_arg(m, op), text_arg(name, op, "name"),
                                 *const_cast<nnp_module*>(&in_arg(parametrization, op, "parametrization")),
                                 unsafe != 0);
  });
}

nnp_status remove_parametrizations(nnp_module* m, const char* name, int32_t leave_parametrized) {
  return guard([&] {
    const char* op = "remove_parametrizations";
    nn::remove_parametrizations(module_arg(m, op), text_arg(name, op, "name"), leave_parametrized != 0);
  });
}

int32_t is_parametrized(const nnp_module* m, const char* name) {
  return m && nn::is_parametrized(*m, name ? name : "") ? 1 : 0;
}

nnp_status parametrization_assign(nnp_module* m, const char* name, const nnp_tensor* value) {
  return guard([&] {
    const char* op = "parametrization_assign";
    nn::assign_parametrized(module_arg(m, op), text_arg(name, op, "name"), tensor_arg(value, op, "value"));
  });
}

void parametrize_cache_enter() { nn::parametrize_cache_enter(); }
void parametrize_cache_exit() { nn::parametrize_cache_exit(); }

nnp_status module_get_tensor(nnp_module* m, const char* path, nnp_tensor** out) {
  return handle_out(out, "module_get_tensor", [&] {
    return nn::get_tensor(module_arg(m, "module_get_tensor"), text_arg(path, "module_get_tensor", "path"));
  });
}

}  // namespace nnp::core::api
