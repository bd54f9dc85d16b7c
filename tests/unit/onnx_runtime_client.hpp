// ONNX Runtime (npm onnxruntime-node, installed by scripts/setup.sh into
// tests/onnx_runtime) as the ONNX tests' outside client: runs a model file
// on one input through node, for comparison with nnplug's outputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace nnp::test {

// Why ONNX Runtime cannot run here, or "".
inline std::string ort_unavailable() {
  namespace fs = std::filesystem;
  const fs::path client = fs::path(NNP_ORT_CLIENT_DIR) / "node_modules" / "onnxruntime-node" / "package.json";
  if (!fs::exists(client))
    return "onnxruntime-node is not installed in " NNP_ORT_CLIENT_DIR " (scripts/setup.sh installs it with npm)";
  if (std::system("node --version > /dev/null 2>&1") != 0) return "node is not on PATH";
  return "";
}

// The model's first output in ONNX Runtime for input "input" (scratch: a
// path prefix for the files exchanged with node).
inline std::vector<float> ort_run(const std::string& model, const Tensor& input, const std::string& scratch) {
  using json = nlohmann::json;
  const std::string in_path = scratch + ".in.json", out_path = scratch + ".out.json";
  json given;
  given["input"]["dims"] = input.shape();
  given["input"]["data"] = input.contiguous().to_vector<float>();
  std::ofstream(in_path) << given.dump();
  const std::string command =
      std::string("node ") + NNP_ORT_CLIENT_DIR + "/run_model.js " + model + " 1 " + in_path + " > " + out_path;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(out_path);
  json out = json::parse(in);
  std::filesystem::remove(in_path);
  std::filesystem::remove(out_path);
  return out["output"]["data"].get<std::vector<float>>();
}

}  // namespace nnp::test
