// ONNX export: a module traced on example inputs, written as a checked
// ONNX model (nnp_api.onnx_export).
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <vector>

#include "../nn/module.hpp"

namespace nnp::core::onnx {

struct ExportOptions {
  int64_t opset = 17;
  bool fixed_batch = false;
  std::vector<std::string> input_names, output_names;  // empty: "input", "input1", ...
};

// True when the file keeps the batch symbolic: dimension 0 of each input
// whose size there is the first input's may change.
bool export_model(nn::Module& module, const std::vector<TensorRef>& inputs, const std::string& path,
                  const ExportOptions& options);

}  // namespace nnp::core::onnx
