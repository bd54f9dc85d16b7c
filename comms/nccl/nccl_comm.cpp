// The nccl communication backend: collectives over CUDA tensors with the
// NCCL of the CUDA toolkit, as PyTorch's ProcessGroupNCCL. The libraries are
// opened on first use (nccl_runtime.hpp), so the plugin loads without a GPU
// and `nnplug plugins` shows why it cannot form groups there.
//
// Each group has its own stream: a collective waits (on the GPU) for what
// the cuda backend queued before it on the device's stream, runs on the
// group's stream, and records an event that wait() and test() poll, so
// backward's kernels and the reductions of finished buckets overlap.
#include <nnp/plugin.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "nccl_runtime.hpp"

#ifndef NNP_PLUGIN_VERSION
#define NNP_PLUGIN_VERSION "0.1.0"
#endif

struct nnp_comm_group {
  const nnp::nccl_comm::Runtime* rt = nullptr;
  int device = 0, rank = 0, size = 1;
  int64_t timeout_ms = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;   // the group's collectives
  cudaStream_t compute = nullptr;  // the cuda backend's stream for the device
  void* scratch = nullptr;         // one int for barrier
  std::mutex mutex;
  std::string failure;  // set once the communicator failed or was aborted
  bool aborted = false;
};

struct nnp_comm_work {
  nnp_comm_group* group;
  cudaEvent_t done;
};

