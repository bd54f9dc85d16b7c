// nnp/distributed.hpp - collectives across processes (ABI 1.10), as
// torch.distributed: a process group over a communication backend plugin
// ("gloo" for host tensors, "nccl" for CUDA ones), met through a store.
//
//   nnp::distributed::init_process_group("gloo");  // torchrun's environment
//   nnp::Tensor g = ...;
//   nnp::distributed::all_reduce(g, nnp::distributed::ReduceOp::AVG);
//
// init_process_group reads what `nnplug launch` (and torchrun) set when the
// options leave it out: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
// (init_method "tcp://MASTER_ADDR:MASTER_PORT"), and NNP_JOB_TOKEN, the
// job's secret every connection to a tcp store proves (`nnplug launch` makes
// one; torchrun-style starts set it, the same on every rank; since ABI
// 1.16). Every rank must call the
// same collectives in the same order. With async_op a collective returns a
// Work at once: wait() for it before touching its tensors.
#pragma once

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <utility>

namespace nnp::distributed {

enum class ReduceOp : nnp_comm_op { SUM = NNP_COMM_SUM, AVG = NNP_COMM_AVG, MAX = NNP_COMM_MAX, MIN = NNP_COMM_MIN };

// A started collective. A Work that is never waited for is waited for (the
// group's timeout) when it is destroyed.
class Work {
 public:
  Work() = default;
  explicit Work(nnp_work* w) : work_(w, &release) {}
  // Throws Error(NNP_TIMEOUT) after timeout (default: the group's), or the
  // collective's own failure.
  void wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    if (work_) check(api().work_wait(work_.get(), timeout ? timeout->count() : -1));
  }
  bool is_completed() const {
    if (!work_) return true;
    int32_t done = 0;
    check(api().work_test(work_.get(), &done));
    return done != 0;
  }

 private:
  static void release(nnp_work* w) { api().work_release(w); }
  std::shared_ptr<nnp_work> work_;
};

struct ProcessGroupOptions {
  int rank = -1;        // -1: $RANK
  int world_size = -1;  // -1: $WORLD_SIZE
  // "file:///a/folder" or "tcp://host:port"; empty: tcp://$MASTER_ADDR:$MASTER_PORT.
  std::string init_method;
  std::chrono::milliseconds timeout{0};  // 0: five minutes
  std::string device;                    // "cuda:1"; empty: the backend's first device
  // A tcp store's secret, the same on every rank (16 to 4096 bytes); empty:
  // $NNP_JOB_TOKEN, which `nnplug launch` sets.
  std::string job_token;
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ProcessGroup(const std::string& backend, const ProcessGroupOptions& options) {
    const ProcessGroupOptions o = resolved(options);
    nnp_process_group_options raw{};
    raw.struct_size = sizeof raw;
    raw.comm = backend.c_str();
    raw.rank = o.rank;
    raw.world_size = o.world_size;
    raw.init_method = o.init_method.c_str();
    raw.timeout_ms = o.timeout.count();
    raw.device = o.device.empty() ? nullptr : o.device.c_str();
    raw.job_token = o.job_token.empty() ? nullptr : o.job_token.c_str();
    nnp_process_group* group = nullptr;
    check(api().process_group_new(&raw, &group));
    group_.reset(group, [](nnp_process_group* g) { api().process_group_release(g); });
  }

