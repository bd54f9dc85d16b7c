// Graph mode for a float16 model with float32 edges on the cpu: what a
// float16 converter writes by default (the inputs cast to f16 and the
// outputs back to f32 by Cast nodes, everything between in f16). The cpu
// has no f16 arithmetic, and ONNX Runtime's cpu provider runs such a graph
// in f32, dropping the Cast pairs between its nodes: its outputs equal the
// f32 model's with the weights rounded to f16. The plan does the same:
// module tensors and folded constants of f16 become f32 copies (made once
// per plan), f16 layers run as f32 copies of themselves, and a Cast to f16
// inside the graph casts to f32. Each op then runs on the f32 kernels (and
// the later passes' packed and fused ones) instead of converting its
// operands at every call, and rounds nothing in between.
#pragma once

#include <utility>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct Float16OnCpu {
  FusedProgram program;                                  // fused: how many nodes it remade (0: not such a model)
  std::vector<std::pair<int32_t, TensorRef>> constants;  // f32 copies of the module's f16 tensors, by slot
  std::vector<int32_t> copied_slots;                     // those module tensors' slots (plan sources)
  std::vector<const Tensor*> sources;                    // the f16 layers' tensors copied
};

// Applies where every graph output is written by a Cast to f32 and the
// model holds f16 tensors on the cpu (its module tensors, folded constants
// or layers); folded constants of f16 are replaced in place.
Float16OnCpu run_float16_in_f32(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                std::vector<std::pair<int32_t, TensorRef>>& folded);

}  // namespace nnp::core::graph
