#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

// NumPy's broadcast of the operands' shapes.
nnp::Shape broadcast_shape(const Tensors& operands, const char* op) {
  size_t rank = 0;
  for (const Tensor& t : operands) rank = std::max(rank, static_cast<size_t>(t.ndim()));
  nnp::Shape out(rank, 1);
  for (const Tensor& t : operands) {
    const size_t offset = rank - static_cast<size_t>(t.ndim());
    for (int32_t d = 0; d < t.ndim(); ++d) {
      const int64_t size = t.size(d);
      int64_t& o = out[offset + static_cast<size_t>(d)];
      if (size == o || size == 1) continue;
      if (o != 1) invalid(std::string(op) + ": the operands' shapes do not broadcast");
      o = size;
    }
  }
  return out;
}

}  // namespace

Tensor host_elementwise(const Tensors& operands, const std::function<double(const std::vector<double>&)>& real,
                        const std::function<int64_t(const std::vector<int64_t>&)>& integer, const char* op,
                        std::optional<Dtype> dtype) {
  const Tensor& first = operands.at(0);
  const Dtype out_dtype = dtype.value_or(first.dtype());
  const nnp::Shape shape = broadcast_shape(operands, op);
  const bool as_integer = integral(first) || first.dtype() == Dtype::boolean;
  if ((as_integer && !integer) || (!as_integer && !real))
    invalid(std::string(op) + ": not defined for " + nnp::dtype_name(first.dtype()));
  size_t count = 1;
  for (int64_t size : shape) count *= static_cast<size_t>(size);
  auto compute = [&](auto read, const auto& fn) {
    using Value = typename decltype(read(first))::value_type;
    std::vector<std::vector<Value>> values;
    for (const Tensor& t : operands) values.push_back(read(t.expand(shape)));
    std::vector<Value> out(count), args(operands.size());
    for (size_t i = 0; i < count; ++i) {
      for (size_t k = 0; k < values.size(); ++k) args[k] = values[k][i];
      out[i] = fn(args);
    }
    return nnp::from_vector(out, shape, first.device()).to(out_dtype);
  };
  return as_integer ? compute(host_ints, integer) : compute(host_reals, real);
}

}  // namespace nnp::library::onnx
