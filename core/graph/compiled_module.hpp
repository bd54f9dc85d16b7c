// nnp::compile (DESIGN §11): a module captured once on example inputs and
// run as a plan. The capture is ONNX export's trace, read back by the
// importer into an nn.GraphModule, whose plan runs the passes of graph mode
// (folding, fusion). The compiled module (type OptimizedModule, as
// PyTorch's) holds the original as its child `_orig_mod`, so its state dict
// and parameters are the original's, and calls the original itself
// wherever the plan assumed what no longer holds:
//   - the guards: the inputs' count, dtypes, devices, ranks and sizes (the
//     batch, dimension 0, may change where the capture kept it symbolic);
//   - the original's weights: a parameter or buffer written or replaced
//     since the capture makes it capture again on the next call;
//   - gradients: grad mode with an input or parameter that requires grad
//     (the plan's weights are the capture's), training mode (the capture
//     is of eval mode), or hooks on the original.
// A module that cannot be captured (an op with no ONNX form, a forward
// whose ops depend on tensor values) always runs eagerly. explain() says
// which, and why.
#pragma once

#include <string>
#include <vector>

#include "../nn/module.hpp"

namespace nnp::core::graph {

struct CompileOptions {
  bool dynamic_batch = true;  // dimension 0 may change between calls
  // Runs what a backend that compiles graphs does not claim.
  nnp_device fallback = parse_device("cpu");
};

ModuleRef compile(nn::Module& module, const std::vector<TensorRef>& example_inputs, const CompileOptions& options);

// What the compiled module did on its last call, its guards, and its plan;
// refuses a module compile did not make.
std::string explain(const nn::Module& compiled);

}  // namespace nnp::core::graph
