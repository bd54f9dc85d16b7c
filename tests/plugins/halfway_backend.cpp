// Backends with half the required kernel slots each (issue 45): the
// reference backend's kernels in memory the core may not read directly (no
// NNP_BACKEND_HOST_MEMORY, so every operand crosses through copy_to_host /
// copy_from_host), the other half declared missing (nnp_backend
// .missing_kernels, ABI 1.24) and left NULL, as a vendor's table would have
// them; the core runs those on the cpu backend. Built twice (NNP_HALF):
//   1 halfway    has copy, fill, unary, binary, reduce and gemm; lacks where,
//                softmax, index_select, gather, scatter_add and random
//   2 otherhalf  the reverse
// so between them every slot's fallback runs.
#include <nnp/host_backend.h>

#include "../../backends/reference/reference_kernels.hpp"
#include "test_backend_memory.hpp"

namespace {

#ifndef NNP_HALF
#error "NNP_HALF must be set"
#endif

nnp_kernels halfway;
constexpr uint32_t kSecondHalf = NNP_KERNEL_SLOT_BIT(NNP_KERNEL_WHERE) | NNP_KERNEL_SLOT_BIT(NNP_KERNEL_SOFTMAX) |
                                 NNP_KERNEL_SLOT_BIT(NNP_KERNEL_INDEX_SELECT) | NNP_KERNEL_SLOT_BIT(NNP_KERNEL_GATHER) |
                                 NNP_KERNEL_SLOT_BIT(NNP_KERNEL_SCATTER_ADD) | NNP_KERNEL_SLOT_BIT(NNP_KERNEL_RANDOM);
constexpr uint32_t kAll = NNP_KERNEL_SLOT_BIT(NNP_KERNEL_REQUIRED_COUNT) - 1;
constexpr uint32_t kLacks = NNP_HALF == 1 ? kSecondHalf : kAll & ~kSecondHalf;
constexpr const char* kName = NNP_HALF == 1 ? "halfway" : "otherhalf";

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  nnp::reference::g_api = api;
  halfway = *nnp::reference::kernel_table();
  const auto lacks = [](nnp_kernel_slot slot) { return (kLacks >> slot & 1u) != 0; };
  if (lacks(NNP_KERNEL_COPY)) halfway.copy = nullptr;
  if (lacks(NNP_KERNEL_FILL)) halfway.fill = nullptr;
  if (lacks(NNP_KERNEL_UNARY)) halfway.unary = nullptr;
  if (lacks(NNP_KERNEL_BINARY)) halfway.binary = nullptr;
  if (lacks(NNP_KERNEL_WHERE)) halfway.where = nullptr;
  if (lacks(NNP_KERNEL_REDUCE)) halfway.reduce = nullptr;
  if (lacks(NNP_KERNEL_GEMM)) halfway.gemm = nullptr;
  if (lacks(NNP_KERNEL_SOFTMAX)) halfway.softmax = nullptr;
  if (lacks(NNP_KERNEL_INDEX_SELECT)) halfway.index_select = nullptr;
  if (lacks(NNP_KERNEL_GATHER)) halfway.gather = nullptr;
  if (lacks(NNP_KERNEL_SCATTER_ADD)) halfway.scatter_add = nullptr;
  if (lacks(NNP_KERNEL_RANDOM)) halfway.random = nullptr;
  static nnp_backend backend;
  nnp_host_backend_init(&backend, kName, 1, &halfway);
  backend.flags = 0;  // its memory is the device's: the core copies, never reads it in place
  nnp::test_backend::use_host_heap(
      backend, "half a backend: the reference kernels in six slots, cpu's for the rest (tests only)");
  backend.dtypes = NNP_DTYPES_1_7;
  backend.unary_ops = NNP_UNARY_OPS_1_7;
  backend.missing_kernels = kLacks;
  return api->register_backend(host, &backend);
}

}  // namespace

NNP_PLUGIN(NNP_HALF == 1 ? "test.halfway" : "test.otherhalf", "0",
           "half the required kernels; the core runs the rest on cpu (tests only)", init)
