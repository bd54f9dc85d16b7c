// Adapters: views and compute, each recorded by autograd.
#include <algorithm>
#include <cstring>

#include "../autograd/functions.hpp"
#include "../dispatch/op_table.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status view(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out) {
  return handle_out(out, "view", [&] { return autograd::view(tensor_arg(t, "view"), shape, ndim); });
}
nnp_status reshape(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out) {
  return handle_out(out, "reshape", [&] { return autograd::reshape(tensor_arg(t, "reshape"), shape, ndim); });
}
nnp_status transpose(const nnp_tensor* t, int32_t dim0, int32_t dim1, nnp_tensor** out) {
  return handle_out(out, "transpose", [&] { return autograd::transpose(tensor_arg(t, "transpose"), dim0, dim1); });
}
nnp_status permute(const nnp_tensor* t, const int32_t* dims, int32_t ndim, nnp_tensor** out) {
  return handle_out(out, "permute", [&] { return autograd::permute(tensor_arg(t, "permute"), dims, ndim); });
}
nnp_status slice(const nnp_tensor* t, int32_t dim, int64_t start, int64_t end, int64_t step, nnp_tensor** out) {
  return handle_out(out, "slice", [&] { return autograd::slice(tensor_arg(t, "slice"), dim, start, end, step); });
}
nnp_status expand(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out) {
  return handle_out(out, "expand", [&] { return autograd::expand(tensor_arg(t, "expand"), shape, ndim); });
}
nnp_status squeeze(const nnp_tensor* t, int32_t dim, int32_t all_dims, nnp_tensor** out) {
  return handle_out(out, "squeeze", [&] { return autograd::squeeze(tensor_arg(t, "squeeze"), dim, all_dims != 0); });
}
nnp_status unsqueeze(const nnp_tensor* t, int32_t dim, nnp_tensor** out) {
  return handle_out(out, "unsqueeze", [&] { return autograd::unsqueeze(tensor_arg(t, "unsqueeze"), dim); });
}
nnp_status contiguous(const nnp_tensor* t, nnp_tensor** out) {
  return handle_out(out, "contiguous", [&] { return autograd::contiguous(tensor_arg(t, "contiguous")); });
}
nnp_status clone(const nnp_tensor* t, nnp_tensor** out) {
  return handle_out(out, "clone", [&] { return autograd::clone(tensor_arg(t, "clone")); });
}

nnp_status unary(nnp_unary_op op, const nnp_tensor* x, nnp_tensor** out) {
  return handle_out(out, "unary", [&] { return autograd::unary(op, tensor_arg(x, "unary", "x")); });
}
nnp_status binary(nnp_binary_op op, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return handle_out(out, "binary",
                    [&] { return autograd::binary(op, tensor_arg(a, "binary", "a"), tensor_arg(b, "binary", "b")); });
}
nnp_status where(const nnp_tensor* cond, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return handle_out(out, "where", [&] {
    return autograd::where(tensor_arg(cond, "where", "cond"), tensor_arg(a, "where", "a"), tensor_arg(b, "where", "b"));
  });
}
nnp_status reduce(nnp_reduce_op op, const nnp_tensor* x, const int32_t* dims, int32_t ndims, int32_t keepdim,
                  double correction, nnp_tensor** out) {
  return handle_out(out, "reduce", [&] {
    return autograd::reduce(op, tensor_arg(x, "reduce", "x"), dims, ndims, keepdim != 0, correction);
  });
}
nnp_status matmul(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return handle_out(out, "matmul",
                    [&] { return autograd::matmul(tensor_arg(a, "matmul", "a"), tensor_arg(b, "matmul", "b")); });
}
nnp_status softmax(const nnp_tensor* x, int32_t dim, int32_t log, nnp_tensor** out) {
  return handle_out(out, "softmax", [&] { return autograd::softmax(tensor_arg(x, "softmax", "x"), dim, log != 0); });
}
nnp_status cat(const nnp_tensor* const* tensors, int32_t count, int32_t dim, nnp_tensor** out) {
  return handle_out(out, "cat", [&] { return autograd::cat(tensors, count, dim); });
}
nnp_status index_select(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out) {
  return handle_out(out, "index_select", [&] {
    return autograd::index_select(tensor_arg(x, "index_select", "x"), dim, tensor_arg(index, "index_select", "index"));
  });
}
nnp_status gather(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out) {
  return handle_out(out, "gather", [&] {
    return autograd::gather(tensor_arg(x, "gather", "x"), dim, tensor_arg(index, "gather", "index"));
  });
}
nnp_status scatter_add(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, const nnp_tensor* src,
                       nnp_tensor** out) {
  return handle_out(out, "scatter_add", [&] {
    return autograd::scatter_add(tensor_arg(x, "scatter_add", "x"), dim, tensor_arg(index, "scatter_add", "index"),
                                 tensor_arg(src, "scatter_add", "src"));
  });
}

