// Differentiable views (PyTorch's): a view op's result remembers the tensor
// it views, so that an in-place write to the view under autograd rewrites
// the base's history (CopySlices), and a view whose storage was written
// since its history was made gets a history from the base's current one.
#pragma once

#include "../tensor.hpp"

namespace nnp::core::autograd {

// Marks out, made from input by a view op, as a view of input's base. Only
// in grad mode: views made under no_grad stay plain aliases, as PyTorch's.
void track_view(Tensor& out, const Tensor& input);

// In-place writes to a tensor whose elements share memory (an expanded
// view) are refused, as PyTorch refuses them.
void check_no_internal_overlap(const Tensor& t);

// Whether t is a differentiable view of its base's data.
bool is_tracked_view(const Tensor& t);

// dst's data := value (value has dst's shape, dtype and device) for a
// tracked view dst while autograd records: the base's history becomes
// CopySlices (its old gradient outside the view, value's inside), dst's a
// view of it.
void assign_to_view(Tensor& dst, const TensorRef& value);

}  // namespace nnp::core::autograd
