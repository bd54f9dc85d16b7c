// The cpu backend's convolutions through oneDNN: the library
// lib/nnplug/devices/libnnp_cpu_onednn.so (onednn/onednn_conv_plugin.cpp),
// opened at the first convolution, runs each chunk of the batch
// single-threaded; this side splits the batch over the pool and adds up the
// weight gradients of the chunks. Each call returns false, having written
// nothing the caller depends on, when the library is absent, turned off
// (NNP_CPU_ONEDNN=0), has no JIT kernel for the geometry on this processor,
// or fails: the caller then runs its im2col path, which overwrites every
// output.
#pragma once

#include <nnp/plugin.h>

namespace nnp::cpu {

// What convolves here, for the device's description: "oneDNN 2.6.3", or
// "im2col + OpenBLAS (why not oneDNN)". Opens the library.
const char* convolution_engine();

// out = conv2d(x, w) + bias (bias may be NULL); all contiguous f32.
bool onednn_conv2d(const nnp_view& x, const nnp_view& w, const nnp_view* bias, const nnp_conv2d_params& p,
                   const nnp_view& out);

// conv2d_pack's and conv2d_packed's oneDNN form, for the geometries the
// backend's own packed convolutions do not take (groups 1, no pooling):
// the weight in oneDNN's layout, once per plan, split in the channel parts
// that a batch smaller than the pool runs as separate tasks. *bytes = 0
// where there is none (no library, or no packed form for the geometry).
nnp_status onednn_conv2d_pack(const nnp_view& w, const nnp_conv2d_params& p, const int64_t* pool,
                              const nnp_view* packed, int64_t* bytes);
// Whether packed is onednn_conv2d_pack's form (by its header).
bool is_onednn_packed(const nnp_view& packed);
nnp_status onednn_conv2d_packed(const nnp_view& x, const nnp_view& packed, const nnp_view* bias,
                                const nnp_conv2d_params& p, const int64_t* pool, const nnp_view& out);

// grad_x and grad_w (either may be NULL, not both) of that convolution.
bool onednn_conv2d_backward(const nnp_view& x, const nnp_view& w, const nnp_view& grad_out, const nnp_conv2d_params& p,
                            const nnp_view* grad_x, const nnp_view* grad_w);

}  // namespace nnp::cpu
