// nnp/modules.hpp - a typed holder for every built-in layer, as libtorch's
// (nnp::nn::Linear, nnp::nn::Conv2d(nnp::nn::Conv2dOptions(1, 16, 5).stride(2)), ...):
//   nnp/modules/linear.hpp         Linear, Bilinear, Identity, Flatten, Unflatten, Dropout, Embedding, EmbeddingBag
//   nnp/modules/activation.hpp     every activation (ReLU, GELU, ELU, PReLU, Softmax, ...)
//   nnp/modules/normalization.hpp  BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, GroupNorm, LayerNorm, LocalResponseNorm
//   nnp/modules/conv.hpp           Conv1d/2d/3d, ConvTranspose1d/2d/3d, Fold, Unfold
//   nnp/modules/pooling.hpp        Max/Avg/LP/Adaptive pools 1d/2d/3d, FractionalMaxPool2d/3d, MaxUnpool1d/2d/3d
//   nnp/modules/upsampling.hpp     Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
//   nnp/modules/padding.hpp        Reflection/Replication/Circular/Zero/ConstantPad1d/2d/3d
//   nnp/modules/dropout.hpp        Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout
//   nnp/modules/distance.hpp       CosineSimilarity, PairwiseDistance
//   nnp/modules/vision.hpp         PixelShuffle, PixelUnshuffle, ChannelShuffle
//   nnp/modules/rnn.hpp            RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell
//   nnp/modules/transformer.hpp    MultiheadAttention, Transformer(Encoder|Decoder)(Layer), Transformer
//   nnp/modules/loss.hpp           every loss (MSELoss, CrossEntropyLoss, KLDivLoss, ...)
//   nnp/modules/adaptive_softmax.hpp  AdaptiveLogSoftmaxWithLoss (with log_prob, predict)
// nnp/module_holder.hpp says how a plugin writes holders for its own layers.
#pragma once

#include <nnp/modules/activation.hpp>
#include <nnp/modules/adaptive_softmax.hpp>
#include <nnp/modules/conv.hpp>
#include <nnp/modules/distance.hpp>
#include <nnp/modules/dropout.hpp>
#include <nnp/modules/graph.hpp>
#include <nnp/modules/linear.hpp>
#include <nnp/modules/loss.hpp>
#include <nnp/modules/normalization.hpp>
#include <nnp/modules/padding.hpp>
#include <nnp/modules/pooling.hpp>
#include <nnp/modules/quantization.hpp>
#include <nnp/modules/rnn.hpp>
#include <nnp/modules/transformer.hpp>
#include <nnp/modules/upsampling.hpp>
#include <nnp/modules/vision.hpp>
