// nnp/parametrizations.hpp - torch.nn.utils.parametrizations built on
// nnp/parametrize.hpp: spectral_norm (power iteration with PyTorch's _u and
// _v buffers), weight_norm (PyTorch 2's form: original0 is g, original1
// is v) and orthogonal (matrix_exp or householder, with PyTorch's `base`). State dict keys are PyTorch's, e.g.
// "parametrizations.weight.0._u".
//
//   namespace P = nnp::nn::utils::parametrizations;
//   P::spectral_norm(fc);            // fc->weight = W / sigma(W)
//   P::weight_norm(conv, "weight");  // conv->weight = g * v / ||v||
#pragma once

#include <algorithm>
#include <cmath>
#include <nnp/functional.hpp>
#include <nnp/nn.hpp>
#include <nnp/parametrize.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn::utils::parametrizations {

// The parametrization spectral_norm registers (PyTorch's _SpectralNorm).
class SpectralNorm : public Module {
 public:
  SpectralNorm(const Tensor& weight, int64_t n_power_iterations = 1, int64_t dim = 0, double eps = 1e-12)
      : Module("_SpectralNorm"), eps_(eps) {
    const int64_t ndim = weight.ndim();
    if (dim >= ndim || dim < -ndim)
      throw Error(NNP_INVALID_ARGUMENT, "spectral_norm: dim " + std::to_string(dim) + " is out of range for a " +
                                            std::to_string(ndim) + "-d weight");
    if (n_power_iterations <= 0)
      throw Error(NNP_INVALID_ARGUMENT, "Expected n_power_iterations to be positive, but got n_power_iterations=" +
                                            std::to_string(n_power_iterations));
    dim_ = dim >= 0 ? dim : dim + ndim;
    if (ndim > 1) {
      n_power_iterations_ = n_power_iterations;
      NoGradGuard no_grad;
      const Tensor mat = to_matrix(weight);
      Tensor u = empty({mat.size(0)}, weight.dtype(), weight.device()).normal_(0, 1);
      Tensor v = empty({mat.size(1)}, weight.dtype(), weight.device()).normal_(0, 1);
      u_ = register_buffer("_u", normalized(u));
      v_ = register_buffer("_v", normalized(v));
      power_method(mat, 15);
    }
  }

  Tensor forward(const Tensor& weight) override {
    if (weight.ndim() == 1) return functional::normalize(weight, functional::NormalizeFuncOptions().dim(0).eps(eps_));
    const Tensor mat = to_matrix(weight);
    if (is_training()) power_method(mat, n_power_iterations_);
    const Tensor u = u_.clone(), v = v_.clone();
    const Tensor sigma = (u * mv(mat, v)).sum();
    return weight / sigma;
  }
  std::vector<Tensor> right_inverse(const Tensor& value) override { return {value}; }

 private:
  // dim first, the rest flattened.
  Tensor to_matrix(const Tensor& weight) const {
    Tensor w = weight;
    if (dim_ != 0) {
      std::vector<int32_t> order = {static_cast<int32_t>(dim_)};
      for (int64_t d = 0; d < weight.ndim(); ++d)
        if (d != dim_) order.push_back(static_cast<int32_t>(d));
      w = w.permute(order);
    }
    return w.reshape({w.size(0), -1});
  }
  static Tensor mv(const Tensor& mat, const Tensor& vec) {
    return mat.matmul(vec.reshape({vec.size(0), 1})).reshape({mat.size(0)});
  }
  Tensor normalized(const Tensor& x) const {
    return functional::normalize(x, functional::NormalizeFuncOptions().dim(0).eps(eps_));
  }
  // u and v move toward the top singular vectors, in place (no history).
  void power_method(const Tensor& mat, int64_t iterations) {
    NoGradGuard no_grad;
    for (int64_t i = 0; i < iterations; ++i) {
      u_.copy_(normalized(mv(mat, v_)));
      v_.copy_(normalized(mv(mat.t(), u_)));
    }
  }

  double eps_;
  int64_t dim_ = 0;
  int64_t n_power_iterations_ = 1;
  Tensor u_, v_;
};

