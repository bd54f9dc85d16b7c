// Tensor creation, random tensors included (from the device's generator).
#include <cmath>
#include <vector>

#include "../capture/tape.hpp"
#include "../device.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../host_convert.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"
#include "../random_state.hpp"

// The ops' own work (their compute), called by their descriptions below.
namespace nnp::core::compute {
TensorRef full(const Dims& shape, double value, nnp_dtype dtype, nnp_device device);
TensorRef arange(double start, double end, double step, nnp_dtype dtype, nnp_device device);
TensorRef from_host(const void* data, const Dims& shape, nnp_dtype dtype, nnp_device device);
TensorRef random(nnp_random_kind kind, double a, double b, const Dims& shape, nnp_dtype dtype, nnp_device device);
}  // namespace nnp::core::compute

namespace nnp::core {
TensorRef empty(const Dims& shape, nnp_dtype dtype, nnp_device device) {
  check_dtype("empty", dtype);
  check_device("empty", device);
  return make_tensor(shape, dtype, device);
}

TensorRef compute::full(const Dims& shape, double value, nnp_dtype dtype, nnp_device device) {
  TensorRef t = empty(shape, dtype, device);
  if (t->numel == 0) return t;
  nnp_view v = kernel_view(*t);
  run_kernel(*t, "full", t->backend().kernels().fill(&kernel_ctx(*t), &v, value));
  return t;
}

TensorRef compute::arange(double start, double end, double step, nnp_dtype dtype, nnp_device device) {
  check_dtype("arange", dtype);
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    fail(NNP_INVALID_ARGUMENT, "arange: start, end and step must be finite (got ", start, ", ", end, ", ", step, ")");
  if (step == 0) fail(NNP_INVALID_ARGUMENT, "arange: step must be nonzero");
  if ((step > 0 && end < start) || (step < 0 && end > start))
    fail(NNP_INVALID_ARGUMENT, "arange: upper bound ", end, " and lower bound ", start,
         " are inconsistent with the sign of step ", step);
  if (dtype == NNP_BOOL) fail(NNP_DTYPE_MISMATCH, "arange: bool is not a numeric dtype");
  double count = std::ceil((end - start) / step);
  if (count > 1e12) fail(NNP_OUT_OF_MEMORY, "arange: ", count, " elements is too many");
  Dims shape;
  shape.ndim = 1;
  shape.d[0] = static_cast<int64_t>(count);
  std::vector<unsigned char> host(static_cast<size_t>(shape.d[0]) * dtype_size(dtype));
  for (int64_t i = 0; i < shape.d[0]; ++i) store_host(dtype, host.data(), i, start + static_cast<double>(i) * step);
  return compute::from_host(host.data(), shape, dtype, device);
}

TensorRef compute::from_host(const void* data, const Dims& shape, nnp_dtype dtype, nnp_device device) {
  TensorRef t = empty(shape, dtype, device);
  size_t bytes = t->storage->bytes;
  if (bytes == 0) return t;
  if (data == nullptr) fail(NNP_INVALID_ARGUMENT, "from_host: data is NULL for shape ", format_dims(shape));
  std::vector<unsigned char> normalized;
  if (dtype == NNP_BOOL) {  // any nonzero byte is true; kernels rely on 0 and 1 only
    const unsigned char* bytes_in = static_cast<const unsigned char*>(data);
    normalized.assign(bytes_in, bytes_in + bytes);
    for (unsigned char& b : normalized) b = b != 0;
    data = normalized.data();
  }
  const nnp_backend& table = t->backend().table();
  check_plugin_status(table.copy_from_host(table.state, device.index, t->data(), data, bytes),
                      t->backend().name().c_str(), "from_host");
  if (capture::any_recording()) capture::note_host_write(t->backend(), device.index, t->data(), data, bytes);
  return t;
}

TensorRef compute::random(nnp_random_kind kind, double a, double b, const Dims& shape, nnp_dtype dtype,
                          nnp_device device) {
  check_dtype("random", dtype);
  switch (kind) {
    case NNP_RANDOM_UNIFORM:
    case NNP_RANDOM_NORMAL: {
      const char* name = kind == NNP_RANDOM_UNIFORM ? "rand" : "randn";
      if (!is_floating(dtype))
        fail(NNP_DTYPE_MISMATCH, name, ": needs a floating-point dtype, got ", dtype_name(dtype));
      if (kind == NNP_RANDOM_UNIFORM && !(a <= b))
        fail(NNP_INVALID_ARGUMENT, "rand: the range [", a, ", ", b, ") is empty or reversed");
      if (kind == NNP_RANDOM_NORMAL && !(b >= 0))
        fail(NNP_INVALID_ARGUMENT, "randn: standard deviation must be >= 0, got ", b);
      break;
    }
    case NNP_RANDOM_INT:
      if (dtype == NNP_BOOL) fail(NNP_DTYPE_MISMATCH, "randint: bool is not a numeric dtype");
      if (!(a < b) || a != std::floor(a) || b != std::floor(b))
        fail(NNP_INVALID_ARGUMENT, "randint: needs integers low < high, got [", a, ", ", b, ")");
      break;
    default: fail(NNP_INVALID_ARGUMENT, "random: unknown kind ", kind);
  }
  TensorRef t = empty(shape, dtype, device);
  if (t->numel == 0) return t;
  const RngState start = take_draws(device, static_cast<uint64_t>(t->numel));
  nnp_view v = kernel_view(*t);
  run_kernel(*t, "random", t->backend().kernels().random(&kernel_ctx(*t), kind, start.seed, start.offset, a, b, &v));
  return t;
}

// The ops' descriptions: made from nothing, they read no tensor; an export
// writes what they made as a constant named after them, except random draws,
// which it refuses (a draw during forward, such as FractionalMaxPool's
// samples, would be frozen into the file as this call's numbers).
namespace {

constexpr dispatch::Inputs kNoInputs{nullptr, 0};

struct FullOp {
  const Dims& shape;
  double value;
  nnp_dtype dtype;
  nnp_device device;
  dispatch::OpId id() const { return dispatch::OpId::FULL; }
  dispatch::Inputs inputs() const { return kNoInputs; }
  TensorRef compute() const { return compute::full(shape, value, dtype, device); }
};

struct ArangeOp {
  double start, end, step;
  nnp_dtype dtype;
  nnp_device device;
  dispatch::OpId id() const { return dispatch::OpId::ARANGE; }
  dispatch::Inputs inputs() const { return kNoInputs; }
  TensorRef compute() const { return compute::arange(start, end, step, dtype, device); }
};

struct FromHostOp {
  const void* data;
  const Dims& shape;
  nnp_dtype dtype;
  nnp_device device;
  dispatch::OpId id() const { return dispatch::OpId::FROM_HOST; }
  dispatch::Inputs inputs() const { return kNoInputs; }
  TensorRef compute() const { return compute::from_host(data, shape, dtype, device); }
};

struct RandomOp {
  nnp_random_kind kind;
  double a, b;
  const Dims& shape;
  nnp_dtype dtype;
  nnp_device device;
  dispatch::OpId id() const { return dispatch::OpId::RANDOM; }
  dispatch::Inputs inputs() const { return kNoInputs; }
  TensorRef compute() const { return compute::random(kind, a, b, shape, dtype, device); }
};

}  // namespace

using dispatch::Face;

TensorRef full(const Dims& shape, double value, nnp_dtype dtype, nnp_device device) {
  return dispatch::dispatch(FullOp{shape, value, dtype, device}, Face::PUBLIC);
}
TensorRef arange(double start, double end, double step, nnp_dtype dtype, nnp_device device) {
  return dispatch::dispatch(ArangeOp{start, end, step, dtype, device}, Face::PUBLIC);
}
TensorRef from_host(const void* data, const Dims& shape, nnp_dtype dtype, nnp_device device) {
  return dispatch::dispatch(FromHostOp{data, shape, dtype, device}, Face::PUBLIC);
}
TensorRef random(nnp_random_kind kind, double a, double b, const Dims& shape, nnp_dtype dtype, nnp_device device) {
  return dispatch::dispatch(RandomOp{kind, a, b, shape, dtype, device}, Face::PUBLIC);
}

void manual_seed(uint64_t seed) { seed_all_devices(seed); }

void get_rng_state(uint64_t* seed, uint64_t* offset) {
  const RngState state = device_rng_state(host_rng_device());
  if (seed) *seed = state.seed;
  if (offset) *offset = state.offset;
}

void set_rng_state(uint64_t seed, uint64_t offset) { set_device_rng_state(host_rng_device(), RngState{seed, offset}); }

}  // namespace nnp::core
