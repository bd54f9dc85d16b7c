// The tensor a layer reads under a pruned or parametrized name (DerivedTensor
// in module.hpp), and the moves of leaf identity that pruning and
// parametrizations make: the layer keeps its tensor object, which from then
// on shows a computed value, while a new leaf holds the original.
#pragma once

#include <utility>
#include <vector>

#include "module.hpp"

namespace nnp::core::nn {

using Fingerprint = std::vector<std::pair<uint64_t, uint64_t>>;

// (storage id, version) of each tensor: equal fingerprints mean equal values.
Fingerprint fingerprint(const std::vector<const Tensor*>& tensors);

// Makes d.visible show value, its data and its history. `inputs` is the
// fingerprint of what value is a function of, when it is one (pruning's orig
// and mask): when they are what visible was last computed from, visible's
// data already equals value's and only the history moves, so a backward that
// saved visible in an earlier call of the same pass (a layer used twice)
// still finds the data it saved. Null (a parametrization: any module, maybe
// random) always rebinds the data.
void bind_derived(DerivedTensor& d, const TensorRef& value, const Fingerprint* inputs);

// A new leaf sharing t's data that takes over t's leaf identity (requires
// grad, .grad, hooks); t is left without autograd state, ready to be bound.
TensorRef take_leaf_identity(Tensor& t, const char* new_name);

// The reverse: t becomes a leaf again with leaf's identity and value's data.
void restore_leaf_identity(Tensor& t, Tensor& leaf, const Tensor& value);

}  // namespace nnp::core::nn