// W / sigma(W), sigma the largest singular value of W reshaped to a matrix
// with dim first (dim defaults to 1 for ConvTranspose, else 0), estimated by
// power iteration in training mode.
inline ModuleHandle spectral_norm(const ModuleHandle& module, const std::string& name = "weight",
                                  int64_t n_power_iterations = 1, double eps = 1e-12,
                                  std::optional<int64_t> dim = std::nullopt) {
  const Tensor weight = module.get_tensor(name);
  if (!dim) {
    const std::string type = parametrize::type_before_parametrizations(module);
    dim = type.rfind("ConvTranspose", 0) == 0 ? 1 : 0;
  }
  return parametrize::register_parametrization(module, name, make<SpectralNorm>(weight, n_power_iterations, *dim, eps));
}

namespace detail {

// A lower-triangular mask of an n x k matrix: 1 where column <= row + diagonal.
inline Tensor tril_mask(int64_t n, int64_t k, int64_t diagonal, const Tensor& like) {
  std::vector<double> mask(static_cast<size_t>(n * k), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k && j <= i + diagonal; ++j) mask[static_cast<size_t>(i * k + j)] = 1.0;
  return from_vector(mask, {n, k}).to(like.device(), like.dtype());
}

// LAPACK's geqrf on the host in double precision, for an n x k matrix with n
// >= k (row-major): R above the diagonal and on it, the Householder vectors
// below (their leading 1 implied), and tau, with H_i = I - tau_i v_i v_i^T.
inline void geqrf(std::vector<double>& a, int64_t n, int64_t k, std::vector<double>& tau) {
  tau.assign(static_cast<size_t>(k), 0.0);
  auto at = [&](int64_t i, int64_t j) -> double& { return a[static_cast<size_t>(i * k + j)]; };
  for (int64_t j = 0; j < k; ++j) {
    double norm2 = 0;
    for (int64_t i = j + 1; i < n; ++i) norm2 += at(i, j) * at(i, j);
    const double alpha = at(j, j);
    if (norm2 == 0) continue;  // tau 0: H_j is the identity
    const double beta = -std::copysign(std::sqrt(alpha * alpha + norm2), alpha);
    tau[static_cast<size_t>(j)] = (beta - alpha) / beta;
    for (int64_t i = j + 1; i < n; ++i) at(i, j) /= alpha - beta;
    at(j, j) = beta;
    for (int64_t c = j + 1; c < k; ++c) {  // apply H_j to the columns on the right
      double dot = at(j, c);
      for (int64_t i = j + 1; i < n; ++i) dot += at(i, j) * at(i, c);
      dot *= tau[static_cast<size_t>(j)];
      at(j, c) -= dot;
      for (int64_t i = j + 1; i < n; ++i) at(i, c) -= dot * at(i, j);
    }
  }
}

// householder_product(A, tau): the first k columns of H_0 H_1 ... H_{k-1},
// built from tensor ops so gradients reach A and tau.
inline Tensor householder_product(const Tensor& a, const Tensor& tau) {
  const int64_t n = a.size(0), k = a.size(1);
  const Tensor below = a * tril_mask(n, k, -1, a);
  Tensor q = eye(n, k, a.dtype(), a.device());
  for (int64_t j = k - 1; j >= 0; --j) {
    // v_j: 1 at row j, A's column j below it, 0 above.
    std::vector<double> e(static_cast<size_t>(n), 0.0);
    e[static_cast<size_t>(j)] = 1.0;
    const Tensor v = below.narrow(1, j, 1) + from_vector(e, {n, 1}).to(a.device(), a.dtype());
    q = q - (tau.narrow(0, j, 1) * v).matmul(v.t().matmul(q));
  }
  return q;
}

// exp(A) by scaling and squaring of a degree-18 Taylor polynomial, from
// tensor ops (differentiable).
inline Tensor matrix_exp(const Tensor& a) {
  const int64_t n = a.size(0);
  double norm = 0;
  {
    const std::vector<double> values = a.detach().to(Dtype::f64).contiguous().to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      double row = 0;
      for (int64_t j = 0; j < n; ++j) row += std::fabs(values[static_cast<size_t>(i * n + j)]);
      norm = std::max(norm, row);
    }
  }
  int squarings = 0;
  while (norm > 0.5 && squarings < 64) {
    norm /= 2;
    ++squarings;
  }
  const Tensor b = a * std::ldexp(1.0, -squarings);
  const Tensor id = eye(n, n, a.dtype(), a.device());
  Tensor e = id;
  for (int term = 18; term >= 1; --term) e = id + b.matmul(e) * (1.0 / term);
  for (int i = 0; i < squarings; ++i) e = e.matmul(e);
  return e;
}

}  // namespace detail

