// torch.optim's update rules (SGD, Adam, ...), the built-in library's
// optimizer algorithms: library.cpp registers each through the table
// (nnp_api.register_optimizer), as a plugin registers its own.
#pragma once

#include <nnp/optimizer_algorithm.hpp>
#include <vector>

namespace nnp::library::optim {

std::vector<nnp::optim::OptimizerAlgorithm> algorithms();

}  // namespace nnp::library::optim
