// PyTorch 1.13's autocast op lists (aten/src/ATen/autocast_mode.cpp), for
// its CPU (bf16) and CUDA (f16, bf16) device types, by PyTorch's op names;
// and the dispatched ops that carry those names. The CPU lists were read
// off Debian's torch 1.13 (each op's AutocastCPU kernel and the dtype it
// gives), which tests/unit/autocast_fixtures.py records again.
// Backends with host memory (cpu, reference, a host plugin) follow the CPU
// lists; the others follow CUDA's.
#include <cstring>
#include <string>
#include <unordered_map>

#include "../error.hpp"
#include "../plugin_registry.hpp"
#include "autocast.hpp"

namespace nnp::core::autocast {
namespace {

constexpr Policy L = Policy::LOWER_PRECISION_FP;
constexpr Policy F = Policy::FP32;
constexpr Policy P = Policy::PROMOTE;
constexpr Policy N = Policy::NONE;
constexpr Policy B = Policy::BANNED;

struct Listed {
  const char* name;
  Policy cpu;
  Policy cuda;
};

// clang-format off
constexpr Listed kLists[] = {
  // lower precision: products and convolutions
  {"conv1d", L, L}, {"conv2d", L, L}, {"conv3d", L, L}, {"conv_tbc", L, L}, {"_convolution", L, L},
  {"convolution", N, L}, {"conv_transpose1d", F, L}, {"conv_transpose2d", F, L}, {"conv_transpose3d", F, L},
  {"mm", L, L}, {"bmm", L, L}, {"matmul", L, L}, {"linear", L, L}, {"addmm", L, L}, {"baddbmm", L, L},
  {"addbmm", L, L}, {"addmv", N, L}, {"addr", N, L}, {"mv", N, L}, {"einsum", N, L}, {"chain_matmul", N, L},
  {"linalg_multi_dot", N, L}, {"prelu", N, L}, {"lstm_cell", N, L}, {"gru_cell", N, L},
  {"rnn_tanh_cell", N, L}, {"rnn_relu_cell", N, L},
  // f32: losses, reductions that overflow, pointwise ops that lose range
  {"mse_loss", F, F}, {"l1_loss", F, F}, {"smooth_l1_loss", F, F}, {"huber_loss", F, F},
  {"nll_loss", F, F}, {"nll_loss2d", F, F}, {"cross_entropy_loss", F, N}, {"kl_div", F, F},
  {"binary_cross_entropy", F, B}, {"binary_cross_entropy_with_logits", F, F}, {"poisson_nll_loss", F, F},
  {"cosine_embedding_loss", F, F}, {"hinge_embedding_loss", F, F}, {"margin_ranking_loss", F, F},
  {"soft_margin_loss", F, F}, {"triplet_margin_loss", F, F}, {"multi_margin_loss", F, F},
  {"multilabel_margin_loss", F, F}, {"ctc_loss", F, N},
  {"avg_pool3d", F, N}, {"max_pool3d", F, N}, {"adaptive_avg_pool3d", F, N}, {"adaptive_max_pool3d", F, N},
  {"fractional_max_pool2d", F, N}, {"fractional_max_pool3d", F, N}, {"max_unpool2d", F, N}, {"max_unpool3d", F, N},
  {"reflection_pad1d", F, N}, {"reflection_pad3d", N, N}, {"reflection_pad2d", F, N}, {"replication_pad1d", F, N},
  {"replication_pad2d", F, N}, {"replication_pad3d", F, N},
  {"grid_sampler", F, P}, {"prod", F, F}, {"quantile", F, N}, {"nanquantile", F, N}, {"stft", F, N},
  {"cdist", F, F}, {"trace", F, N}, {"polar", F, N}, {"fake_quantize_per_tensor_affine", F, N},
  {"inverse", F, N}, {"cholesky", F, N}, {"pinverse", F, N},
  {"acos", N, F}, {"asin", N, F}, {"cosh", N, F}, {"sinh", N, F}, {"tan", N, F}, {"erfinv", N, F},
  {"exp", N, F}, {"expm1", N, F}, {"log", N, F}, {"log10", N, F}, {"log2", N, F}, {"log1p", N, F},
  {"reciprocal", N, F}, {"rsqrt", N, F}, {"pow", N, F}, {"softplus", N, F}, {"layer_norm", N, F},
  {"group_norm", N, F}, {"frobenius_norm", N, F}, {"nuclear_norm", N, F}, {"cosine_similarity", N, F},
  {"dist", N, F}, {"pdist", N, F}, {"renorm", N, F}, {"logsumexp", N, F}, {"softmax", N, F},
  {"log_softmax", N, F}, {"cumprod", N, F}, {"cumsum", N, F}, {"sum", N, F}, {"norm", N, F},
  // promote: ops that take several tensors of one dtype
  {"cat", P, N}, {"stack", P, N}, {"index_copy", P, N}, {"addcdiv", N, P}, {"addcmul", N, P},
  {"atan2", N, P}, {"bilinear", N, P}, {"cross", N, P}, {"dot", N, P}, {"index_put", N, P},
  {"scatter_add", N, P}, {"tensordot", N, P},
};
// clang-format on

// By name, built once: every functional composed outside the core asks on
// every call, autocast on or off.
const Listed* listed(std::string_view name) {
  static const std::unordered_map<std::string_view, const Listed*> by_name = [] {
    std::unordered_map<std::string_view, const Listed*> map;
    for (const Listed& l : kLists) map.emplace(l.name, &l);
    return map;
  }();
  const auto found = by_name.find(name);
  return found == by_name.end() ? nullptr : found->second;
}

bool follows_cpu_lists(std::string_view device_type) {
  if (device_type == "cpu" || device_type == "reference") return true;
  if (device_type == "cuda") return false;
  const BackendRecord* backend = PluginRegistry::instance().find_backend(std::string(device_type));
  return !backend || backend->host_memory();
}

Policy of_listed(const Listed* l, std::string_view device_type) {
  if (!l) return Policy::NONE;
  return follows_cpu_lists(device_type) ? l->cpu : l->cuda;
}

}  // namespace

Policy policy_of(dispatch::OpId op, std::string_view device_type) {
  using dispatch::OpId;
  // Binary ops and where promote their operands: PyTorch's type promotion
  // does it for them with or without autocast; nnplug asks for one dtype
  // outside autocast, and inside it mixes what the lists produce.
  switch (op) {
    case OpId::MATMUL: return of_listed(listed("matmul"), device_type);
    // CONV2D is the fused kernel's op: its callers (conv2d_windows) cast
    // before they choose it, since it takes f32 only.
    case OpId::CAT: return of_listed(listed("cat"), device_type);
    case OpId::SCATTER_ADD: return of_listed(listed("scatter_add"), device_type);
    case OpId::SOFTMAX: return of_listed(listed("softmax"), device_type);
    case OpId::LOG_SOFTMAX: return of_listed(listed("log_softmax"), device_type);
    case OpId::SUM: return of_listed(listed("sum"), device_type);
    case OpId::LAYER_NORM: return of_listed(listed("layer_norm"), device_type);
    case OpId::EXP: return of_listed(listed("exp"), device_type);
    case OpId::LOG: return of_listed(listed("log"), device_type);
    case OpId::RSQRT: return of_listed(listed("rsqrt"), device_type);
    case OpId::POW: {
      const Policy p = of_listed(listed("pow"), device_type);
      return p == Policy::NONE ? Policy::PROMOTE : p;
    }
    default: break;
  }
  if ((op >= OpId::ADD && op <= OpId::GE) || op == OpId::WHERE) return Policy::PROMOTE;
  return Policy::NONE;
}

Policy policy_named(std::string_view name, std::string_view device_type) {
  if (const Listed* l = listed(name)) return of_listed(l, device_type);
  if (name == "lower_precision_fp") return Policy::LOWER_PRECISION_FP;
  if (name == "fp32") return Policy::FP32;
  if (name == "promote") return Policy::PROMOTE;
  if (name == "none") return Policy::NONE;
  fail(NNP_NOT_FOUND, "autocast: \"", name,
       "\" is neither an op of PyTorch 1.13's autocast lists nor a policy; name an op as PyTorch does "
       "(\"linear\", \"cross_entropy_loss\") or a policy (\"lower_precision_fp\", \"fp32\", \"promote\", \"none\")");
}

}  // namespace nnp::core::autocast
