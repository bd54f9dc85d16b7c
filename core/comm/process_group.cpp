#include "process_group.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "../capture/tape.hpp"
#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../plugin_registry.hpp"

namespace nnp::core::comm {
namespace {

constexpr int64_t kDefaultTimeoutMs = 300000;  // torch.distributed's five minutes
constexpr int32_t kMaxWorldSize = 1 << 16;

// A failed plugin call: its status and the message it set.
[[noreturn]] void plugin_failed(const nnp_process_group& g, const char* op, nnp_status status) {
  const std::string message = last_error_status() == status ? last_error_message() : "";
  fail(status, g.label, ": ", op, " failed", message.empty() ? "" : ": ", message);
}

std::string join_value(int32_t world, const std::string& comm, uint64_t nonce) {
  return "world=" + std::to_string(world) + " comm=" + comm + " nonce=" + std::to_string(nonce);
}
std::string text(const std::vector<char>& value) { return std::string(value.begin(), value.end()); }
std::vector<char> bytes(const std::string& text) { return std::vector<char>(text.begin(), text.end()); }

// The job's secret: the options' job_token (since 1.16), else NNP_JOB_TOKEN.
std::string job_secret(const nnp_process_group_options& options) {
  if (options.struct_size >= NNP_PROCESS_GROUP_OPTIONS_SIZE_1_16 && options.job_token != nullptr)
    return options.job_token;
  const char* env = std::getenv("NNP_JOB_TOKEN");
  return env ? env : "";
}

// The same init_method may host several groups one after another: each
// process numbers its groups per (init_method, rank), so every rank gives
// its k-th group the same keys.
std::string next_prefix(const std::string& init_method, int32_t rank) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int32_t>, int> counts;
  std::lock_guard<std::mutex> lock(mutex);
  return "g" + std::to_string(counts[{init_method, rank}]++) + "/";
}

// Every rank says what it thinks the group is; rank 0 compares and gives
// the verdict, naming the join (its nonce) it read for each rank. A rank
// accepts only a verdict that names its own join: one that names another is
// an earlier run's, left in the store, or a sign that two processes claim
// the rank. Returns rank 0's nonce, which names this run.
std::string rendezvous(nnp_process_group& g, const std::string& prefix) {
  const uint64_t nonce = std::random_device{}() * uint64_t{0x9E3779B97F4A7C15} ^ std::random_device{}();
  const std::string mine = join_value(g.size, g.comm->name, nonce);
  const std::string my_key = prefix + "join/" + std::to_string(g.rank);
  const std::string my_nonce = " " + std::to_string(g.rank) + ":" + std::to_string(nonce) + " ";
  g.store->set(my_key, bytes(mine));
  std::string verdict;
  if (g.rank == 0) {
    std::string refusal, joins = my_nonce;
    for (int32_t r = 1; r < g.size; ++r) {
      const std::string theirs = text(g.store->get(prefix + "join/" + std::to_string(r), g.timeout_ms));
      const std::string expected = join_value(g.size, g.comm->name, 0);
      const std::string head = expected.substr(0, expected.find(" nonce="));
      const size_t at = theirs.find(" nonce=");
      joins += std::to_string(r) + ":" + (at == std::string::npos ? "" : theirs.substr(at + 7)) + " ";
      if (refusal.empty() && theirs.compare(0, head.size() + 7, head + " nonce=") != 0)
        refusal = "rank " + std::to_string(r) + " joined with '" + theirs.substr(0, at) + "' where rank 0 has '" +
                  head + "': every rank needs the same world size and backend";
    }
    verdict = joins + "|" + (refusal.empty() ? "ok" : refusal);
    g.store->set(prefix + "verdict", bytes(verdict));
  } else {
    // The verdict there may be an earlier run's: wait for one naming us.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(g.timeout_ms);
    for (;;) {
      verdict = text(g.store->get(prefix + "verdict", g.timeout_ms));
      if (verdict.find(my_nonce) < verdict.find('|')) break;
      if (!g.store->may_hold_earlier_runs())
        fail(NNP_COMM_ERROR, g.label, ": another process joined as rank ", g.rank,
             " too (rank 0 chose it): give every process its own rank (RANK)");
      if (std::chrono::steady_clock::now() >= deadline)
        fail(NNP_COMM_ERROR, g.label, ": rank 0's verdict in ", g.store->describe(), " names another process as rank ",
             g.rank,
             ": the store holds an earlier run's keys (give each run a fresh folder, or empty it), or two "
             "processes claim rank ",
             g.rank, " (give each its own RANK)");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  const std::string outcome = verdict.substr(verdict.find('|') + 1);
  if (outcome != "ok") fail(NNP_COMM_ERROR, g.label, ": refused at start: ", outcome);
  if (text(g.store->get(my_key, g.timeout_ms)) != mine)
    fail(NNP_COMM_ERROR, g.label, ": another process joined as rank ", g.rank,
         " too: give every process its own rank (RANK)");
  return verdict.substr(3, verdict.find(' ', 3) - 3);  // " 0:<nonce> ..."
}

nnp_device group_device(const CommRecord& comm, const char* name) {
  if (name != nullptr) return parse_device(name);
  PluginRegistry& plugins = PluginRegistry::instance();
  for (const std::string& backend : comm.backend_names)
    if (const BackendRecord* record = plugins.find_backend(backend)) return nnp_device{record->id(), 0};
  fail(NNP_NOT_FOUND, "communication backend '", comm.name, "' serves ", comm.backends, ", none of which is loaded");
}

void check_tensor(const nnp_process_group& g, const Tensor& t, const char* op, const char* what) {
  const std::string backend = t.backend().name();
  if (!g.comm->serves(backend))
    fail(NNP_DEVICE_MISMATCH, g.label, ": ", op, ": ", what, " is on ", device_name(t.device), ", which '",
         g.comm->name, "' does not serve (it moves tensors of ", g.comm->backends, ")");
  if (t.device.backend == g.device.backend && t.device.index != g.device.index)
    fail(NNP_DEVICE_MISMATCH, g.label, ": ", op, ": ", what, " is on ", device_name(t.device),
         " but the group was made for ", device_name(g.device));
  if (!t.is_contiguous())
    fail(NNP_INVALID_ARGUMENT, g.label, ": ", op, ": ", what, " is not contiguous: pass contiguous() of it");
}

void check_op(const nnp_process_group& g, nnp_comm_op op, nnp_dtype dtype, const char* name) {
  if (op < NNP_COMM_SUM || op > NNP_COMM_MIN)
    fail(NNP_INVALID_ARGUMENT, g.label, ": ", name, ": unknown reduction ", op, " (SUM, AVG, MAX or MIN)");
  if (op == NNP_COMM_AVG && !is_floating(dtype))
    fail(NNP_DTYPE_MISMATCH, g.label, ": ", name, ": AVG of ", dtype_name(dtype),
         " values would round; use SUM, or a floating dtype");
}

template <typename Start>
nnp_work* start(nnp_process_group& g, const char* op, std::vector<TensorRef> keep, Start&& call) {
  if (capture::any_recording())
    capture::refuse(std::string("the step calls a collective (") + op + "): collectives are not recorded");
  nnp_comm_work* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(g.calls);
    const nnp_status status = call(&handle);
    if (status != NNP_OK) plugin_failed(g, op, status);
  }
  if (handle == nullptr) fail(NNP_INTERNAL, g.label, ": ", op, ": the backend gave no work handle");
  auto* work = new nnp_work;
  work->owner = &g;
  g.refs.fetch_add(1, std::memory_order_relaxed);
  work->work = handle;
  work->op = op;
  work->keep = std::move(keep);
  return work;
}

// In-place results: a tensor saved for backward must see the write.
void written(const Tensor& t) { t.storage->version.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

nnp_process_group* new_process_group(const nnp_process_group_options& options) {
  if (options.struct_size < NNP_PROCESS_GROUP_OPTIONS_SIZE_1_10)
    fail(NNP_ABI_MISMATCH, "process_group_new: options struct_size ", options.struct_size,
         " is smaller than the first released layout (", NNP_PROCESS_GROUP_OPTIONS_SIZE_1_10, " bytes)");
  if (options.comm == nullptr || *options.comm == '\0')
    fail(NNP_INVALID_ARGUMENT, "process_group_new: name a communication backend (\"gloo\", \"nccl\")");
  PluginRegistry::instance().discover();
  CommRegistry& registry = CommRegistry::instance();
  const CommRecord* comm = registry.find(options.comm);
  if (comm == nullptr) {
    std::string known;
    for (int32_t i = 0; i < registry.count(); ++i) known += (i ? ", " : "") + registry.at(i).name;
    fail(NNP_NOT_FOUND, "process_group_new: no communication backend '", options.comm,
         "' is loaded (loaded: ", known.empty() ? "none" : known,
         "); `nnplug plugins` lists what was found and refused");
  }
  if (const char* reason = comm->unavailable_reason())
    fail(NNP_DEVICE_ERROR, "process_group_new: communication backend '", comm->name,
         "' cannot form groups here: ", reason);
  if (options.world_size < 1 || options.world_size > kMaxWorldSize)
    fail(NNP_INVALID_ARGUMENT, "process_group_new: world size ", options.world_size, " is not from 1 to ",
         kMaxWorldSize);
  if (options.rank < 0 || options.rank >= options.world_size)
    fail(NNP_INVALID_ARGUMENT, "process_group_new: rank ", options.rank, " is not from 0 to ", options.world_size - 1,
         " (world size ", options.world_size, ")");
  if (options.timeout_ms < 0)
    fail(NNP_INVALID_ARGUMENT, "process_group_new: timeout ", options.timeout_ms, " ms is negative");
  if (options.init_method == nullptr || *options.init_method == '\0')
    fail(NNP_INVALID_ARGUMENT, "process_group_new: init_method is empty: file:///a/folder or tcp://host:port");

  auto g = std::make_unique<nnp_process_group>();
  g->comm = comm;
  g->rank = options.rank;
  g->size = options.world_size;
  g->timeout_ms = options.timeout_ms == 0 ? kDefaultTimeoutMs : options.timeout_ms;
  g->label = str_cat("process group '", comm->name, "' (rank ", g->rank, " of ", g->size, ")");
  g->device = group_device(*comm, options.device);
  if (!comm->serves(backend_of(g->device).name()))
    fail(NNP_DEVICE_MISMATCH, g->label, ": device ", device_name(g->device), " is not one that '", comm->name,
         "' serves (", comm->backends, ")");
  g->store = open_store(options.init_method, g->rank, g->timeout_ms, job_secret(options));
  g->prefix = next_prefix(options.init_method, g->rank);
  try {
    // The plugin's keys are this run's alone: none an earlier run left can be read.
    const std::string run = rendezvous(*g, g->prefix);
    g->plugin_store = std::make_unique<PrefixedStore>(*g->store, g->prefix + "comm/" + run + "/");
    const nnp_status status = comm->table.group_new(comm->table.state, g->rank, g->size, g->device,
                                                    g->plugin_store->table(), g->timeout_ms, &g->group);
    if (status != NNP_OK) plugin_failed(*g, "joining", status);
    if (g->group == nullptr) fail(NNP_INTERNAL, g->label, ": the backend's group_new gave no group");
  } catch (const Error&) {
    // A refused start leaves the place clean too, once every rank gave up.
    g->store->leave(g->prefix, g->rank, g->size);
    throw;
  }
  return g.release();
}

void release(nnp_process_group* g) {
  if (g == nullptr || g->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  g->comm->table.group_release(g->comm->table.state, g->group);
  g->store->leave(g->prefix, g->rank, g->size);
  delete g;
}

nnp_work* all_reduce(nnp_process_group& g, const Tensor& t, nnp_comm_op op) {
  check_tensor(g, t, "all_reduce", "tensor");
  check_op(g, op, t.dtype, "all_reduce");
  written(t);
  nnp_view v = kernel_view(t);
  return start(g, "all_reduce", {TensorRef::share(&t)},
               [&](nnp_comm_work** out) { return g.comm->table.all_reduce(g.group, &v, op, out); });
}

nnp_work* broadcast(nnp_process_group& g, const Tensor& t, int32_t root) {
  check_tensor(g, t, "broadcast", "tensor");
  if (root < 0 || root >= g.size)
    fail(NNP_INVALID_ARGUMENT, g.label, ": broadcast: root ", root, " is not a rank (0 to ", g.size - 1, ")");
  written(t);
  nnp_view v = kernel_view(t);
  return start(g, "broadcast", {TensorRef::share(&t)},
               [&](nnp_comm_work** out) { return g.comm->table.broadcast(g.group, &v, root, out); });
}

namespace {
// all_gather's output and reduce_scatter's input: world_size of the other.
void check_pair(const nnp_process_group& g, const Tensor& one, const Tensor& whole, const char* op,
                const char* one_name, const char* whole_name) {
  check_tensor(g, one, op, one_name);
  check_tensor(g, whole, op, whole_name);
  if (one.dtype != whole.dtype)
    fail(NNP_DTYPE_MISMATCH, g.label, ": ", op, ": ", one_name, " is ", dtype_name(one.dtype), " but ", whole_name,
         " is ", dtype_name(whole.dtype));
  if (whole.numel != one.numel * g.size)
    fail(NNP_SHAPE_MISMATCH, g.label, ": ", op, ": ", whole_name, " has ", whole.numel, " elements where ", g.size,
         " x ", one.numel, " (world size x ", one_name, ") were expected");
  if (one.storage == whole.storage)
    fail(NNP_INVALID_ARGUMENT, g.label, ": ", op, ": ", one_name, " and ", whole_name, " share memory");
}
}  // namespace

nnp_work* all_gather(nnp_process_group& g, const Tensor& input, const Tensor& output) {
  check_pair(g, input, output, "all_gather", "input", "output");
  written(output);
  nnp_view in = kernel_view(input), out = kernel_view(output);
  return start(g, "all_gather", {TensorRef::share(&input), TensorRef::share(&output)},
               [&](nnp_comm_work** w) { return g.comm->table.all_gather(g.group, &in, &out, w); });
}

nnp_work* reduce_scatter(nnp_process_group& g, const Tensor& input, const Tensor& output, nnp_comm_op op) {
  check_pair(g, output, input, "reduce_scatter", "output", "input");
  check_op(g, op, input.dtype, "reduce_scatter");
  written(output);
  nnp_view in = kernel_view(input), out = kernel_view(output);
  return start(g, "reduce_scatter", {TensorRef::share(&input), TensorRef::share(&output)},
               [&](nnp_comm_work** w) { return g.comm->table.reduce_scatter(g.group, &in, &out, op, w); });
}

nnp_work* barrier(nnp_process_group& g) {
  return start(g, "barrier", {}, [&](nnp_comm_work** w) { return g.comm->table.barrier(g.group, w); });
}

void wait(nnp_work& w, int64_t timeout_ms) {
  nnp_process_group& g = *w.owner;
  if (!w.finished) {
    const nnp_status status = g.comm->table.wait(w.work, timeout_ms < 0 ? g.timeout_ms : timeout_ms);
    w.finished = true;
    w.status = status;
    if (status != NNP_OK) {
      const std::string message = last_error_status() == status ? last_error_message() : "";
      w.message = str_cat(g.label, ": ", w.op, " failed", message.empty() ? "" : ": ", message);
    }
  }
  if (w.status != NNP_OK) fail(w.status, w.message);
}

bool test(nnp_work& w) {
  if (w.finished) return true;
  int32_t done = 0;
  const nnp_status status = w.owner->comm->table.test(w.work, &done);
  if (status != NNP_OK) plugin_failed(*w.owner, "test", status);
  return done != 0;
}

void release(nnp_work* w) {
  if (w == nullptr) return;
  if (!w->finished) {
    try {
      wait(*w, -1);
    } catch (const Error&) {
      // Releasing a failed collective is not itself an error.
    }
  }
  w->owner->comm->table.work_release(w->work);
  release(w->owner);
  delete w;
}

}  // namespace nnp::core::comm