namespace nnp::nccl_comm {
namespace {

const nnp_api* g_api = nullptr;

nnp_status fail(nnp_status status, const std::string& message) {
  g_api->set_error(status, message.c_str());
  return status;
}

nnp_status cuda_failed(const Runtime& rt, cudaError_t error, const char* doing) {
  return fail(NNP_DEVICE_ERROR, std::string("nccl: ") + doing + ": " + rt.cudaGetErrorString(error));
}

bool nccl_type(nnp_dtype dtype, ncclDataType_t& out) {
  switch (dtype) {
    case NNP_F32: out = ncclFloat32; return true;
    case NNP_F64: out = ncclFloat64; return true;
    case NNP_F16: out = ncclFloat16; return true;
    case NNP_BF16: out = ncclBfloat16; return true;
    case NNP_I64: out = ncclInt64; return true;
    case NNP_I32: out = ncclInt32; return true;
    case NNP_I8: out = ncclInt8; return true;
    case NNP_U32: out = ncclUint32; return true;
    case NNP_U64: out = ncclUint64; return true;
    case NNP_U8:
    case NNP_BOOL: out = ncclUint8; return true;
    default: return false;
  }
}

// bool reduces as logical or (SUM, MAX) and and (MIN), as PyTorch's NCCL group.
ncclRedOp_t nccl_op(nnp_comm_op op, nnp_dtype dtype) {
  switch (op) {
    case NNP_COMM_AVG: return ncclAvg;
    case NNP_COMM_MAX: return ncclMax;
    case NNP_COMM_MIN: return ncclMin;
    default: return dtype == NNP_BOOL ? ncclMax : ncclSum;
  }
}

size_t element_count(const nnp_view& v) {
  size_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= static_cast<size_t>(v.shape[i]);
  return n;
}

void release_group(nnp_comm_group* g) {
  if (g->rt != nullptr) {
    g->rt->cudaSetDevice(g->device);
    if (g->comm != nullptr && !g->aborted) g->rt->ncclCommDestroy(g->comm);
    if (g->stream != nullptr) g->rt->cudaStreamDestroy(g->stream);
    if (g->scratch != nullptr) g->rt->cudaFree(g->scratch);
  }
  delete g;
}

const char* unavailable_reason(void*) {
  const char* reason = nullptr;
  return runtime(&reason) == nullptr ? reason : nullptr;
}

nnp_status group_new(void*, int32_t rank, int32_t world_size, nnp_device device, const nnp_comm_store* store,
                     int64_t timeout_ms, nnp_comm_group** out) {
  const char* reason = nullptr;
  const Runtime* rt = runtime(&reason);
  if (rt == nullptr) return fail(NNP_DEVICE_ERROR, std::string("nccl: cannot form a group here: ") + reason);
  auto* g = new nnp_comm_group();
  g->rt = rt;
  g->device = device.index;
  g->rank = rank;
  g->size = world_size;
  g->timeout_ms = timeout_ms;
  auto failed = [&](nnp_status status) {
    release_group(g);
    return status;
  };
  if (cudaError_t e = rt->cudaSetDevice(device.index); e != cudaSuccess)
    return failed(cuda_failed(*rt, e, "selecting the device"));
  void* compute = nullptr;
  if (nnp_status s = g_api->device_stream(device, &compute); s != NNP_OK) return failed(s);
  g->compute = static_cast<cudaStream_t>(compute);
  // Rank 0 makes the communicator's id; the others read it from the store.
  ncclUniqueId id{};
  if (rank == 0) {
    if (ncclResult_t r = rt->ncclGetUniqueId(&id); r != ncclSuccess)
      return failed(fail(NNP_COMM_ERROR, std::string("nccl: ncclGetUniqueId: ") + rt->ncclGetErrorString(r)));
    if (nnp_status s = store->set(store->state, "nccl_unique_id", &id, sizeof id); s != NNP_OK) return failed(s);
  } else {
    size_t size = 0;
    if (nnp_status s = store->get(store->state, "nccl_unique_id", &id, sizeof id, &size, timeout_ms); s != NNP_OK)
      return failed(s);
    if (size != sizeof id)
      return failed(fail(NNP_COMM_ERROR, "nccl: rank 0 published an id of " + std::to_string(size) + " bytes, not " +
                                             std::to_string(sizeof id)));
  }
  if (ncclResult_t r = rt->ncclCommInitRank(&g->comm, world_size, id, rank); r != ncclSuccess) {
    g->comm = nullptr;
    return failed(fail(NNP_COMM_ERROR, std::string("nccl: joining as rank ") + std::to_string(rank) + " of " +
                                           std::to_string(world_size) + ": " + rt->ncclGetErrorString(r)));
  }
  if (cudaError_t e = rt->cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking); e != cudaSuccess)
    return failed(cuda_failed(*rt, e, "creating the group's stream"));
  if (cudaError_t e = rt->cudaMalloc(&g->scratch, sizeof(int32_t)); e != cudaSuccess)
    return failed(cuda_failed(*rt, e, "allocating the barrier's word"));
  *out = g;
  return NNP_OK;
}

void group_release(void*, nnp_comm_group* g) { release_group(g); }

// Orders the collective after the device's queued work, enqueues it on the
// group's stream and gives a work that completes with it.
template <typename Enqueue>
nnp_status launch(nnp_comm_group* g, const char* what, Enqueue enqueue, nnp_comm_work** out) {
  const Runtime& rt = *g->rt;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    if (!g->failure.empty()) return fail(NNP_COMM_ERROR, g->failure);
  }
  if (cudaError_t e = rt.cudaSetDevice(g->device); e != cudaSuccess) return cuda_failed(rt, e, "selecting the device");
  cudaEvent_t ready = nullptr, done = nullptr;
  if (cudaError_t e = rt.cudaEventCreateWithFlags(&ready, cudaEventDisableTiming); e != cudaSuccess)
    return cuda_failed(rt, e, "creating an event");
  cudaError_t e = rt.cudaEventRecord(ready, g->compute);
  if (e == cudaSuccess) e = rt.cudaStreamWaitEvent(g->stream, ready, 0);
  rt.cudaEventDestroy(ready);  // released once the wait has passed it
  if (e != cudaSuccess) return cuda_failed(rt, e, "ordering after the device's stream");
  if (ncclResult_t r = enqueue(g->stream); r != ncclSuccess)
    return fail(NNP_COMM_ERROR, std::string("nccl: ") + what + " failed: " + rt.ncclGetErrorString(r));
  if (e = rt.cudaEventCreateWithFlags(&done, cudaEventDisableTiming); e != cudaSuccess)
    return cuda_failed(rt, e, "creating an event");
  if (e = rt.cudaEventRecord(done, g->stream); e != cudaSuccess) {
    rt.cudaEventDestroy(done);
    return cuda_failed(rt, e, "recording the collective's end");
  }
  *out = new nnp_comm_work{g, done};
  return NNP_OK;
}

nnp_status all_reduce(nnp_comm_group* g, const nnp_view* tensor, nnp_comm_op op, nnp_comm_work** out) {
  ncclDataType_t type;
  if (!nccl_type(tensor->dtype, type)) return fail(NNP_DTYPE_MISMATCH, "nccl: all_reduce cannot reduce this dtype");
  const ncclRedOp_t reduce = nccl_op(op, tensor->dtype);
  const size_t count = element_count(*tensor);
  return launch(
      g, "all_reduce",
      [&](cudaStream_t s) { return g->rt->ncclAllReduce(tensor->data, tensor->data, count, type, reduce, g->comm, s); },
      out);
}

nnp_status broadcast(nnp_comm_group* g, const nnp_view* tensor, int32_t root, nnp_comm_work** out) {
  ncclDataType_t type;
  if (!nccl_type(tensor->dtype, type)) return fail(NNP_DTYPE_MISMATCH, "nccl: broadcast cannot move this dtype");
  const size_t count = element_count(*tensor);
  return launch(
      g, "broadcast",
      [&](cudaStream_t s) { return g->rt->ncclBroadcast(tensor->data, tensor->data, count, type, root, g->comm, s); },
      out);
}

