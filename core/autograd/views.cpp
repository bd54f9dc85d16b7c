#include "views.hpp"

#include <mutex>
#include <vector>

#include "../error.hpp"
#include "../ops.hpp"
#include "record.hpp"

namespace nnp::core::autograd {
namespace {

Dims flat(int64_t n) {
  Dims d;
  d.ndim = 1;
  d.d[0] = n;
  return d;
}

// Where each element of view (in its own row-major order) lies among its
// contiguous base's elements, as an i64 tensor on the base's device.
TensorRef positions_in_base(const Tensor& view, const Tensor& base) {
  std::vector<int64_t> positions(static_cast<size_t>(view.numel));
  int64_t index[NNP_MAX_DIMS] = {};
  int64_t at = view.offset - base.offset;
  for (int64_t e = 0; e < view.numel; ++e) {
    positions[static_cast<size_t>(e)] = at;
    for (int32_t d = view.shape.ndim - 1; d >= 0; --d) {
      if (++index[d] < view.shape.d[d]) {
        at += view.strides.d[d];
        break;
      }
      at -= view.strides.d[d] * (view.shape.d[d] - 1);
      index[d] = 0;
    }
  }
  return core::from_host(positions.data(), flat(view.numel), NNP_I64, base.device);
}

// The view's history as a view of base: its gradient added into a zero
// gradient of the base at its positions (added, so that elements an
// expanded view repeats get the sum).
void record_view_of_base(Tensor& view, Tensor& base) {
  TensorRef positions = positions_in_base(view, base);
  const Dims base_shape = base.shape;
  record("AsStridedBackward", {&base}, {&view}, [positions, base_shape](Grads& g) {
    const int64_t n = base_shape.numel();
    TensorRef zeros = core::full(flat(n), 0.0, g[0]->dtype, g[0]->device);
    TensorRef values = core::reshape(*g[0], flat(positions->numel).d, 1);
    TensorRef full = core::scatter_add(*zeros, 0, *positions, *values);
    return Grads{core::reshape(*full, base_shape.d, base_shape.ndim)};
  });
}

}  // namespace

void track_view(Tensor& out, const Tensor& input) {
  if (!grad_enabled() || &out == &input || out.storage != input.storage) return;
  Tensor* base = is_tracked_view(input) ? input.view_base : const_cast<Tensor*>(&input);
  retain(base);
  if (out.view_base) release(out.view_base);
  out.view_base = base;
  out.view_version.store(out.storage->version.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void check_no_internal_overlap(const Tensor& t) {
  for (int32_t d = 0; d < t.shape.ndim; ++d)
    if (t.strides.d[d] == 0 && t.shape.d[d] > 1)
      fail(NNP_INVALID_ARGUMENT, "unsupported operation: more than one element of the written-to tensor (shape ",
           format_dims(t.shape),
           ", an expanded view) refers to a single memory location; clone() it before "
           "writing in place");
}

bool is_tracked_view(const Tensor& t) { return t.view_base && t.view_base->storage == t.storage; }

void refresh_view(const Tensor& view) {
  static std::mutex mutex;  // one rebuild per view when threads share it
  std::lock_guard<std::mutex> lock(mutex);
  Tensor& v = const_cast<Tensor&>(view);
  const uint64_t now = v.storage->version.load(std::memory_order_relaxed);
  if (v.view_version.load(std::memory_order_relaxed) == now) return;
  v.view_version.store(now, std::memory_order_relaxed);
  if (!is_tracked_view(v)) return;
  Tensor& base = *v.view_base;
  // A base without history has nothing to rebuild from; a strided base
  // (a DLPack import) keeps the view's history as it was.
  if (!base.autograd || !base.autograd->requires_grad || !base.is_contiguous()) return;
  record_view_of_base(v, base);
}

void assign_to_view(Tensor& dst, const TensorRef& value) {
  Tensor& base = *dst.view_base;
  if (requires_grad(base) && !base.autograd->grad_fn)
    fail(NNP_INVALID_ARGUMENT,
         "a view of a leaf Variable that requires grad is being used in an in-place operation "
         "(view shape ",
         format_dims(dst.shape), ", base shape ", format_dims(base.shape),
         "); write under no_grad (as optimizers and initialisers do), or to a clone()");
  if (!base.is_contiguous())
    fail(NNP_UNIMPLEMENTED,
         "an in-place operation on a view of a strided (non-contiguous) base while autograd "
         "records is not supported; clone() the base first");
  TensorRef positions = positions_in_base(dst, base);
  core::copy_into(dst, *value);
  const Dims base_shape = base.shape, view_shape = dst.shape;
  record("CopySlices", {&base, value.get()}, {&base}, [positions, base_shape, view_shape](Grads& g) {
    TensorRef all = core::reshape(*g[0], flat(base_shape.numel()).d, 1);
    TensorRef inside = core::gather(*all, 0, *positions);
    // The base's old values inside the view were overwritten: no gradient.
    TensorRef outside = core::scatter_add(*all, 0, *positions, *core::unary(NNP_UNARY_NEG, *inside));
    return Grads{core::reshape(*outside, base_shape.d, base_shape.ndim),
                 core::reshape(*inside, view_shape.d, view_shape.ndim)};
  });
  record_view_of_base(dst, base);
  dst.view_version.store(dst.storage->version.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace nnp::core::autograd
