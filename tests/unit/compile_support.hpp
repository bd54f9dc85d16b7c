// What the compile tests and the GPU tests both check of nnp::compile: W1's,
// W3's and W7's models and a convolution with a BatchNorm2d, compiled on
// `device`, give their eager outputs within 1e-5 at the capture's batch and
// another, by the captured plan.
#pragma once

#include <gtest/gtest.h>

#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "../../tools/bench/workload_models.hpp"
#include "test_support.hpp"

namespace nnp::test {

inline void expect_workloads_compile_to_eager(const Device& device) {
  manual_seed(21);
  struct Case {
    nn::ModuleHandle model;
    Tensor example, other_batch;
  };
  // A convolution with a BatchNorm2d after it (its statistics moved off 0
  // and 1 by a forward pass in training mode): exported as Conv and
  // BatchNormalization, folded by the plan.
  nn::ModuleHandle conv_bn = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3, "padding": 1},
      {"type": "nn.BatchNorm2d", "num_features": 8}, {"type": "nn.ReLU"}]})");
  conv_bn(randn({6, 3, 10, 10}) * 3.0 + 1.0);
  std::vector<Case> cases = {{bench::w1_model(), randn({8, 784}), randn({3, 784})},
                             {bench::w3_model(), randn({4, 1, 28, 28}), randn({9, 1, 28, 28})},
                             {bench::w7_model(), randn({2, 16, 128}), randn({5, 16, 128})},
                             {conv_bn, randn({2, 3, 10, 10}), randn({4, 3, 10, 10})}};
  for (Case& c : cases) {
    c.model.to(device);
    c.model.eval();
    nn::ModuleHandle compiled = compile(c.model, {c.example.to(device)});
    NoGradGuard no_grad;
    for (const Tensor& x : {c.example.to(device), c.other_batch.to(device)}) {
      const Tensor got = compiled(x);
      EXPECT_EQ(got.device(), device);
      expect_close(got.to(Device::cpu()), c.model(x).to(Device::cpu()), 1e-5);
      const std::string explained = compile_explain(compiled);
      EXPECT_NE(explained.find("last call: the captured plan"), std::string::npos) << explained;
    }
  }
}

}  // namespace nnp::test
