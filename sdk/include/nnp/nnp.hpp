// nnp.hpp - the header-only C++ API over the nnp.h table, all of it:
//   nnp/tensor.hpp      tensors, dtypes, devices, autograd on tensors
//   nnp/function.hpp    custom autograd functions
//   nnp/nn.hpp          nn::Module, containers, hooks, state dicts, layers
//   nnp/nn_init.hpp     nn::init
//   nnp/functional.hpp  nn::functional (F): activations, convolution, pooling, losses, ...
//   nnp/modules.hpp     typed layers: nn::Linear, nn::Conv2d(nn::Conv2dOptions(...)), ...
//   nnp/data.hpp        data::Dataset, TensorDataset, DataLoader, read_csv; Generator, randperm
//   nnp/optim.hpp       optimizers and schedulers
//   nnp/layer_type.hpp  declaring layer types (built-in and plugin layers)
//   nnp/memory.hpp      memory_allocated, max_memory_allocated, reset_peak_memory_stats
// Each compiles on its own; include just the ones a file needs, or this.
//
// Applications link libnnp and get the table from nnp_get_api(). Plugins do
// not link libnnp: they define NNP_NO_GET_API before including any of these
// and call nnp::set_api() with the table their init receives.
#pragma once

#include <nnp/autocast.hpp>
#include <nnp/captured_step.hpp>
#include <nnp/checkpoint.hpp>
#include <nnp/compile.hpp>
#include <nnp/data.hpp>
#include <nnp/function.hpp>
#include <nnp/functional.hpp>
#include <nnp/grad_scaler.hpp>
#include <nnp/layer_type.hpp>
#include <nnp/memory.hpp>
#include <nnp/modules.hpp>
#include <nnp/nn.hpp>
#include <nnp/nn_init.hpp>
#include <nnp/optim.hpp>
#include <nnp/tensor.hpp>
