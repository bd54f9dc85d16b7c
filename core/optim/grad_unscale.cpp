#include "grad_unscale.hpp"

#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core::optim {
namespace {

// The composition: v * 0 is NaN exactly where v is inf or NaN, so the sum
// of the products is NaN when any element is; found = max(found, that).
void unscale_composed(const Tensor& g, double inv_scale, Tensor& found) {
  TensorRef zero = full(Dims{}, 0.0, g.dtype, g.device);
  TensorRef probe = reduce(NNP_REDUCE_SUM, *binary(NNP_BINARY_MUL, g, *zero), nullptr, 0, false, 0);
  TensorRef bad = to(*binary(NNP_BINARY_NE, *probe, *probe), found.device, NNP_F32);
  binary_into(NNP_BINARY_MAXIMUM, found, *bad, found);
  TensorRef inv = full(Dims{}, inv_scale, g.dtype, g.device);
  binary_into(NNP_BINARY_MUL, g, *inv, const_cast<Tensor&>(g));
}

struct UnscaleGradsOp {
  const Tensor* const* tensors;
  int32_t count;
  double inv_scale;
  Tensor* found;
  dispatch::OpId id() const { return dispatch::OpId::AMP_UNSCALE; }
  dispatch::Inputs inputs() const { return {tensors, count}; }
  void compute() const {
    const nnp_view vf = kernel_view(*found);
    for (int32_t i = 0; i < count; ++i) {
      const Tensor& g = *tensors[i];
      if (g.numel == 0) continue;
      const auto kernel = g.backend().unscale_check();
      if (kernel && (g.dtype == NNP_F32 || g.dtype == NNP_F64) && g.is_contiguous()) {
        const nnp_view vg = kernel_view(g);
        const nnp_status status = kernel(&kernel_ctx(g), &vg, inv_scale, &vf);
        if (status != NNP_DTYPE_MISMATCH) {
          run_kernel(g, "unscale_check", status);
          continue;
        }
      }
      unscale_composed(g, inv_scale, *found);
    }
    found->storage->version.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace

void unscale_grads(const std::vector<const Tensor*>& grads, double inv_scale, Tensor& found_inf) {
  if (found_inf.dtype != NNP_F32 || found_inf.numel != 1 || !found_inf.is_contiguous())
    fail(NNP_INVALID_ARGUMENT, "unscale: found_inf must be a contiguous f32 tensor of one element, got ",
         dtype_name(found_inf.dtype), " ", format_dims(found_inf.shape));
  for (const Tensor* g : grads) {
    if (!is_floating(g->dtype))
      fail(NNP_DTYPE_MISMATCH, "unscale: gradients are floating-point, got ", dtype_name(g->dtype), " ",
           format_dims(g->shape));
    check_same_device("unscale", *g, found_inf);
    if (g->storage == found_inf.storage)
      fail(NNP_INVALID_ARGUMENT, "unscale: found_inf shares memory with a gradient; give it its own tensor");
  }
  dispatch::dispatch(UnscaleGradsOp{grads.data(), static_cast<int32_t>(grads.size()), inv_scale, &found_inf},
                     dispatch::Face::PUBLIC);  // an export refuses it, naming it
}

}  // namespace nnp::core::optim
