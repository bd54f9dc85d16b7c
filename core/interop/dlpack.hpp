// DLPack exchange: nnplug tensors handed to other libraries and theirs taken
// in, both without copying (DLPack 0.6 structs and 1.0's versioned form).
#pragma once

#include "../tensor.hpp"
#include "dlpack_v1.hpp"

namespace nnp::core::interop {

DLManagedTensor* to_dlpack(const Tensor& t);
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t);

// On success the returned tensor owns src (its deleter runs when the last
// view is released); on failure src is left to the caller.
TensorRef from_dlpack(DLManagedTensor* src);
TensorRef from_dlpack_versioned(DLManagedTensorVersioned* src);

}  // namespace nnp::core::interop