nnp_status conv2d_fused(const nnp_tensor* x, const nnp_tensor* w, const nnp_tensor* bias, const nnp_conv2d_params* p,
                        nnp_tensor** out) {
  return handle_out(out, "conv2d_fused", [&] {
    const nnp_conv2d_params& given = params_arg(p, NNP_CONV2D_PARAMS_SIZE_1_9, "conv2d_fused");
    nnp_conv2d_params params{};  // a caller's older struct: the fields it has, NONE for the activation
    std::memcpy(&params, &given, std::min(given.struct_size, sizeof params));
    params.struct_size = sizeof params;
    return conv2d_kernel(tensor_arg(x, "conv2d_fused", "x"), tensor_arg(w, "conv2d_fused", "w"),
                         bias ? &tensor_arg(bias, "conv2d_fused", "bias") : nullptr, params);
  });
}

nnp_status max_pool2d_fused(const nnp_tensor* x, const nnp_pool2d_params* p, int64_t out_h, int64_t out_w,
                            nnp_tensor** values, nnp_tensor** indices) {
  return guard([&] {
    nnp_tensor*& result = out_arg(values, "max_pool2d_fused", "values");
    if (indices) *indices = nullptr;
    const nnp_pool2d_params& params = params_arg(p, NNP_POOL2D_PARAMS_SIZE_1_10, "max_pool2d_fused");
    MaxPool2dResult r = max_pool2d_kernel(tensor_arg(x, "max_pool2d_fused", "x"), params, out_h, out_w, indices);
    if (indices) *indices = r.indices.take();
    result = r.values.take();
  });
}

nnp_status layer_norm_fused(const nnp_tensor* x, const nnp_tensor* weight, const nnp_tensor* bias,
                            int32_t normalized_ndim, double eps, nnp_tensor** out) {
  return handle_out(out, "layer_norm_fused", [&] {
    return layer_norm_kernel(tensor_arg(x, "layer_norm_fused", "x"),
                             weight ? &tensor_arg(weight, "layer_norm_fused", "weight") : nullptr,
                             bias ? &tensor_arg(bias, "layer_norm_fused", "bias") : nullptr, normalized_ndim, eps);
  });
}

int32_t op_count() { return static_cast<int32_t>(dispatch::OpId::COUNT); }
nnp_status op_info(int32_t i, nnp_op_info* out) {
  return guard([&] {
    info_arg(out, "op_info");
    if (i < 0 || i >= op_count())
      fail(NNP_NOT_FOUND, "op_info: no op ", i, " (the dispatcher knows ", op_count(), ", from 0)");
    const dispatch::OpSchema& op = dispatch::schema(static_cast<dispatch::OpId>(i));
    nnp_op_info full{};
    full.name = op.name;
    full.backward = op.backward ? op.backward : "";
    full.trace = static_cast<nnp_op_trace>(op.trace);
    write_info(out, full);
  });
}

}  // namespace nnp::core::api
