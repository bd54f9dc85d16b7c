// Graph mode on a device other than the cpu: an op that reads an input only
// as numbers on the host (nnp_graph_op.host_inputs: Reshape's shape, Slice's
// starts, Unsqueeze's axes) copies it from the device on every call, and on
// a GPU each such copy waits for all the work queued before it. Where the
// plan holds that input as a constant (a module tensor or a folded value
// on another device), the node is remade with a cpu copy of it, taken once
// per plan; the plan is remade when a module tensor copied here is written.
#pragma once

#include <utility>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct HostInputCopies {
  FusedProgram program;               // made: the nodes given copies; fused: how many copies
  std::vector<int32_t> copied_slots;  // the module tensors' slots copied (plan sources)
};

HostInputCopies copy_host_inputs(const std::vector<const onnx::GraphNode*>& nodes,
                                 const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                 const std::vector<std::pair<int32_t, TensorRef>>& folded);

}  // namespace nnp::core::graph
