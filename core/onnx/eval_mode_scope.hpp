// Eval mode for a module tree while the scope lives (export traces and
// checks in eval mode), every module's own mode back afterwards.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "../nn/module.hpp"

namespace nnp::core::onnx {

class EvalModeScope {
 public:
  explicit EvalModeScope(nn::Module& root) {
    std::function<void(nn::Module&)> visit = [&](nn::Module& m) {
      modes_.emplace_back(ModuleRef::share(&m), m.training);
      m.training = false;
      for (auto& [name, child] : m.children)
        if (child) visit(*child);
    };
    visit(root);
  }
  ~EvalModeScope() {
    for (auto& [module, mode] : modes_) module->training = mode;
  }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  std::vector<std::pair<ModuleRef, bool>> modes_;
};

}  // namespace nnp::core::onnx
