// Node lists in the order a graph's values need. ONNX requires a graph's
// nodes to be topologically sorted, and onnx::checker refuses a file whose
// are not; converters that append nodes (float16 converters add their Cast
// nodes at the end) write such files, and ONNX Runtime sorts them and runs
// them. So does nnplug: the importer sorts every graph, subgraphs included,
// before the checker sees it, and refuses a cycle by naming its nodes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace nnp::core::onnx {

// Puts g's nodes (and, recursively, its subgraphs' nodes, at most
// max_depth levels) in an order where each node comes after the nodes
// whose outputs it reads, its subgraphs' reads of this graph's values
// included. Nodes already in order keep their places; among the others,
// the file's order is kept where the values allow. Returns whether any
// list changed. A cycle throws NNP_CORRUPT_DATA naming up to three of its
// nodes; `label` names the model. Time: O(n log n) in the nodes and edges.
bool sort_nodes(::onnx::GraphProto& g, const std::string& label, size_t max_depth);

}  // namespace nnp::core::onnx
