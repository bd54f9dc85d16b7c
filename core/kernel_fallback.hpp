// The kernels a backend declared it lacks (nnp_backend.missing_kernels, ABI
// 1.24) run on a fallback backend: cpu, or reference where cpu is missing
// or is the backend itself. The core's own kernel stands in the backend's
// table for each such slot; it copies the bytes each operand's view reaches
// to host memory, runs the fallback's kernel on them there and copies what
// it wrote back, each copy an NNP_PROFILE_COPY event while the profiler
// runs. So an op never asks which backend has its kernel: the table answers.
#pragma once

#include <nnp/plugin.h>

#include <string>

namespace nnp::core {

// Puts the stand-in into every slot of `missing` (bits of nnp_kernel_slot).
void install_kernel_fallbacks(nnp_kernels& kernels, uint32_t missing);

// "where, softmax": the slots of a set, in the table's order ("none" if empty).
std::string kernel_slot_text(uint32_t slots);

}  // namespace nnp::core
