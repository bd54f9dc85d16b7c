// nnp/functional.hpp - PyTorch's torch.nn.functional in C++, as libtorch
// spells it (`namespace F = nnp::nn::functional;`, also nnp::nn::F):
//   nnp/functional/activation.hpp     relu, leaky_relu, gelu, silu, sigmoid, tanh, softmax, log_softmax
//   nnp/functional/linear.hpp         linear, bilinear, dropout, embedding, one_hot
//   nnp/functional/embedding_bag.hpp  embedding_bag (sum, mean, max)
//   nnp/functional/dropout.hpp        dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout
//   nnp/functional/distance.hpp       cosine_similarity, pairwise_distance
//   nnp/functional/vision.hpp         pixel_shuffle, pixel_unshuffle, channel_shuffle
//   nnp/functional/normalization.hpp  batch_norm, instance_norm, group_norm, layer_norm, local_response_norm,
//                                     normalize
//   nnp/functional/padding.hpp        pad (constant, reflect, replicate, circular)
//   nnp/functional/conv.hpp           conv1d, conv2d
//   nnp/functional/conv_nd.hpp        conv3d, conv_transpose1d/2d/3d, unfold, fold
//   nnp/functional/pooling.hpp        max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool2d
//   nnp/functional/pooling_nd.hpp     max_pool3d, avg_pool3d, adaptive_avg/max_pool1d/2d/3d, lp_pool1d/2d
//   nnp/functional/fractional_pooling.hpp  fractional_max_pool2d/3d (+ _with_indices)
//   nnp/functional/unpooling.hpp      max_unpool1d/2d/3d
//   nnp/functional/upsampling.hpp     interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear)
//   nnp/functional/attention.hpp      scaled_dot_product_attention, multi_head_attention_forward
//   nnp/functional/loss.hpp           mse_loss, l1_loss, nll_loss, cross_entropy, binary_cross_entropy(_with_logits),
//                                     smooth_l1, huber, kl_div, poisson_nll, soft_margin, hinge_embedding, ...
//   nnp/functional/margin_loss.hpp    cosine_embedding, multi_margin, multilabel_margin,
//   triplet_margin(_with_distance),
//                                     gaussian_nll
//   nnp/functional/ctc_loss.hpp       ctc_loss
// The built-in layers call these functions: one implementation each.
#pragma once

#include <nnp/functional/activation.hpp>
#include <nnp/functional/attention.hpp>
#include <nnp/functional/conv.hpp>
#include <nnp/functional/conv_nd.hpp>
#include <nnp/functional/ctc_loss.hpp>
#include <nnp/functional/distance.hpp>
#include <nnp/functional/dropout.hpp>
#include <nnp/functional/embedding_bag.hpp>
#include <nnp/functional/fractional_pooling.hpp>
#include <nnp/functional/linear.hpp>
#include <nnp/functional/loss.hpp>
#include <nnp/functional/margin_loss.hpp>
#include <nnp/functional/normalization.hpp>
#include <nnp/functional/padding.hpp>
#include <nnp/functional/pooling.hpp>
#include <nnp/functional/pooling_nd.hpp>
#include <nnp/functional/unpooling.hpp>
#include <nnp/functional/upsampling.hpp>
#include <nnp/functional/vision.hpp>

namespace nnp::nn {
namespace F = functional;
}  // namespace nnp::nn
