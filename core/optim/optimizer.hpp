// torch.optim's optimizers as a core object: parameter groups with options,
// per-parameter state, step, zero_grad and a state dict. The update rules are
// the registered algorithms' (algorithm_registry.hpp): the built-in library's
// (library/optim/) or a plugin's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../nn/named_list.hpp"
#include "../tensor.hpp"
#include "algorithm_registry.hpp"

struct nnp_optimizer {
  using State = std::map<std::string, nnp::core::TensorRef>;
  struct Group {
    std::vector<nnp::core::TensorRef> params;
    std::vector<double> options;  // in the algorithm's option order
  };
  const nnp::core::optim::Algorithm* algorithm = nullptr;  // registry entries live until exit
  std::vector<Group> groups;
  // Per parameter (by identity, which Module::to keeps): named state tensors.
  std::map<const nnp_tensor*, State> state;
};

namespace nnp::core::optim {

using Optimizer = nnp_optimizer;

std::unique_ptr<Optimizer> create(const std::string& kind, const nnp_list& params, const nnp_attrs* options);
void add_param_group(Optimizer& opt, const nnp_list& params, const nnp_attrs* options);
// Option `name` of parameter group `group` (lr, momentum, ...); NNP_NOT_FOUND
// for an option the optimizer does not have.
double get_option(const Optimizer& opt, int32_t group, const std::string& name);
void set_option(Optimizer& opt, int32_t group, const std::string& name, double value);
void step(Optimizer& opt);
void zero_grad(Optimizer& opt, bool set_to_none);
void state_dict(const Optimizer& opt, nnp_list& out);
void load_state_dict(Optimizer& opt, const nnp_list& state);
double clip_grad_norm(const nnp_list& params, double max_norm, double norm_type);

}  // namespace nnp::core::optim
