// The gloo communication backend: collectives over host tensors (the cpu
// and reference backends) on Debian's libgloo, TCP on any interface. Gloo
// reduces with functions we give it, so every dtype nnplug has is reduced
// here: f16 and bf16 through f32, bool as logical or (SUM, MAX) and and
// (MIN), AVG as SUM then a division by the world size.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <nnp/half.h>
#include <nnp/plugin.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gloo_group.hpp"

#ifndef NNP_PLUGIN_VERSION
#define NNP_PLUGIN_VERSION "0.1.0"
#endif

struct nnp_comm_group {
  std::unique_ptr<nnp::gloo_comm::Group> group;
};
struct nnp_comm_work {
  std::shared_ptr<nnp::gloo_comm::WorkState> state;
};

namespace nnp::gloo_comm {
namespace {

const nnp_api* g_api = nullptr;

nnp_status fail(nnp_status status, const std::string& message) {
  g_api->set_error(status, message.c_str());
  return status;
}

size_t element_size(nnp_dtype dtype) { return g_api->dtype_size(dtype); }
size_t byte_count(const nnp_view& v) {
  size_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= static_cast<size_t>(v.shape[i]);
  return n * element_size(v.dtype);
}

template <typename T, typename Combine>
void combine_all(void* c, const void* a, const void* b, size_t n, Combine combine) {
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = combine(x[i], y[i]);
}

template <typename T>
T apply(nnp_comm_op op, T x, T y) {
  switch (op) {
    case NNP_COMM_MAX: return x > y || x != x ? x : y;  // NaN wins, as torch.maximum
    case NNP_COMM_MIN: return x < y || x != x ? x : y;
    default: return static_cast<T>(x + y);  // SUM, and AVG's sum
  }
}

// One loop per op, the op fixed at compile time, so the compiler vectorizes
// it: the reduction runs on the same cores as training.
template <typename T>
void reduce_typed(nnp_comm_op op, void* c, const void* a, const void* b, size_t n) {
  switch (op) {
    case NNP_COMM_MAX: return combine_all<T>(c, a, b, n, [](T x, T y) { return apply<T>(NNP_COMM_MAX, x, y); });
    case NNP_COMM_MIN: return combine_all<T>(c, a, b, n, [](T x, T y) { return apply<T>(NNP_COMM_MIN, x, y); });
    default: return combine_all<T>(c, a, b, n, [](T x, T y) { return static_cast<T>(x + y); });
  }
}

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

// Gloo's reduce function for dtype and op; an empty one for a combination
// nnplug does not reduce.
ReduceFn reducer(nnp_dtype dtype, nnp_comm_op op) {
  auto typed = [op](auto zero) -> ReduceFn {
    using T = decltype(zero);
    return [op](void* c, const void* a, const void* b, size_t n) { reduce_typed<T>(op, c, a, b, n); };
  };
  auto via_float = [op](float (*load)(uint16_t), uint16_t (*store)(float)) -> ReduceFn {
    return [op, load, store](void* c, const void* a, const void* b, size_t n) {
      combine_all<uint16_t>(c, a, b, n,
                            [&](uint16_t x, uint16_t y) { return store(apply<float>(op, load(x), load(y))); });
    };
  };
  switch (dtype) {
    case NNP_F32: return typed(float{});
    case NNP_F64: return typed(double{});
    case NNP_F16: return via_float(nnp_f16_to_float, nnp_float_to_f16);
    case NNP_BF16: return via_float(nnp_bf16_to_float, nnp_float_to_bf16);
    case NNP_I64: return typed(int64_t{});
    case NNP_I32: return typed(int32_t{});
    case NNP_I8: return typed(int8_t{});
    case NNP_U8: return typed(uint8_t{});
    case NNP_I16: return typed(int16_t{});
    case NNP_U16: return typed(uint16_t{});
    case NNP_U32: return typed(uint32_t{});
    case NNP_U64: return typed(uint64_t{});
    case NNP_BOOL:
      return [op](void* c, const void* a, const void* b, size_t n) {
        combine_all<uint8_t>(
            c, a, b, n, [op](uint8_t x, uint8_t y) -> uint8_t { return op == NNP_COMM_MIN ? (x && y) : (x || y); });
      };
    default: return {};
  }
}

// AVG's division, in place over count elements.
void divide(void* data, nnp_dtype dtype, size_t count, int32_t world) {
  auto scale = [&](auto* p) {
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<std::remove_reference_t<decltype(*p)>>(p[i] / world);
  };
  auto scale16 = [&](uint16_t* p, float (*load)(uint16_t), uint16_t (*store)(float)) {
    for (size_t i = 0; i < count; ++i) p[i] = store(load(p[i]) / static_cast<float>(world));
  };
  if (dtype == NNP_F32) scale(static_cast<float*>(data));
  if (dtype == NNP_F64) scale(static_cast<double*>(data));
  if (dtype == NNP_F16) scale16(static_cast<uint16_t*>(data), nnp_f16_to_float, nnp_float_to_f16);
  if (dtype == NNP_BF16) scale16(static_cast<uint16_t*>(data), nnp_bf16_to_float, nnp_float_to_bf16);
}

nnp_status started(std::shared_ptr<WorkState> state, nnp_comm_work** out) {
  *out = new nnp_comm_work{std::move(state)};
  return NNP_OK;
}

// All-reduce of count elements at data (in place), on the worker. Gloo
// splits the buffer between ranks by its element type, so it is given an
// unsigned type of the dtype's width (an element is never cut in two) and
// our function, which knows the dtype, reduces.
template <typename Word>
void all_reduce_words(const Context& context, uint32_t tag, std::chrono::milliseconds timeout, void* data, size_t count,
                      const ReduceFn& fn) {
  ::gloo::AllreduceOptions opts(context);
  opts.setOutput(static_cast<Word*>(data), count);
  opts.setReduceFunction(fn);
  opts.setTag(tag);
  opts.setTimeout(timeout);
  ::gloo::allreduce(opts);
}

void all_reduce_now(const Context& context, uint32_t tag, std::chrono::milliseconds timeout, void* data, size_t count,
                    nnp_dtype dtype, nnp_comm_op op) {
  if (count == 0) return;
  const ReduceFn fn = reducer(dtype, op);
  switch (element_size(dtype)) {
    case 1: all_reduce_words<uint8_t>(context, tag, timeout, data, count, fn); break;
    case 2: all_reduce_words<uint16_t>(context, tag, timeout, data, count, fn); break;
    case 4: all_reduce_words<uint32_t>(context, tag, timeout, data, count, fn); break;
    default: all_reduce_words<uint64_t>(context, tag, timeout, data, count, fn); break;
  }
  if (op == NNP_COMM_AVG) divide(data, dtype, count, context->size);
}

nnp_status group_new(void*, int32_t rank, int32_t size, nnp_device, const nnp_comm_store* store, int64_t timeout_ms,
                     nnp_comm_group** out) {
  try {
    *out = new nnp_comm_group{std::make_unique<Group>(g_api, rank, size, store, timeout_ms)};
    return NNP_OK;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return fail(what.find("imed out") != std::string::npos || what.find("did not appear") != std::string::npos
                    ? NNP_TIMEOUT
                    : NNP_COMM_ERROR,
                "gloo: rank " + std::to_string(rank) + " of " + std::to_string(size) +
                    " could not connect to the others: " + what);
  }
}

void group_release(void*, nnp_comm_group* group) { delete group; }

nnp_status all_reduce(nnp_comm_group* g, const nnp_view* tensor, nnp_comm_op op, nnp_comm_work** out) {
  if (!reducer(tensor->dtype, op)) return fail(NNP_DTYPE_MISMATCH, "gloo: all_reduce cannot reduce this dtype");
  void* data = tensor->data;
  const nnp_dtype dtype = tensor->dtype;
  const size_t count = byte_count(*tensor) / element_size(dtype);
  const auto timeout = g->group->timeout();
  return started(
      g->group->run("all_reduce",
                    [=](const Context& c, uint32_t tag) { all_reduce_now(c, tag, timeout, data, count, dtype, op); }),
      out);
}

nnp_status broadcast(nnp_comm_group* g, const nnp_view* tensor, int32_t root, nnp_comm_work** out) {
  auto* data = static_cast<uint8_t*>(tensor->data);
  const size_t bytes = byte_count(*tensor);
  const auto timeout = g->group->timeout();
  return started(g->group->run("broadcast",
                               [=](const Context& c, uint32_t tag) {
                                 if (bytes == 0) return;
                                 ::gloo::BroadcastOptions opts(c);
                                 opts.setOutput(data, bytes);
                                 opts.setRoot(root);
                                 opts.setTag(tag);
                                 opts.setTimeout(timeout);
                                 ::gloo::broadcast(opts);
                               }),
                 out);
}

nnp_status all_gather(nnp_comm_group* g, const nnp_view* input, const nnp_view* output, nnp_comm_work** out) {
  auto* in = static_cast<uint8_t*>(input->data);
  auto* whole = static_cast<uint8_t*>(output->data);
  const size_t bytes = byte_count(*input);
  const int32_t size = g->group->size();
  const auto timeout = g->group->timeout();
  return started(g->group->run("all_gather",
                               [=](const Context& c, uint32_t tag) {
                                 if (bytes == 0) return;
                                 ::gloo::AllgatherOptions opts(c);
                                 opts.setInput(in, bytes);
                                 opts.setOutput(whole, bytes * static_cast<size_t>(size));
                                 opts.setTag(tag);
                                 opts.setTimeout(timeout);
                                 ::gloo::allgather(opts);
                               }),
                 out);
}

// An all-reduce of a copy of the whole input, then this rank's share: twice
// the traffic of a ring reduce-scatter, which Gloo's new API lacks.
nnp_status reduce_scatter(nnp_comm_group* g, const nnp_view* input, const nnp_view* output, nnp_comm_op op,
                          nnp_comm_work** out) {
  if (!reducer(input->dtype, op)) return fail(NNP_DTYPE_MISMATCH, "gloo: reduce_scatter cannot reduce this dtype");
  const auto* in = static_cast<const uint8_t*>(input->data);
  auto* share = static_cast<uint8_t*>(output->data);
  const nnp_dtype dtype = input->dtype;
  const size_t bytes = byte_count(*output), width = element_size(dtype);
  const int32_t rank = g->group->rank(), size = g->group->size();
  const auto timeout = g->group->timeout();
  return started(g->group->run("reduce_scatter",
                               [=](const Context& c, uint32_t tag) {
                                 std::vector<uint8_t> whole(in, in + bytes * static_cast<size_t>(size));
                                 all_reduce_now(c, tag, timeout, whole.data(), whole.size() / width, dtype, op);
                                 if (bytes > 0)
                                   std::memcpy(share, whole.data() + bytes * static_cast<size_t>(rank), bytes);
                               }),
                 out);
}

nnp_status barrier(nnp_comm_group* g, nnp_comm_work** out) {
  const auto timeout = g->group->timeout();
  return started(g->group->run("barrier",
                               [=](const Context& c, uint32_t tag) {
                                 ::gloo::BarrierOptions opts(c);
                                 opts.setTag(tag);
                                 opts.setTimeout(timeout);
                                 ::gloo::barrier(opts);
                               }),
                 out);
}

nnp_status wait(nnp_comm_work* work, int64_t timeout_ms) {
  WorkState& s = *work->state;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.finished.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return s.done; }))
    return fail(NNP_TIMEOUT, "gloo: the collective did not finish within " + std::to_string(timeout_ms) + " ms (" +
                                 s.waiting_on + "): a peer stalled, died or became unreachable");
  if (s.status != NNP_OK) return fail(s.status, s.message);
  return NNP_OK;
}

nnp_status test(nnp_comm_work* work, int32_t* done) {
  std::lock_guard<std::mutex> lock(work->state->mutex);
  *done = work->state->done ? 1 : 0;
  return NNP_OK;
}

void work_release(nnp_comm_work* work) { delete work; }

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static const nnp_comm comm = [] {
    nnp_comm c{};
    c.struct_size = sizeof c;
    c.name = "gloo";
    c.backends = "cpu,reference";
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
    return c;
  }();
  return api->register_comm(host, &comm);
}

}  // namespace
}  // namespace nnp::gloo_comm

NNP_PLUGIN("nnplug.gloo", NNP_PLUGIN_VERSION, "the gloo communication backend: collectives over TCP for host tensors",
           nnp::gloo_comm::init)
