#include "inference_plan.hpp"

#include <algorithm>
#include <string>

#include "../autograd/grad_mode.hpp"
#include "../autograd/record.hpp"
#include "add_layer_norm_fusion.hpp"
#include "attention_fusion.hpp"
#include "batch_norm_folding.hpp"
#include "constant_folding.hpp"
#include "conv_activation_fusion.hpp"
#include "conv_integer_packing.hpp"
#include "conv_packing.hpp"
#include "dead_code.hpp"
#include "dynamic_quantize_kernel.hpp"
#include "elementwise_fusion.hpp"
#include "float16_on_cpu.hpp"
#include "gemm_epilogue_fusion.hpp"
#include "host_inputs.hpp"
#include "linear_packing.hpp"
#include "liveness.hpp"
#include "pool_layer_direct.hpp"
#include "quantized_conv_packing.hpp"
#include "readers.hpp"
#include "transpose_sharing.hpp"

namespace nnp::core::graph {

namespace {
// "1 node", "2 nodes": count and noun, for the plan's notes.
std::string count_of(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
}  // namespace

InferencePlan InferencePlan::make(const ProgramView& program, const std::vector<onnx::GraphValue>* probe,
                                  const PlacementTarget& target) {
  InferencePlan plan;
  FoldedProgram folded = fold_constants(*program.nodes, *program.tensors, program.slots);
  int dropped = 0;
  plan.nodes = drop_dead_nodes(folded.nodes, *program.outputs, program.slots, &dropped);
  plan.notes = std::move(folded.notes);
  if (dropped > 0) plan.notes.push_back(count_of(dropped, "node", "nodes") + " no output needs: dropped");
  plan.slots = program.slots;
  // A float16 model with f32 edges on the cpu runs in f32 (float16_on_cpu.hpp).
  Float16OnCpu halves;
  if (!(target.backend && probe)) {
    halves = run_float16_in_f32(plan.nodes, *program.outputs, *program.tensors, folded.constants);
    plan.nodes = halves.program.nodes;
    for (auto& [slot, copy] : halves.constants) folded.constants.emplace_back(slot, std::move(copy));
    if (halves.program.fused > 0 || !halves.copied_slots.empty())
      plan.notes.push_back("float16 with f32 edges on the cpu: run in f32, as ONNX Runtime's cpu provider runs it (" +
                           count_of(halves.program.fused, "node", "nodes") + " remade)");
  }
  Placement placed;
  if (target.backend && probe) {
    placed = place_on_backend(plan.nodes, *program.outputs, program.slots, target, *probe, *program.tensors,
                              folded.constants);
    plan.nodes = placed.program.nodes;
    plan.slots = placed.slots;
    plan.placed = true;
    plan.signature = signature_of(*probe, *program.inputs);
    plan.notes.insert(plan.notes.end(), placed.lines.begin(), placed.lines.end());
    for (auto& [slot, copy] : placed.constants) folded.constants.emplace_back(slot, std::move(copy));
    for (const auto& [slot, weight] : placed.weights) folded.constants.emplace_back(slot, weight);
  }
  const int32_t slots = plan.slots;
  FusedProgram attentions = fuse_attention(plan.nodes, *program.outputs, slots);
  BatchNormFolding norms =
      fold_batch_norms(attentions.nodes, *program.outputs, slots, *program.tensors, folded.constants);
  ConvPacking packs = pack_convolutions(norms.program.nodes, *program.outputs, slots);
  QuantizedConvPacking int8_packs = pack_quantized_convolutions(packs.program.nodes, *program.outputs, slots);
  FusedProgram on_device = quantize_dynamically_on_device(int8_packs.program.nodes);
  ConvIntegerPacking integer_packs = pack_conv_integers(on_device.nodes, *program.tensors, folded.constants);
  LinearPacking linear_packs = pack_linear_layers(integer_packs.program.nodes, *program.outputs, slots);
  FusedProgram convs = fuse_conv_relu(linear_packs.program.nodes, *program.outputs, slots);
  FusedProgram linears = fuse_linear_relu(convs.nodes, *program.outputs, slots);
  GemmEpilogueFusion gemms =
      fuse_gemm_epilogues(linears.nodes, *program.outputs, slots, *program.tensors, folded.constants);
  FusedProgram residuals = fuse_add_layer_norms(gemms.program.nodes, *program.outputs, slots);
  TransposeSharing transposes = share_transposes(residuals.nodes, *program.outputs, slots);
  ElementwiseFusion chains = fuse_elementwise_chains(transposes.program.nodes, *program.outputs, slots);
  FusedProgram pools = call_pool_kernels_directly(chains.program.nodes);
  HostInputCopies host = copy_host_inputs(pools.nodes, *program.tensors, folded.constants);
  plan.nodes = std::move(host.program.nodes);
  for (FusedProgram* pass :
       {&halves.program, &placed.program, &attentions, &norms.program, &packs.program, &int8_packs.program, &on_device,
        &integer_packs.program, &linear_packs.program, &convs, &linears, &gemms.program, &residuals,
        &transposes.program, &chains.program, &pools, &host.program})
    for (auto& node : pass->made) plan.made.push_back(std::move(node));
  if (attentions.fused > 0)
    plan.notes.push_back(count_of(attentions.fused, "attention", "attentions") +
                         " (MatMul, Softmax, MatMul) fused into one kernel each");
  if (norms.program.fused > 0)
    plan.notes.push_back(count_of(norms.program.fused, "BatchNormalization", "BatchNormalizations") +
                         " folded into the convolution before");
  if (packs.program.fused > 0)
    plan.notes.push_back(count_of(packs.program.fused, "convolution", "convolutions") +
                         " run from a weight packed once, with the ReLU and max pooling after fused in");
  if (int8_packs.program.fused > 0)
    plan.notes.push_back(count_of(int8_packs.program.fused, "static int8 layer", "static int8 layers") +
                         " run from a weight packed once, requantized (and pooled) in the same pass");
  if (on_device.fused > 0)
    plan.notes.push_back(count_of(on_device.fused, "DynamicQuantizeLinear", "DynamicQuantizeLinears") +
                         " run as one kernel, the range found on the device");
  if (integer_packs.program.fused > 0)
    plan.notes.push_back(count_of(integer_packs.program.fused, "ConvInteger", "ConvIntegers") +
                         " run from a weight packed once");
  if (linear_packs.program.fused > 0)
    plan.notes.push_back(count_of(linear_packs.program.fused, "Linear layer", "Linear layers") +
                         " run from a weight packed once, with the bias and the ReLU after fused in");
  if (convs.fused > 0)
    plan.notes.push_back(count_of(convs.fused, "convolution", "convolutions") + " fused with the ReLU after");
  if (linears.fused > 0)
    plan.notes.push_back(count_of(linears.fused, "Linear layer", "Linear layers") + " fused with the ReLU after");
  if (gemms.program.fused > 0)
    plan.notes.push_back(count_of(gemms.program.fused, "MatMul", "MatMuls") +
                         " fused with the bias Add and ReLU after");
  if (residuals.fused > 0)
    plan.notes.push_back(count_of(residuals.fused, "residual Add", "residual Adds") +
                         " fused with the LayerNormalization after");
  if (transposes.program.fused > 0)
    plan.notes.push_back(count_of(transposes.program.fused, "transposed input", "transposed inputs") +
                         " laid out once for the " + std::to_string(transposes.products) + " products that read them");
  if (chains.program.fused > 0)
    plan.notes.push_back(count_of(chains.program.fused, "chain", "chains") + " of elementwise ops (" +
                         std::to_string(chains.ops) + " ops) fused into one pass each");
  if (host.program.fused > 0)
    plan.notes.push_back(count_of(host.program.fused, "constant", "constants") +
                         " read on the host (shapes, axes) copied to the cpu once");
  // Keep only the folded values something still reads.
  const std::vector<int> readers = count_readers(plan.nodes, *program.outputs, slots);
  for (auto& [slot, value] : folded.constants)
    if (readers[static_cast<size_t>(slot)] > 0) plan.constants.emplace_back(slot, std::move(value));
  std::vector<int32_t> sources = folded.sources;
  for (const std::vector<int32_t>* copied : {&host.copied_slots, &placed.copied_slots, &halves.copied_slots})
    for (int32_t s : *copied)
      if (std::find(sources.begin(), sources.end(), s) == sources.end()) sources.push_back(s);
  for (int32_t s : sources) {
    auto it = std::find_if(program.tensors->begin(), program.tensors->end(),
                           [&](const auto& entry) { return entry.first == s; });
    plan.sources.push_back(it->second.get());
  }
  for (const auto& [slot, weight] : placed.weights) placed.sources.push_back(weight.get());
  for (const Tensor* t : placed.sources)
    if (std::find(plan.sources.begin(), plan.sources.end(), t) == plan.sources.end()) plan.sources.push_back(t);
  for (const std::vector<const Tensor*>* made_from :
       {&halves.sources, &norms.sources, &packs.sources, &int8_packs.sources, &integer_packs.sources,
        &linear_packs.sources, &gemms.sources})
    for (const Tensor* t : *made_from)
      if (std::find(plan.sources.begin(), plan.sources.end(), t) == plan.sources.end()) plan.sources.push_back(t);
  plan.assumed = nn::fingerprint(plan.sources);
  plan.release_after = release_points(plan.nodes, *program.outputs, plan.slots);
  return plan;
}

bool InferencePlan::needs_gradients() const {
  if (!autograd::grad_enabled()) return false;
  return std::any_of(sources.begin(), sources.end(), [](const Tensor* t) { return autograd::requires_grad(*t); });
}

std::vector<InputSignature> signature_of(const std::vector<onnx::GraphValue>& values,
                                         const std::vector<int32_t>& inputs) {
  std::vector<InputSignature> out;
  for (int32_t s : inputs) {
    const TensorRef& t = values[static_cast<size_t>(s)].tensor;
    out.push_back(t ? InputSignature{t->dtype, t->device, t->shape} : InputSignature{});
  }
  return out;
}

std::shared_ptr<const InferencePlan> PlanCache::get(const ProgramView& program,
                                                    const std::vector<onnx::GraphValue>* values) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Checked first: a training loop changes the weights every step, and the
  // plan is not remade for calls that cannot use it.
  if (plan_ && plan_->needs_gradients()) return nullptr;
  // Placed on a backend that compiles graphs: made for the call's inputs,
  // from what the program as written computes of them.
  PlacementTarget target = values && any_backend_compiles_graphs() ? placement_target(*values) : PlacementTarget{};
  target.fallback = program.fallback;
  const bool stale = !plan_ || !plan_->current() || (target.backend != nullptr) != (plan_->placed) ||
                     (target.backend && plan_->signature != signature_of(*values, *program.inputs));
  if (stale && target.backend) {
    std::vector<onnx::GraphValue> probe = *values;
    {
      autograd::NoGradGuard no_grad;
      onnx::run_nodes(*program.nodes, probe);
    }
    plan_ = std::make_shared<const InferencePlan>(InferencePlan::make(program, &probe, target));
  } else if (stale && (plan_ == nullptr || values != nullptr || !plan_->current())) {
    plan_ = std::make_shared<const InferencePlan>(InferencePlan::make(program));
  }
  if (plan_->needs_gradients()) return nullptr;
  return plan_;
}

}  // namespace nnp::core::graph
