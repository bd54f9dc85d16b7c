// nnp::compile: graph mode for inference, torch.compile's role (ABI 1.19).
//
//   nnp::nn::ModuleHandle fast = nnp::compile(model, {example});
//   model.eval();
//   nnp::NoGradGuard no_grad;
//   nnp::Tensor y = fast(x);                    // the captured plan
//   std::puts(nnp::compile_explain(fast).c_str());
//
// The capture is ONNX export's trace of the module on the example inputs,
// read back as an nn.GraphModule whose plan folds constants and fuses
// convolutions, products and chains of elementwise ops. The compiled module
// (OptimizedModule) holds the original as its child "_orig_mod" (its state
// dict is the original's, keys prefixed as PyTorch's) and runs it instead
// wherever the plan's assumptions fail: other input dtypes, devices or
// sizes (the batch, dimension 0, may change unless fixed_batch), training
// mode, hooks on the module, or a gradient wanted. Weights written since
// the capture are captured again on the next call. A module that cannot be
// captured always runs itself; compile_explain says why.
#pragma once

#include <nnp/nn.hpp>
#include <string>
#include <vector>

namespace nnp {

struct CompileOptions {
  bool fixed_batch = false;  // every size fixed, the batch too
  // On a device whose backend compiles graphs: the device that runs what it
  // does not claim ("" : "cpu").
  std::string fallback;
};

inline nn::ModuleHandle compile(const nn::ModuleHandle& module, const std::vector<Tensor>& example_inputs,
                                const CompileOptions& options = {}) {
  std::vector<const nnp_tensor*> inputs;
  for (const Tensor& t : example_inputs) inputs.push_back(t.get());
  nnp_compile_options o{};
  o.struct_size = sizeof(o);
  o.fixed_batch = options.fixed_batch ? 1 : 0;
  o.fallback = options.fallback.empty() ? nullptr : options.fallback.c_str();
  nnp_module* m = nullptr;
  check(api().module_compile(module.get(), inputs.data(), static_cast<int32_t>(inputs.size()), &o, &m));
  return nn::ModuleHandle::adopt(m);
}

// What the compiled module captured (or why it could not), its plan, and
// what its last call ran.
inline std::string compile_explain(const nn::ModuleHandle& compiled) {
  return detail::query_string(
      [&](char* buf, size_t size, size_t* needed) {
        return api().module_compile_explain(compiled.get(), buf, size, needed);
      },
      check);
}

}  // namespace nnp
