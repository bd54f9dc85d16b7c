// nnp/functional/unpooling.hpp - max_unpool1d/2d/3d (PyTorch's
// F.max_unpool*): the inverse of max pooling with return_indices, each
// value put back at the flat position (within its [*sizes] plane) that its
// index names, zeros elsewhere. A scatter, so the gradient is a gather.
// Bounds: the indices are read on the host once (as PyTorch checks them).
#pragma once

#include <nnp/autocast.hpp>
#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn::functional {

template <size_t D>
struct MaxUnpoolFuncOptions {
  MaxUnpoolFuncOptions(ExpandingArray<D> kernel_size)  // NOLINT: implicit, as libtorch's
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride);  // default: kernel_size
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(std::optional<std::vector<int64_t>>, output_size);  // the last D sizes (or all of them)
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;

namespace detail {

template <size_t D>
Tensor max_unpool(const std::string& who, const Tensor& input, const Tensor& indices,
                  const MaxUnpoolFuncOptions<D>& o) {
  const int32_t dims = static_cast<int32_t>(D);
  if (input.ndim() != dims + 1 && input.ndim() != dims + 2)
    throw Error(NNP_SHAPE_MISMATCH, who + ": expected a " + std::to_string(dims + 1) + "-D or " +
                                        std::to_string(dims + 2) + "-D input, got " +
                                        nnp::detail::shape_text(input.shape()));
  if (indices.shape() != input.shape() || (indices.dtype() != Dtype::i64 && indices.dtype() != Dtype::i32))
    throw Error(NNP_SHAPE_MISMATCH, who + ": indices must be i64 of the input's shape " +
                                        nnp::detail::shape_text(input.shape()) + ", got " +
                                        nnp::detail::shape_text(indices.shape()));
  std::vector<int64_t> out;
  for (int32_t i = 0; i < dims; ++i) {
    const size_t d = static_cast<size_t>(i);
    if (o.kernel_size()[d] < 1 || o.stride()[d] < 1 || o.padding()[d] < 0)
      throw Error(NNP_INVALID_ARGUMENT, who + ": kernel_size and stride must be >= 1 and padding >= 0");
    const __int128 size = (__int128{input.size(input.ndim() - dims + i)} - 1) * o.stride()[d] -
                          2 * __int128{o.padding()[d]} + o.kernel_size()[d];
    if (size < 1 || size > (int64_t{1} << 40))
      throw Error(NNP_SHAPE_MISMATCH, who + ": the default output size is not within 1 to 2^40");
    out.push_back(static_cast<int64_t>(size));
  }
  if (o.output_size()) {
    std::vector<int64_t> given = *o.output_size();
    if (given.size() == static_cast<size_t>(input.ndim())) given.erase(given.begin(), given.end() - dims);
    if (given.size() != static_cast<size_t>(dims))
      throw Error(NNP_INVALID_ARGUMENT, who + ": output_size must have " + std::to_string(dims) + " or " +
                                            std::to_string(input.ndim()) + " elements");
    for (int32_t i = 0; i < dims; ++i) {
      const size_t d = static_cast<size_t>(i);
      if (given[d] < out[d] - o.stride()[d] || given[d] > out[d] + o.stride()[d])
        throw Error(NNP_INVALID_ARGUMENT, who + ": output_size " + nnp::detail::shape_text(given) +
                                              " must lie within the default " + nnp::detail::shape_text(out) +
                                              " plus or minus the stride");
    }
    out = given;
  }
  int64_t plane = 1;
  for (int64_t s : out) plane *= s;
  const Tensor x = input.ndim() == dims + 2 ? input : input.unsqueeze(0);
  const Tensor at = indices.ndim() == dims + 2 ? indices : indices.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1);
  // Overlapping windows name a position more than once: as PyTorch's
  // scatter, the last value is kept, and the gradient (a gather) still
  // reaches every entry; the others add x - x.detach(), zero forward.
  const std::vector<int64_t> host = at.to(Device::cpu(), Dtype::i64).contiguous().to_vector<int64_t>();
  const int64_t per_plane = n * c > 0 ? static_cast<int64_t>(host.size()) / (n * c) : 0;
  std::vector<int64_t> seen(static_cast<size_t>(plane), -1);
  std::vector<uint8_t> last(host.size(), 0);
  bool repeated = false;
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = per_plane - 1; i >= 0; --i) {
      const size_t e = static_cast<size_t>(p * per_plane + i);
      const int64_t v = host[e];
      if (v < 0 || v >= plane)
        throw Error(NNP_INVALID_ARGUMENT, who + ": found an invalid max index " + std::to_string(v) +
                                              " (output volumes are of size " + std::to_string(plane) + ")");
      last[e] = seen[static_cast<size_t>(v)] != p;
      repeated = repeated || !last[e];
      seen[static_cast<size_t>(v)] = p;
    }
  Tensor src = x.reshape({n, c, -1});
  if (repeated) {
    const Tensor keep = from_vector(std::vector<int64_t>(last.begin(), last.end()), x.device())
                            .reshape({n, c, -1})
                            .ne(full({}, 0, Dtype::i64, x.device()));
    src = nnp::where(keep, src, src - src.detach());
  }
  Tensor y = zeros({n, c, plane}, x.dtype(), x.device()).scatter_add(2, at.reshape({n, c, -1}).to(Dtype::i64), src);
  Shape shape{n, c};
  shape.insert(shape.end(), out.begin(), out.end());
  y = y.reshape(shape);
  return input.ndim() == dims + 2 ? y : y.squeeze(0);
}

}  // namespace detail

inline Tensor max_unpool1d(const Tensor& x, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  return detail::max_unpool<1>("max_unpool1d", x, indices, o);
}
inline Tensor max_unpool2d(Tensor x, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  nnp::detail::autocast_args("max_unpool2d", {&x});
  return detail::max_unpool<2>("max_unpool2d", x, indices, o);
}
inline Tensor max_unpool3d(Tensor x, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  nnp::detail::autocast_args("max_unpool3d", {&x});
  return detail::max_unpool<3>("max_unpool3d", x, indices, o);
}

}  // namespace nnp::nn::functional
