// Graph mode (DESIGN §11): what a GraphModule runs when no gradient is
// needed of the tensors it folded - its program after the passes (constant
// folding, then dead-code elimination). The plan holds what the passes
// assumed: the (storage id, version) of every module tensor it folded, so a
// plan whose weights have been written since (load_state_dict, an
// optimizer step, .to()) is made again before it runs.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../device.hpp"
#include "../nn/derived_tensor.hpp"
#include "../onnx/graph_program.hpp"
#include "placement.hpp"

namespace nnp::core::graph {

// The program a plan is made from (a GraphModule's).
struct ProgramView {
  const std::vector<onnx::GraphNode>* nodes;
  const std::vector<int32_t>* inputs;
  const std::vector<int32_t>* outputs;
  const std::vector<std::pair<int32_t, TensorRef>>* tensors;  // the module's, by slot
  int32_t slots;
  nnp_device fallback;  // runs what a backend that compiles graphs leaves
};

// What the inputs of the call that made a placed plan were: it is made
// again for others (a backend compiled for those shapes).
struct InputSignature {
  nnp_dtype dtype;
  nnp_device device;
  Dims shape;
  bool operator==(const InputSignature& o) const {
    return dtype == o.dtype && same_device(device, o.device) && shape == o.shape;
  }
};
std::vector<InputSignature> signature_of(const std::vector<onnx::GraphValue>& values,
                                         const std::vector<int32_t>& inputs);

struct InferencePlan {
  std::vector<const onnx::GraphNode*> nodes;  // run in order
  int32_t slots = 0;                          // the values it runs over (the program's and copies)
  // Placed on a backend that compiles graphs (placement.hpp): for these inputs only.
  bool placed = false;
  std::vector<InputSignature> signature;
  std::vector<std::unique_ptr<onnx::GraphNode>> made;    // the nodes the passes made (fused)
  std::vector<std::pair<int32_t, TensorRef>> constants;  // folded values the nodes or outputs read
  std::vector<const Tensor*> sources;                    // the module tensors they were computed from
  nn::Fingerprint assumed;                               // the sources' storage ids and versions
  std::vector<std::string> notes;                        // what the passes did (explain)
  std::vector<std::vector<int32_t>> release_after;       // per node: the values its run ends (liveness.hpp)

  // probe: every slot as a call computed it (the program run as written),
  // given where the plan is placed on a backend that compiles graphs.
  static InferencePlan make(const ProgramView& program, const std::vector<onnx::GraphValue>* probe = nullptr,
                            const PlacementTarget& target = {});
  // Whether a gradient of a source is wanted now (the program then runs as written).
  bool needs_gradients() const;
  // Whether the sources hold what they held when the plan was made.
  bool current() const { return nn::fingerprint(sources) == assumed; }
};

// The plan of one module, made on first use and again whenever its sources
// change; shared by the threads that call the module.
class PlanCache {
 public:
  // The plan to run now, or null when the program must run as written
  // (gradients of folded tensors are needed). values: the call's inputs and
  // the module's tensors in their slots (null: no call, as for explain).
  std::shared_ptr<const InferencePlan> get(const ProgramView& program,
                                           const std::vector<onnx::GraphValue>* values = nullptr);

 private:
  std::mutex mutex_;
  std::shared_ptr<const InferencePlan> plan_;
};

}  // namespace nnp::core::graph
