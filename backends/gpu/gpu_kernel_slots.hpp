// The kernel slots the shared GPU backend fills: gpu_kernels.cu sets exactly
// these, and the deferred plugin (deferred_backend_plugin.cpp) forwards
// exactly these, so the table the core sees offers what the device library
// has. An optional slot the GPU kernels gain goes here.
#pragma once

#include <nnp/plugin.h>

#define NNP_GPU_KERNEL_SLOTS(X) NNP_KERNELS_REQUIRED_SLOTS(X)
