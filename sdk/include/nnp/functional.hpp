// nnp/functional.hpp - PyTorch's torch.nn.functional in C++, as libtorch
// spells it (`namespace F = nnp::nn::functional;`, also nnp::nn::F):
//   nnp/functional/activation.hpp     relu, leaky_relu, gelu, silu, sigmoid, tanh, softmax, log_softmax
//   nnp/functional/linear.hpp         linear, dropout, embedding, one_hot
//   nnp/functional/normalization.hpp  batch_norm, layer_norm, normalize
//   nnp/functional/padding.hpp        pad (constant, reflect, replicate, circular)
//   nnp/functional/conv.hpp           conv1d, conv2d
//   nnp/functional/pooling.hpp        max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool2d
//   nnp/functional/attention.hpp      scaled_dot_product_attention, multi_head_attention_forward
//   nnp/functional/loss.hpp           mse_loss, l1_loss, nll_loss, cross_entropy, binary_cross_entropy(_with_logits)
// The built-in layers call these functions: one implementation each.
#pragma once

#include <nnp/functional/activation.hpp>
#include <nnp/functional/attention.hpp>
#include <nnp/functional/conv.hpp>
#include <nnp/functional/linear.hpp>
#include <nnp/functional/loss.hpp>
#include <nnp/functional/normalization.hpp>
#include <nnp/functional/padding.hpp>
#include <nnp/functional/pooling.hpp>

namespace nnp::nn {
namespace F = functional;
}  // namespace nnp::nn
