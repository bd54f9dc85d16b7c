// nn.GraphModule, the module ONNX import builds (graph_module.cpp).
#pragma once

#include <string>
#include <vector>

#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"

namespace nnp::core::onnx {

void register_graph_module(nn::LayerRegistry& registry);

// What graph mode's plan for m (an nn.GraphModule) runs, and what its
// passes did: one line each.
std::vector<std::string> graph_plan_notes(const nn::Module& m);
// The device that runs the nodes a backend that compiles graphs leaves
// (cpu unless set; nnp_compile_options.fallback).
void set_graph_fallback(nn::Module& m, nnp_device device);
// m runs its program as written from now on, even without gradients: a
// graph run once (export's batch check) is not worth a plan's folded and
// packed weights.
void set_graph_as_written(nn::Module& m);

}  // namespace nnp::core::onnx
