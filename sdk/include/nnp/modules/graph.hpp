// nnp/modules/graph.hpp - typed nn.GraphModule: a dataflow graph of ops and
// layers, what nnp::onnx::load returns (its `graph` program is described in
// the README's ONNX section).
#pragma once

#include <nnp/modules/linear.hpp>
#include <string>

namespace nnp::nn {

struct GraphModuleImpl : Layer {
  explicit GraphModuleImpl(const std::string& graph) : Layer("nn.GraphModule", Attrs().set("graph", graph)) {}
  Tensor forward(const Tensor& x) { return call({x}); }
};
NNP_MODULE(GraphModule);

}  // namespace nnp::nn