  bool defined() const { return group_ != nullptr; }
  int rank() const { return api().process_group_rank(get()); }
  int size() const { return api().process_group_size(get()); }
  nnp_process_group* get() const {
    if (!group_) throw Error(NNP_INVALID_ARGUMENT, "distributed: no process group (call init_process_group first)");
    return group_.get();
  }

  Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool async_op = false) {
    return run(async_op, [&](nnp_work** w) {
      return api().comm_all_reduce(get(), tensor.get(), static_cast<nnp_comm_op>(op), w);
    });
  }
  Work broadcast(Tensor& tensor, int src, bool async_op = false) {
    return run(async_op, [&](nnp_work** w) { return api().comm_broadcast(get(), tensor.get(), src, w); });
  }
  // output holds world_size inputs one after another (all_gather_into_tensor).
  Work all_gather(Tensor& output, const Tensor& input, bool async_op = false) {
    return run(async_op, [&](nnp_work** w) { return api().comm_all_gather(get(), input.get(), output.get(), w); });
  }
  // input holds world_size outputs one after another (reduce_scatter_tensor).
  Work reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM, bool async_op = false) {
    return run(async_op, [&](nnp_work** w) {
      return api().comm_reduce_scatter(get(), input.get(), output.get(), static_cast<nnp_comm_op>(op), w);
    });
  }
  Work barrier(bool async_op = false) {
    return run(async_op, [&](nnp_work** w) { return api().comm_barrier(get(), w); });
  }

  // What the options leave out, from torchrun's environment.
  static ProcessGroupOptions resolved(ProcessGroupOptions o) {
    auto env = [](const char* name) -> std::string {
      const char* v = std::getenv(name);
      return v ? v : "";
    };
    auto env_int = [&](const char* name) {
      const std::string v = env(name);
      if (v.empty())
        throw Error(NNP_INVALID_ARGUMENT, std::string("init_process_group: ") + name +
                                              " is not set: pass it in the options, or start the ranks with "
                                              "`nnplug launch`");
      try {
        size_t used = 0;
        const int value = std::stoi(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
        return value;
      } catch (const std::exception&) {
        throw Error(NNP_INVALID_ARGUMENT,
                    std::string("init_process_group: ") + name + "='" + v + "' is not an integer");
      }
    };
    if (o.rank < 0) o.rank = env_int("RANK");
    if (o.world_size < 0) o.world_size = env_int("WORLD_SIZE");
    if (o.init_method.empty() || o.init_method == "env://") {
      const std::string addr = env("MASTER_ADDR"), port = env("MASTER_PORT");
      if (addr.empty() || port.empty())
        throw Error(NNP_INVALID_ARGUMENT,
                    "init_process_group: MASTER_ADDR and MASTER_PORT are not set: pass init_method, or start the "
                    "ranks with `nnplug launch`");
      o.init_method = "tcp://" + addr + ":" + port;
    }
    return o;
  }

 private:
  template <typename Call>
  Work run(bool async_op, Call&& call) {
    nnp_work* w = nullptr;
    check(call(async_op ? &w : nullptr));
    return Work(w);
  }
  std::shared_ptr<nnp_process_group> group_;
};

// The default group (torch.distributed's WORLD), for the free functions.
inline ProcessGroup& default_group() {
  static ProcessGroup group;
  return group;
}

inline ProcessGroup& init_process_group(const std::string& backend, const ProcessGroupOptions& options = {}) {
  if (default_group().defined())
    throw Error(NNP_INVALID_ARGUMENT,
                "init_process_group: the default group is already initialized "
                "(destroy_process_group() first)");
  default_group() = ProcessGroup(backend, options);
  return default_group();
}
inline bool is_initialized() { return default_group().defined(); }
inline void destroy_process_group() { default_group() = ProcessGroup(); }
inline int get_rank() { return default_group().rank(); }
inline int get_world_size() { return default_group().size(); }

inline Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool async_op = false) {
  return default_group().all_reduce(tensor, op, async_op);
}
inline Work broadcast(Tensor& tensor, int src, bool async_op = false) {
  return default_group().broadcast(tensor, src, async_op);
}
inline Work all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op = false) {
  return default_group().all_gather(output, input, async_op);
}
inline Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM,
                                  bool async_op = false) {
  return default_group().reduce_scatter(output, input, op, async_op);
}
inline Work barrier(bool async_op = false) { return default_group().barrier(async_op); }

}  // namespace nnp::distributed
