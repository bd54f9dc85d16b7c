// nnp/modules.hpp - a typed holder for every built-in layer, as libtorch's
// (nnp::nn::Linear, nnp::nn::Conv2d(nnp::nn::Conv2dOptions(1, 16, 5).stride(2)), ...):
//   nnp/modules/linear.hpp         Linear, Identity, Flatten, Dropout, Embedding
//   nnp/modules/activation.hpp     ReLU, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax
//   nnp/modules/normalization.hpp  BatchNorm1d, BatchNorm2d, LayerNorm
//   nnp/modules/conv.hpp           Conv1d, Conv2d
//   nnp/modules/pooling.hpp        MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
//   nnp/modules/rnn.hpp            RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell
//   nnp/modules/transformer.hpp    MultiheadAttention, Transformer(Encoder|Decoder)(Layer), Transformer
//   nnp/modules/loss.hpp           MSELoss, L1Loss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss
// nnp/module_holder.hpp says how a plugin writes holders for its own layers.
#pragma once

#include <nnp/modules/activation.hpp>
#include <nnp/modules/conv.hpp>
#include <nnp/modules/linear.hpp>
#include <nnp/modules/loss.hpp>
#include <nnp/modules/normalization.hpp>
#include <nnp/modules/pooling.hpp>
#include <nnp/modules/rnn.hpp>
#include <nnp/modules/transformer.hpp>