// The parametrization orthogonal registers (PyTorch's _Orthogonal): a
// matrix with orthonormal columns (or rows, when wider than tall), from the
// matrix exponential of a skew-symmetric matrix or a product of Householder
// reflectors; with use_trivialization, times the buffer `base` that
// right_inverse sets (so registering keeps the weight's orthogonalization).
class Orthogonal : public Module {
 public:
  enum class Map { MatrixExp, Householder };
  Orthogonal(const Tensor& weight, Map map, bool use_trivialization = true)
      : Module("_Orthogonal"), map_(map), trivialization_(use_trivialization), shape_(weight.shape()) {
    if (use_trivialization) register_buffer("base", Tensor());
  }

  Tensor forward(const Tensor& original) override {
    Tensor x = original;
    int64_t n = x.size(0), k = x.size(1);
    const bool transposed = n < k;
    if (transposed) {
      x = x.t();
      std::swap(n, k);
    }
    Tensor q;
    if (map_ == Map::MatrixExp) {
      x = x * detail::tril_mask(n, k, 0, x);
      if (n != k) x = cat({x, zeros({n, n - k}, x.dtype(), x.device())}, 1);
      q = detail::matrix_exp(x - x.t());
      if (n != k) q = q.narrow(1, 0, k);
    } else {
      const Tensor a = x * detail::tril_mask(n, k, -1, x);
      const Tensor tau = (a * a).sum({0}).scalar_like(2.0) / ((a * a).sum({0}) + 1.0);
      // The signs sit on X's diagonal, truncated to integers as PyTorch's
      // .int() (no gradient goes there).
      const std::vector<double> values = x.detach().to(Dtype::f64).contiguous().to_vector<double>();
      std::vector<double> diagonal(static_cast<size_t>(k));
      for (int64_t j = 0; j < k; ++j)
        diagonal[static_cast<size_t>(j)] = std::trunc(values[static_cast<size_t>(j * k + j)]);
      const Tensor signs = from_vector(diagonal, {1, k}).to(x.device(), x.dtype());
      q = detail::householder_product(a, tau) * signs;
    }
    if (base_.defined()) q = base_.matmul(q);
    return transposed ? q.t() : q;
  }

  std::vector<Tensor> right_inverse(const Tensor& value) override {
    if (value.shape() != shape_)
      throw Error(NNP_INVALID_ARGUMENT, "orthogonal: expected a matrix of shape " + nnp::detail::shape_text(shape_) +
                                            ", got " + nnp::detail::shape_text(value.shape()));
    NoGradGuard no_grad;
    Tensor q = value.to(Dtype::f64).contiguous();
    int64_t n = q.size(0), k = q.size(1);
    const bool transpose = n < k;
    if (transpose) {
      q = q.t().contiguous();
      std::swap(n, k);
    }
    std::vector<double> a = q.to_vector<double>(), tau;
    if (!trivialization_) {
      if (map_ == Map::MatrixExp)
        throw Error(NNP_UNIMPLEMENTED,
                    "It is not possible to assign to the matrix exponential parametrization when "
                    "use_trivialization=False.");
      detail::geqrf(a, n, k, tau);
      for (int64_t j = 0; j < k; ++j) {  // the diagonal keeps R's signs (flipped where tau is 0)
        double& d = a[static_cast<size_t>(j * k + j)];
        d = (d > 0) - (d < 0);
        if (tau[static_cast<size_t>(j)] == 0.0) d = -d;
      }
      Tensor out = from_vector(a, {n, k}).to(value.device(), value.dtype());
      return {transpose ? out.t().contiguous() : out};
    }
    // base: an orthogonal n x n matrix whose first k columns span value's.
    std::vector<double> square(static_cast<size_t>(n * n));
    const std::vector<double> extra = n > k ? randn({n, n - k}, Dtype::f64).to_vector<double>() : std::vector<double>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        square[static_cast<size_t>(i * n + j)] =
            j < k ? a[static_cast<size_t>(i * k + j)] : extra[static_cast<size_t>(i * (n - k) + (j - k))];
    if (!(n == k && is_orthogonal(square, n))) square = make_orthogonal(square, n);
    base_ = register_buffer("base", from_vector(square, {n, n}).to(value.device(), value.dtype()));
    Tensor neg_id = eye(shape_[0], shape_[1], value.dtype(), value.device()) * -1.0;
    return {neg_id};
  }

