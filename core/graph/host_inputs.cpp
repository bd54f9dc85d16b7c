#include "host_inputs.hpp"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "../autograd/grad_mode.hpp"
#include "../device.hpp"
#include "../ops.hpp"

namespace nnp::core::graph {

HostInputCopies copy_host_inputs(const std::vector<const onnx::GraphNode*>& nodes,
                                 const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                 const std::vector<std::pair<int32_t, TensorRef>>& folded) {
  HostInputCopies out;
  // slot -> (the constant, whether it is a module tensor)
  std::unordered_map<int32_t, std::pair<const TensorRef*, bool>> constants;
  for (const auto& [slot, t] : module_tensors) constants[slot] = {&t, true};
  for (const auto& [slot, t] : folded) constants[slot] = {&t, false};
  const nnp_device cpu = parse_device("cpu");
  std::unordered_map<int32_t, TensorRef> copies;  // one copy per slot, shared by its readers
  autograd::NoGradGuard no_grad;
  for (const onnx::GraphNode* node : nodes) {
    const uint64_t host = node->kind == onnx::GraphNodeKind::kOp && node->op ? node->op->host_inputs : 0;
    std::vector<TensorRef> given;
    for (size_t i = 0; host != 0 && i < node->inputs.size() && i < 64; ++i) {
      const int32_t slot = node->inputs[i];
      const auto constant = constants.find(slot);
      if (!(host >> i & 1) || slot < 0 || constant == constants.end()) continue;
      const TensorRef& value = *constant->second.first;
      if (!value || value->device.backend == cpu.backend) continue;
      auto [copy, made] = copies.try_emplace(slot);
      if (made) {
        copy->second = core::to(*value, cpu, value->dtype);
        if (constant->second.second) out.copied_slots.push_back(slot);
      }
      given.resize(node->inputs.size());
      given[i] = copy->second;
    }
    if (given.empty()) {
      out.program.nodes.push_back(node);
      continue;
    }
    auto remade = std::make_unique<onnx::GraphNode>();
    remade->kind = node->kind;
    remade->op = node->op;
    remade->op_type = node->op_type;
    if (node->attrs) remade->attrs = std::make_unique<nnp_attrs>(*node->attrs);
    remade->inputs = node->inputs;
    remade->outputs = node->outputs;
    remade->host_copies = std::move(given);
    out.program.nodes.push_back(remade.get());
    out.program.made.push_back(std::move(remade));
  }
  out.program.fused = static_cast<int>(copies.size());
  return out;
}

}  // namespace nnp::core::graph
