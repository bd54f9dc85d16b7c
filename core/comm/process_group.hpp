// A process group (torch.distributed's): this process's membership, through
// one communication backend, of a group that runs collectives together, and
// the collectives' work handles. The core checks every argument here, so a
// plugin only moves data.
#pragma once

#include <nnp/plugin.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../tensor.hpp"
#include "comm_registry.hpp"
#include "store.hpp"

struct nnp_process_group {
  std::atomic<int32_t> refs{1};  // the caller's, and one per live work
  const nnp::core::comm::CommRecord* comm = nullptr;
  int32_t rank = 0, size = 1;
  int64_t timeout_ms = 0;
  nnp_device device{};
  std::string label;  // "process group 'gloo' (rank 1 of 2)"
  std::unique_ptr<nnp::core::comm::Store> store;
  std::string prefix;  // the group's keys in the store
  std::unique_ptr<nnp::core::comm::PrefixedStore> plugin_store;
  nnp_comm_group* group = nullptr;
  std::mutex calls;  // one thread at a time into the plugin
};

struct nnp_work {
  nnp_process_group* owner = nullptr;  // one reference held
  nnp_comm_work* work = nullptr;
  const char* op = "";
  std::vector<nnp::core::TensorRef> keep;  // alive until the collective completes
  bool finished = false;
  nnp_status status = NNP_OK;
  std::string message;
};

namespace nnp::core::comm {

// Joins a group (the rendezvous and the plugin's group_new); throws naming
// what disagrees.
nnp_process_group* new_process_group(const nnp_process_group_options& options);
void release(nnp_process_group* group);

// Start a collective: a work handle the caller waits for.
nnp_work* all_reduce(nnp_process_group& group, const Tensor& tensor, nnp_comm_op op);
nnp_work* broadcast(nnp_process_group& group, const Tensor& tensor, int32_t root);
nnp_work* all_gather(nnp_process_group& group, const Tensor& input, const Tensor& output);
nnp_work* reduce_scatter(nnp_process_group& group, const Tensor& input, const Tensor& output, nnp_comm_op op);
nnp_work* barrier(nnp_process_group& group);

// Waits (timeout_ms < 0: the group's); throws the collective's failure.
void wait(nnp_work& work, int64_t timeout_ms);
bool test(nnp_work& work);
void release(nnp_work* work);

}  // namespace nnp::core::comm