nnp_status all_gather(nnp_comm_group* g, const nnp_view* input, const nnp_view* output, nnp_comm_work** out) {
  ncclDataType_t type;
  if (!nccl_type(input->dtype, type)) return fail(NNP_DTYPE_MISMATCH, "nccl: all_gather cannot move this dtype");
  const size_t count = element_count(*input);
  return launch(
      g, "all_gather",
      [&](cudaStream_t s) { return g->rt->ncclAllGather(input->data, output->data, count, type, g->comm, s); }, out);
}

nnp_status reduce_scatter(nnp_comm_group* g, const nnp_view* input, const nnp_view* output, nnp_comm_op op,
                          nnp_comm_work** out) {
  ncclDataType_t type;
  if (!nccl_type(input->dtype, type)) return fail(NNP_DTYPE_MISMATCH, "nccl: reduce_scatter cannot reduce this dtype");
  const ncclRedOp_t reduce = nccl_op(op, input->dtype);
  const size_t count = element_count(*output);
  return launch(
      g, "reduce_scatter",
      [&](cudaStream_t s) {
        return g->rt->ncclReduceScatter(input->data, output->data, count, type, reduce, g->comm, s);
      },
      out);
}

// An all-reduce of one word: every rank has reached it when it completes.
nnp_status barrier(nnp_comm_group* g, nnp_comm_work** out) {
  return launch(
      g, "barrier",
      [&](cudaStream_t s) { return g->rt->ncclAllReduce(g->scratch, g->scratch, 1, ncclInt32, ncclSum, g->comm, s); },
      out);
}

// Marks the group failed and aborts its communicator, which ends every
// kernel of it still waiting for a peer.
void abort_group(nnp_comm_group* g, const std::string& why) {
  std::lock_guard<std::mutex> lock(g->mutex);
  if (!g->failure.empty()) return;
  g->failure = why;
  g->rt->ncclCommAbort(g->comm);
  g->aborted = true;
}

nnp_status wait(nnp_comm_work* work, int64_t timeout_ms) {
  nnp_comm_group* g = work->group;
  const Runtime& rt = *g->rt;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const cudaError_t q = rt.cudaEventQuery(work->done);
    if (q == cudaSuccess) return NNP_OK;
    if (q != cudaErrorNotReady) return cuda_failed(rt, q, "waiting for the collective");
    {
      std::lock_guard<std::mutex> lock(g->mutex);
      if (!g->failure.empty()) return fail(NNP_COMM_ERROR, g->failure);
    }
    ncclResult_t async = ncclSuccess;
    if (rt.ncclCommGetAsyncError(g->comm, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress) {
      const std::string why = std::string("nccl: the communicator failed: ") + rt.ncclGetErrorString(async) +
                              " (a peer died or its connection broke)";
      abort_group(g, why);
      return fail(NNP_COMM_ERROR, why);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string why = "nccl: the collective did not finish within " + std::to_string(timeout_ms) +
                              " ms: a peer stalled or died (the group is aborted)";
      abort_group(g, why);
      return fail(NNP_TIMEOUT, why);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

nnp_status test(nnp_comm_work* work, int32_t* done) {
  const cudaError_t q = work->group->rt->cudaEventQuery(work->done);
  if (q != cudaSuccess && q != cudaErrorNotReady) return cuda_failed(*work->group->rt, q, "testing the collective");
  *done = q == cudaSuccess ? 1 : 0;
  return NNP_OK;
}

void work_release(nnp_comm_work* work) {
  work->group->rt->cudaEventDestroy(work->done);
  delete work;
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static const nnp_comm comm = [] {
    nnp_comm c{};
    c.struct_size = sizeof c;
    c.name = "nccl";
    c.backends = "cuda";
    c.group_new = group_new;
    c.group_release = group_release;
    c.all_reduce = all_reduce;
    c.broadcast = broadcast;
    c.all_gather = all_gather;
    c.reduce_scatter = reduce_scatter;
    c.barrier = barrier;
    c.wait = wait;
    c.test = test;
    c.work_release = work_release;
    c.unavailable_reason = unavailable_reason;
    return c;
  }();
  return api->register_comm(host, &comm);
}

}  // namespace
}  // namespace nnp::nccl_comm

NNP_PLUGIN("nnplug.nccl", NNP_PLUGIN_VERSION,
           "the nccl communication backend: collectives for CUDA tensors (NCCL, opened on first use)",
           nnp::nccl_comm::init)
