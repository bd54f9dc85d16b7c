// Graph mode on a backend that compiles graphs (nnp_backend 1.24:
// capability, compile, execute, release; DESIGN §11). The plan's nodes are
// described to the backend in ONNX's vocabulary with the dtypes and shapes
// of the call that made the plan; each run of consecutive nodes it claims
// becomes one node that executes what it compiled, and the nodes it does
// not claim run on the fallback backend (cpu). A value read on the other
// side of a boundary is copied there: per call for computed values (an
// NNP_PROFILE_COPY event each), once per plan for constants.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../backend_record.hpp"
#include "fused_program.hpp"

namespace nnp::core::graph {

// Where a plan's compiled parts run.
struct PlacementTarget {
  const BackendRecord* backend = nullptr;  // compiles graphs
  nnp_device device{};
  nnp_device fallback{};  // runs the nodes it does not claim
};

// The backend that compiles graphs holding the first module tensor or
// input that lives on one, if any: where a plan is placed.
PlacementTarget placement_target(const std::vector<onnx::GraphValue>& values);

struct Placement {
  FusedProgram program;  // made: the compiled nodes and the copies; fused: compiled subgraphs
  int32_t slots = 0;     // the program's slots and those of the copies
  // Constants copied to the fallback once (slot, copy), and the module
  // tensors among their sources (plan sources).
  std::vector<std::pair<int32_t, TensorRef>> constants;
  std::vector<int32_t> copied_slots;
  // The weights of layers offered as ONNX nodes, in slots of their own
  // (plan constants and sources: the plan is made again when they change).
  std::vector<std::pair<int32_t, TensorRef>> weights;
  // The tensors of layers copied to the fallback (plan sources too).
  std::vector<const Tensor*> sources;
  int claimed_nodes = 0, copies = 0;
  std::vector<std::string> lines;  // "acme:0 runs MatMul, Add, Relu (3 nodes) as one executable"
};

// values: every slot as the call that made the plan computed it (the
// program run as written), constants included. Throws where the backend
// fails (naming it) or its claims are not honest (a node it cannot run).
Placement place_on_backend(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                           int32_t slots, const PlacementTarget& target, const std::vector<onnx::GraphValue>& values,
                           const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                           const std::vector<std::pair<int32_t, TensorRef>>& folded);

}  // namespace nnp::core::graph
