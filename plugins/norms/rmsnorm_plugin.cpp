// norm.RMSNorm, PyTorch's nn.RMSNorm, as a layer with kernels of its own:
//   y = x / sqrt(mean(x^2 over normalized_shape) + eps) * weight
// In f32 and f64, host-memory backends (cpu, reference) run the loops below
// and cuda runs rmsnorm_cuda.cu on the core's stream (when the plugin was
// built with nvcc), with the backward written by hand: one custom autograd
// node instead of the seven a composition records. Other backends and dtypes
// compose core ops, so autograd and every device still work.
#include <cmath>
#include <limits>
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>
#include <optional>
#include <string>
#include <vector>

#ifdef NNP_NORMS_CUDA
#include "rmsnorm_cuda.hpp"
#endif

namespace {

using nnp::Dtype;
using nnp::Tensor;

// Rows of `width` elements, each normalized on its own.
struct Rows {
  int64_t count;
  int64_t width;
};

template <typename T>
void rmsnorm_forward(const T* x, const T* weight, T* y, T* rstd, Rows rows, double eps) {
  for (int64_t r = 0; r < rows.count; ++r) {
    const T* xr = x + r * rows.width;
    T* yr = y + r * rows.width;
    double squares = 0;
    for (int64_t j = 0; j < rows.width; ++j) squares += static_cast<double>(xr[j]) * xr[j];
    const double inv = 1.0 / std::sqrt(squares / static_cast<double>(rows.width) + eps);
    rstd[r] = static_cast<T>(inv);
    for (int64_t j = 0; j < rows.width; ++j) {
      double v = xr[j] * inv;
      yr[j] = static_cast<T>(weight ? v * weight[j] : v);
    }
  }
}

// With xh = x * rstd and gh = g * weight:
//   dx = rstd * (gh - xh * mean(gh * xh)),  dweight = sum over rows of g * xh.
template <typename T>
void rmsnorm_backward(const T* g, const T* x, const T* weight, const T* rstd, T* dx, T* dweight, Rows rows) {
  std::vector<double> dw(weight ? static_cast<size_t>(rows.width) : 0, 0.0);
  for (int64_t r = 0; r < rows.count; ++r) {
    const T* gr = g + r * rows.width;
    const T* xr = x + r * rows.width;
    const double inv = rstd[r];
    double dot = 0;
    for (int64_t j = 0; j < rows.width; ++j) {
      const double xh = xr[j] * inv;
      const double gh = weight ? static_cast<double>(gr[j]) * weight[j] : gr[j];
      dot += gh * xh;
      if (weight) dw[static_cast<size_t>(j)] += static_cast<double>(gr[j]) * xh;
    }
    const double mean_dot = dot / static_cast<double>(rows.width);
    T* dxr = dx + r * rows.width;
    for (int64_t j = 0; j < rows.width; ++j) {
      const double xh = xr[j] * inv;
      const double gh = weight ? static_cast<double>(gr[j]) * weight[j] : gr[j];
      dxr[j] = static_cast<T>(inv * (gh - xh * mean_dot));
    }
  }
  for (size_t j = 0; j < dw.size(); ++j) dweight[j] = static_cast<T>(dw[j]);
}

// Whether the plugin has kernels for tensors on this device.
bool has_kernels_for(const nnp::Device& device) {
#ifdef NNP_NORMS_CUDA
  if (device.backend() == "cuda") return true;
#endif
  return device.host_memory();
}

void check_cuda(const char* error) {
  if (error) throw nnp::Error(NNP_DEVICE_ERROR, std::string("RMSNorm CUDA kernel: ") + error);
}

// The custom autograd function: inputs {x, weight} or {x}; x contiguous.
struct RMSNormFunction {
  static constexpr const char* name = "RMSNormBackward";
  Rows rows;
  double eps;

  std::vector<Tensor> forward(nnp::FunctionContext& ctx, const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const bool affine = in.size() > 1;
    Tensor y = nnp::empty(x.shape(), x.dtype(), x.device());
    Tensor rstd = nnp::empty({rows.count}, x.dtype(), x.device());
#ifdef NNP_NORMS_CUDA
    if (!x.device().host_memory()) {
      check_cuda(nnp::norms::rmsnorm_forward_cuda(static_cast<nnp_dtype>(x.dtype()), x.data_ptr(),
                                                  affine ? in[1].data_ptr() : nullptr, y.data_ptr(), rstd.data_ptr(),
                                                  rows.count, rows.width, eps, x.device().stream()));
      std::vector<Tensor> saved = in;
      saved.push_back(rstd);
      ctx.save_for_backward(saved);
      return {y};
    }
#endif
    if (x.dtype() == Dtype::f32)
      rmsnorm_forward(x.data_ptr<float>(), affine ? in[1].data_ptr<float>() : nullptr, y.data_ptr<float>(),
                      rstd.data_ptr<float>(), rows, eps);
    else
      rmsnorm_forward(x.data_ptr<double>(), affine ? in[1].data_ptr<double>() : nullptr, y.data_ptr<double>(),
                      rstd.data_ptr<double>(), rows, eps);
    std::vector<Tensor> saved = in;
    saved.push_back(rstd);
    ctx.save_for_backward(saved);
    return {y};
  }

