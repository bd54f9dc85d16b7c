#include "containers.hpp"

#include "../error.hpp"
#include "module_call.hpp"

namespace nnp::core::nn {
namespace {

// Sequential: each child's output is the next one's input.
nnp_status sequential_forward(void*, nnp_module* m, const nnp_tensor* const* inputs, int32_t n_inputs,
                              nnp_tensor** output) {
  return guard([&] {
    std::vector<TensorRef> current;
    for (int32_t i = 0; i < n_inputs; ++i) current.push_back(TensorRef::share(inputs[i]));
    for (auto& [name, child] : m->children) {
      if (!child) continue;
      current = {call(*child, current)};
    }
    if (current.size() != 1)
      fail(NNP_INVALID_ARGUMENT, "Sequential: with no modules it passes one input through, got ", current.size());
    *output = current[0].take();
  });
}

nnp_status not_callable(void*, nnp_module* m, const nnp_tensor* const*, int32_t, nnp_tensor**) {
  return guard(
      [&] { fail(NNP_UNIMPLEMENTED, m->type_name, " is a container without forward: call the modules it holds"); });
}

}  // namespace

ModuleRef create_container(nnp_container_kind kind) {
  static const char* const names[] = {"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"};
  if (kind < NNP_SEQUENTIAL || kind > NNP_PARAMETER_DICT)
    fail(NNP_INVALID_ARGUMENT, "container_create: unknown container kind ", kind);
  nnp_module_vtable vtable{};
  vtable.struct_size = sizeof(vtable);
  vtable.forward = kind == NNP_SEQUENTIAL ? sequential_forward : not_callable;
  ModuleRef m = create_module(names[kind], &vtable, nullptr);
  m->container = kind;
  return m;
}

}  // namespace nnp::core::nn
