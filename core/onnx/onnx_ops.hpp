// The ONNX operators an imported graph runs (nn.GraphModule's nodes), each
// written with nnplug's own tensor ops, so an imported model trains and
// moves between devices as any other.
#pragma once

#include <nlohmann/json.hpp>
#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp::core::onnx {

// The op's outputs for its inputs (an omitted optional input is an undefined
// Tensor) and attributes (ONNX's, as JSON: numbers, strings, lists).
using OpFunction = std::vector<nnp::Tensor> (*)(const std::vector<nnp::Tensor>& in, const nlohmann::json& attrs);

// NULL when the op type is not one nnplug runs.
OpFunction find_op(const std::string& op_type);
// Every op type find_op knows, sorted (for messages and the README's table).
std::vector<std::string> known_ops();

}  // namespace nnp::core::onnx