  std::vector<Tensor> backward(nnp::FunctionContext& ctx, const std::vector<Tensor>& grads) {
    std::vector<Tensor> saved = ctx.saved_tensors();
    const bool affine = saved.size() == 3;
    const Tensor& x = saved[0];
    const Tensor& rstd = saved.back();
    Tensor g = grads[0].contiguous();
    Tensor dx = nnp::empty(x.shape(), x.dtype(), x.device());
    Tensor dweight = affine ? nnp::empty(saved[1].shape(), x.dtype(), x.device()) : Tensor();
#ifdef NNP_NORMS_CUDA
    if (!x.device().host_memory()) {
      check_cuda(nnp::norms::rmsnorm_backward_cuda(static_cast<nnp_dtype>(x.dtype()), g.data_ptr(), x.data_ptr(),
                                                   affine ? saved[1].data_ptr() : nullptr, rstd.data_ptr(),
                                                   dx.data_ptr(), affine ? dweight.data_ptr() : nullptr, rows.count,
                                                   rows.width, x.device().stream()));
      if (affine) return {dx, dweight};
      return {dx};
    }
#endif
    if (x.dtype() == Dtype::f32)
      rmsnorm_backward(g.data_ptr<float>(), x.data_ptr<float>(), affine ? saved[1].data_ptr<float>() : nullptr,
                       rstd.data_ptr<float>(), dx.data_ptr<float>(), affine ? dweight.data_ptr<float>() : nullptr,
                       rows);
    else
      rmsnorm_backward(g.data_ptr<double>(), x.data_ptr<double>(), affine ? saved[1].data_ptr<double>() : nullptr,
                       rstd.data_ptr<double>(), dx.data_ptr<double>(), affine ? dweight.data_ptr<double>() : nullptr,
                       rows);
    if (affine) return {dx, dweight};
    return {dx};
  }
};

std::string shape_text(const nnp::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// torch.finfo(dtype).eps, RMSNorm's eps when none is given.
double machine_epsilon(Dtype dtype) {
  switch (dtype) {
    case Dtype::f64: return std::numeric_limits<double>::epsilon();
    case Dtype::f16: return 0.0009765625;  // 2^-10
    case Dtype::bf16: return 0.0078125;    // 2^-7
    default: return std::numeric_limits<float>::epsilon();
  }
}

struct RMSNorm : nnp::nn::Module {
  nnp::Shape normalized;
  std::optional<double> eps;
  bool affine;
  Tensor weight;

  explicit RMSNorm(const nnp::nn::Attrs& a)
      : Module("RMSNorm"), normalized(a.integers("normalized_shape")), affine(a.boolean("elementwise_affine")) {
    if (normalized.empty()) throw nnp::Error(NNP_INVALID_ARGUMENT, "RMSNorm: normalized_shape is empty");
    for (int64_t d : normalized)
      if (d <= 0)
        throw nnp::Error(NNP_INVALID_ARGUMENT, "RMSNorm: normalized_shape " + shape_text(normalized) +
                                                   " has a dimension that is not positive");
    if (a.has("eps")) eps = a.real("eps");
    if (affine) weight = register_parameter("weight", nnp::ones(normalized));
  }

  Tensor forward(const Tensor& x) override {
    const nnp::Shape shape = x.shape();
    const size_t k = normalized.size();
    bool matches = shape.size() >= k;
    for (size_t i = 0; matches && i < k; ++i) matches = shape[shape.size() - k + i] == normalized[i];
    if (!matches)
      throw nnp::Error(NNP_SHAPE_MISMATCH, "RMSNorm: normalized_shape " + shape_text(normalized) +
                                               " does not match the trailing dimensions of the input " +
                                               shape_text(shape));
    const double epsilon = eps ? *eps : machine_epsilon(x.dtype());
    const bool own_kernel = has_kernels_for(x.device()) && (x.dtype() == Dtype::f32 || x.dtype() == Dtype::f64) &&
                            (!affine || (weight.dtype() == x.dtype() && weight.device() == x.device()));
    if (!own_kernel) return composed(x, epsilon);

    int64_t width = 1;
    for (int64_t d : normalized) width *= d;
    Rows rows{width == 0 ? 0 : x.numel() / width, width};
    std::vector<Tensor> inputs{x.contiguous()};
    if (affine) inputs.push_back(weight);
    return nnp::apply_function<RMSNormFunction>(inputs, RMSNormFunction{rows, epsilon})[0];
  }

  // The same mathematics from core ops, for every other backend and dtype.
  Tensor composed(const Tensor& x, double epsilon) const {
    std::vector<int32_t> dims;
    for (size_t i = 0; i < normalized.size(); ++i) dims.push_back(-1 - static_cast<int32_t>(i));
    Tensor y = x * ((x * x).mean(dims, true) + epsilon).rsqrt();
    return affine ? y * weight : y;
  }

  std::string extra_repr() const override {
    std::string dims = "(";
    for (size_t i = 0; i < normalized.size(); ++i)
      dims += std::to_string(normalized[i]) + (normalized.size() == 1 ? "," : (i + 1 < normalized.size() ? ", " : ""));
    return dims + "), eps=" + (eps ? nnp::nn::format_float(*eps) : "None") +
           ", elementwise_affine=" + nnp::nn::format_bool(affine);
  }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<RMSNorm>(
        host, "norm.RMSNorm", "x / sqrt(mean(x^2) + eps) * weight over the trailing normalized_shape",
        {{"normalized_shape", NNP_ATTR_INTS, true, nullptr, "trailing dimensions to normalize"},
         {"eps", NNP_ATTR_FLOAT, false, nullptr, "added to the mean square; absent: the dtype's epsilon"},
         {"elementwise_affine", NNP_ATTR_BOOL, false, "true", "learn a per-element weight"}});
  });
}

}  // namespace

NNP_PLUGIN("nnplug.norms", "0.1.0", "normalization layers with their own kernels: RMSNorm", init)
