// The depthwise form of the packed ConvInteger (cpu_conv_integer_depthwise.cpp),
// which conv2d_integer_pack and conv2d_integer_packed hand a layer of one
// channel a group; the caller has checked the views' dtypes and contiguity.
#pragma once

#include <cstdint>

#include "cpu_kernels.hpp"

namespace nnp::cpu {

// w [C, 1, kH, kW] with p.groups = C > 1.
bool is_depthwise(const nnp_view& w, const nnp_conv2d_params& p);
// As conv2d_integer_pack (zeros: w_zero's values, 1 or C).
nnp_status depthwise_integer_pack(const nnp_view& w, const nnp_view* w_zero, int64_t zeros, const nnp_conv2d_params& p,
                                  const nnp_view* packed, int64_t* bytes);
// Whether packed holds a depthwise form.
bool is_depthwise_packed(const nnp_view& packed);
// As conv2d_integer_packed, x_zero read already.
nnp_status depthwise_integer_packed(const nnp_view& x, int32_t x_zero, const nnp_view& packed,
                                    const nnp_conv2d_params& p, const nnp_view& out);

}  // namespace nnp::cpu
