#include "derived_tensor.hpp"

#include "../autograd/node.hpp"

namespace nnp::core::nn {

Fingerprint fingerprint(const std::vector<const Tensor*>& tensors) {
  Fingerprint out;
  out.reserve(tensors.size());
  for (const Tensor* t : tensors)
    out.emplace_back(t ? t->storage->id : 0, t ? t->storage->version.load(std::memory_order_relaxed) : 0);
  return out;
}

void bind_derived(DerivedTensor& d, const TensorRef& value, const Fingerprint* inputs) {
  Tensor& visible = *d.visible;
  const bool same_values = inputs && !d.inputs_seen.empty() && *inputs == d.inputs_seen &&
                           visible.shape == value->shape && visible.dtype == value->dtype &&
                           visible.device.backend == value->device.backend &&
                           visible.device.index == value->device.index;
  if (!same_values) replace_data(visible, *value);
  visible.autograd = value->autograd;
  d.inputs_seen = inputs ? *inputs : Fingerprint();
}

TensorRef take_leaf_identity(Tensor& t, const char* new_name) {
  TensorRef leaf = make_view(t, t.shape, t.strides, t.offset);
  leaf->is_view = false;  // it stands for the parameter itself, not a view of it
  leaf->autograd = std::move(t.autograd);
  if (leaf->autograd) {
    leaf->autograd->grad_accumulator.reset();  // the old one adds into t
    leaf->autograd->name = new_name;
  }
  return leaf;
}

void restore_leaf_identity(Tensor& t, Tensor& leaf, const Tensor& value) {
  replace_data(t, value);
  t.autograd = leaf.autograd;
  if (t.autograd) t.autograd->grad_accumulator.reset();
}

}  // namespace nnp::core::nn