 private:
  // Q of a QR whose R has a non-negative diagonal (PyTorch's _make_orthogonal).
  static std::vector<double> make_orthogonal(std::vector<double> a, int64_t n) {
    std::vector<double> tau;
    detail::geqrf(a, n, n, tau);
    std::vector<double> q(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i) q[static_cast<size_t>(i * n + i)] = 1.0;
    for (int64_t j = n - 1; j >= 0; --j) {  // Q = H_0 ... H_{n-1} I, applied from the right end
      for (int64_t c = 0; c < n; ++c) {
        double dot = q[static_cast<size_t>(j * n + c)];
        for (int64_t i = j + 1; i < n; ++i)
          dot += a[static_cast<size_t>(i * n + j)] * q[static_cast<size_t>(i * n + c)];
        dot *= tau[static_cast<size_t>(j)];
        q[static_cast<size_t>(j * n + c)] -= dot;
        for (int64_t i = j + 1; i < n; ++i)
          q[static_cast<size_t>(i * n + c)] -= dot * a[static_cast<size_t>(i * n + j)];
      }
    }
    for (int64_t c = 0; c < n; ++c) {
      const double r = a[static_cast<size_t>(c * n + c)];
      const double sign = (r > 0) - (r < 0);
      for (int64_t i = 0; i < n; ++i) q[static_cast<size_t>(i * n + c)] *= sign;
    }
    return q;
  }
  // PyTorch's _is_orthogonal in double precision: Q^T Q within 10 n eps of I.
  static bool is_orthogonal(const std::vector<double>& q, int64_t n) {
    const double eps = 10.0 * static_cast<double>(n) * 2.220446049250313e-16;
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b) {
        double dot = 0;
        for (int64_t i = 0; i < n; ++i) dot += q[static_cast<size_t>(i * n + a)] * q[static_cast<size_t>(i * n + b)];
        if (std::fabs(dot - (a == b ? 1.0 : 0.0)) > eps) return false;
      }
    return true;
  }

  Map map_;
  bool trivialization_;
  Shape shape_;
  Tensor base_;
};

// Makes `name` (a matrix) orthogonal: orthonormal columns, or rows when it is
// wider than tall. orthogonal_map: "matrix_exp" (the default for square
// matrices) or "householder" (the default otherwise); "cayley" is not
// supported (it needs a linear solve).
inline ModuleHandle orthogonal(const ModuleHandle& module, const std::string& name = "weight",
                               std::optional<std::string> orthogonal_map = std::nullopt,
                               bool use_trivialization = true) {
  const Tensor weight = module.get_tensor(name);
  if (weight.ndim() != 2)
    throw Error(NNP_INVALID_ARGUMENT, "orthogonal: expected a matrix, got a tensor of " +
                                          std::to_string(weight.ndim()) + " dimensions (batches are not supported)");
  const std::string map = orthogonal_map.value_or(weight.size(0) == weight.size(1) ? "matrix_exp" : "householder");
  if (map != "matrix_exp" && map != "householder")
    throw Error(NNP_INVALID_ARGUMENT,
                "orthogonal_map has to be one of \"matrix_exp\" or \"householder\" (\"cayley\" "
                "is not supported); got: " +
                    map);
  return parametrize::register_parametrization(
      module, name,
      make<Orthogonal>(weight, map == "matrix_exp" ? Orthogonal::Map::MatrixExp : Orthogonal::Map::Householder,
                       use_trivialization),
      true);
}

