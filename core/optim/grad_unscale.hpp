// A gradient scaler's unscale (PyTorch's
// _amp_foreach_non_finite_check_and_unscale_): every gradient multiplied by
// the inverse scale in place, and found_inf set to 1 where any element of
// any was inf or NaN before. One pass a gradient through the backend's
// unscale_check kernel (nnp_kernels 1.27), else composed of core ops.
#pragma once

#include <vector>

#include "../tensor.hpp"

namespace nnp::core::optim {

// found_inf: an f32 tensor of one element on the gradients' device.
void unscale_grads(const std::vector<const Tensor*>& grads, double inv_scale, Tensor& found_inf);

}  // namespace nnp::core::optim