// The parametrization weight_norm registers (PyTorch's _WeightNorm):
// forward(g, v) = v * g / ||v||, the norm over every dimension but dim (all
// of them for dim -1).
class WeightNorm : public Module {
 public:
  explicit WeightNorm(std::optional<int64_t> dim = 0) : Module("_WeightNorm"), dim_(dim.value_or(-1)) {}
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  "_WeightNorm: forward takes (weight_g, weight_v), got " + std::to_string(inputs.size()) + " tensors");
    const Tensor &g = inputs[0], &v = inputs[1];
    return v * (g / norm_except_dim(v));
  }
  std::vector<Tensor> right_inverse(const Tensor& weight) override { return {norm_except_dim(weight), weight}; }

 private:
  // PyTorch's norm_except_dim(v, 2, dim), keeping the reduced dimensions.
  Tensor norm_except_dim(const Tensor& v) const {
    if (dim_ == -1) return v.pow(2.0).sum().sqrt();
    const int64_t dim = dim_ < 0 ? dim_ + v.ndim() : dim_;
    if (dim < 0 || dim >= v.ndim())
      throw Error(NNP_INVALID_ARGUMENT, "weight_norm: dim " + std::to_string(dim_) + " is out of range for a " +
                                            std::to_string(v.ndim()) + "-d weight");
    std::vector<int32_t> others;
    for (int64_t d = 0; d < v.ndim(); ++d)
      if (d != dim) others.push_back(static_cast<int32_t>(d));
    return v.pow(2.0).sum(others, true).sqrt();
  }
  int64_t dim_;
};

namespace detail {
// PyTorch 2's _weight_norm_compat_hook: a state dict of the older
// torch.nn.utils.weight_norm (<name>_g and <name>_v, what PyTorch 1.13
// saves) loads into the parametrized form. A C callback: nothing throws.
inline nnp_status weight_norm_compat_hook(nnp_module*, nnp_list* state, nnp_list*, const char* prefix,
                                          void* user_data) {
  const nnp_api& c = api();
  const std::string& name = *static_cast<const std::string*>(user_data);
  const std::string g_key = std::string(prefix) + name + "_g", v_key = std::string(prefix) + name + "_v";
  const int32_t g = c.list_find(state, g_key.c_str()), v = c.list_find(state, v_key.c_str());
  if (g < 0 || v < 0) return NNP_OK;
  nnp_tensor* tensors[2] = {c.list_tensor(state, g), c.list_tensor(state, v)};
  if (!tensors[0] || !tensors[1]) return NNP_OK;
  for (nnp_tensor* t : tensors) c.tensor_retain(t);
  nnp_status s = c.list_remove(state, g > v ? g : v);
  if (s == NNP_OK) s = c.list_remove(state, g > v ? v : g);
  const std::string base = std::string(prefix) + "parametrizations." + name + ".original";
  if (s == NNP_OK) s = c.list_append_tensor(state, (base + "0").c_str(), tensors[0]);
  if (s == NNP_OK) s = c.list_append_tensor(state, (base + "1").c_str(), tensors[1]);
  for (nnp_tensor* t : tensors) c.tensor_release(t);
  return s;
}
}  // namespace detail

// The module keeps loading state dicts of PyTorch's older weight_norm
// (<name>_g, <name>_v), as PyTorch 2's does.
inline ModuleHandle weight_norm(const ModuleHandle& module, const std::string& name = "weight",
                                std::optional<int64_t> dim = 0) {
  parametrize::register_parametrization(module, name, make<WeightNorm>(dim), true);
  nnp_hook_handle* hook = nullptr;
  check(api().register_state_hook(
      module.handle(), NNP_LOAD_STATE_DICT_PRE, detail::weight_norm_compat_hook, new std::string(name),
      [](void* user_data) { delete static_cast<std::string*>(user_data); }, &hook));
  api().hook_release(hook);  // the handle goes; the hook stays with the module
  return module;
}

}  // namespace nnp::nn::utils::parametrizations
