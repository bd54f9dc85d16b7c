// nnp/data_parallel.hpp - DistributedDataParallel (ABI 1.11), as PyTorch's
// torch.nn.parallel.DistributedDataParallel: one process per rank, each with
// a replica of the model and its own share of every batch (DistributedSampler);
// backward leaves every rank with the gradients averaged over all ranks, so
// the optimizers step alike and the replicas stay equal.
//
//   nnp::distributed::init_process_group("gloo");
//   auto ddp = nnp::nn::make<nnp::nn::parallel::DistributedDataParallel>(model);
//   nnp::Tensor loss = criterion(ddp->call({x}), y);
//   loss.backward();  // gradients averaged across ranks when it returns
//   opt.step();
//
// At construction the replicas are checked alike (same parameters: count,
// shapes, dtypes) and rank 0's parameters and buffers are broadcast to all.
// Gradients are packed into buckets (the first 1 MB, then bucket_cap_mb) in
// reverse registration order, roughly the order backward produces them; a
// bucket is all-reduced (asynchronously, in bucket order on every rank) as
// soon as backward has filled it, and all are awaited before backward
// returns. Inside no_sync() gradients accumulate locally; the first backward
// after it reduces what accumulated. The module is the child "module", so the
// state dict's keys start with "module." as in PyTorch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <nnp/distributed.hpp>
#include <nnp/nn.hpp>
#include <nnp/options.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnp::nn::parallel {

struct DistributedDataParallelOptions {
  // Bucket size in MiB (PyTorch's default 25); the first bucket is capped
  // at 1 MiB so that its reduction starts early.
  NNP_ARG(double, bucket_cap_mb) = 25;
  // A parameter that gets no gradient in a backward (a branch not taken) is
  // reduced as zero instead of failing that backward; one no rank used
  // keeps the .grad it had.
  NNP_ARG(bool, find_unused_parameters) = false;
  // Buffers (running statistics) are copied from rank 0 before each forward.
  NNP_ARG(bool, broadcast_buffers) = true;
};

class DistributedDataParallel : public Module {
 public:
  explicit DistributedDataParallel(ModuleHandle module, DistributedDataParallelOptions options = {},
                                   distributed::ProcessGroup group = distributed::default_group())
      : Module("DistributedDataParallel"),
        module_(std::move(module)),
        options_(options),
        reducer_(std::make_unique<Reducer>(std::move(group), options)) {
    if (!(options.bucket_cap_mb() > 0))
      throw Error(NNP_INVALID_ARGUMENT, "DistributedDataParallel: bucket_cap_mb must be > 0");
    register_module("module", module_);
    NoGradGuard no_grad;
    reducer_->verify_same_model(module_.named_parameters());
    for (auto& [name, t] : module_.named_parameters()) reducer_->group.broadcast(t, 0);
    for (auto& [name, t] : module_.named_buffers()) reducer_->group.broadcast(t, 0);
    reducer_->build(module_.named_parameters());
  }

  ModuleHandle& module() { return module_; }
  const distributed::ProcessGroup& process_group() const { return reducer_->group; }

  Tensor forward(const std::vector<Tensor>& inputs) override {
    sync_buffers();
    return module_.call(inputs);
  }
  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    sync_buffers();
    return module_.call_values(args);
  }

  // While the returned guard lives, backward leaves the gradients local
  // (accumulating, for gradient accumulation); the first backward after it
  // reduces them.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp) : ddp_(&ddp), before_(ddp.reducer_->require_sync) {
      ddp.reducer_->require_sync = false;
    }
    NoSync(NoSync&& other) noexcept : ddp_(std::exchange(other.ddp_, nullptr)), before_(other.before_) {}
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;
    NoSync& operator=(NoSync&&) = delete;
    ~NoSync() {
      if (ddp_) ddp_->reducer_->require_sync = before_;
    }

   private:
    DistributedDataParallel* ddp_;
    bool before_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  // The buckets, each a list of indices into module().parameters() (those
  // that require grad), in the order they are reduced.
  std::vector<std::vector<size_t>> bucket_indices() const {
    std::vector<std::vector<size_t>> out;
    for (const Bucket& b : reducer_->buckets) out.push_back(b.params);
    return out;
  }

  std::string extra_repr() const override {
    return "world_size=" + std::to_string(reducer_->group.size()) +
           ", buckets=" + std::to_string(reducer_->buckets.size());
  }

 private:
  struct Bucket {
    Tensor flat;                   // the gradients, one after another
    std::vector<size_t> params;    // indices into Reducer::params
    std::vector<int64_t> offsets;  // where each starts in flat
    size_t pending = 0;            // gradients not yet in flat this backward
    distributed::Work work;
  };

  // Packs gradients into buckets as backward produces them and reduces
  // them; the hooks refer to it, and it removes them when it goes.
  struct Reducer {
    Reducer(distributed::ProcessGroup g, const DistributedDataParallelOptions& o) : group(std::move(g)), options(o) {}

    distributed::ProcessGroup group;
    DistributedDataParallelOptions options;
    std::vector<Tensor> params;  // those that require grad, in registration order
    std::vector<std::string> names;
    std::vector<size_t> bucket_of, slot_of;
    std::vector<Bucket> buckets;
    std::vector<char> ready;  // per parameter, in the backward running
    size_t next_bucket = 0;   // the first bucket not yet started
    bool in_backward = false;
    bool require_sync = true;
    std::vector<HookHandle> hooks;

    // Every rank gathers every rank's (count, elements, fingerprint of the
    // names, shapes and dtypes) and refuses to go on when one differs.
    void verify_same_model(const NamedTensors& named) {
      uint64_t fingerprint = 1469598103934665603ull;  // FNV-1a
      auto mix = [&](uint64_t v) {
        for (int i = 0; i < 8; ++i) fingerprint = (fingerprint ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
      };
      int64_t elements = 0;
      for (const auto& [name, t] : named) {
        for (char c : name) mix(static_cast<unsigned char>(c));
        mix(static_cast<uint64_t>(t.dtype()));
        for (int64_t s : t.shape()) mix(static_cast<uint64_t>(s));
        mix(~0ull);
        elements += t.numel();
      }
      // On the parameters' device: the group's backend moves only its own tensors.
      const Device device = named.empty() ? Device::cpu() : named.front().second.device();
      Tensor mine = from_vector(std::vector<int64_t>{static_cast<int64_t>(named.size()), elements,
                                                     static_cast<int64_t>(fingerprint)})
                        .to(device);
      Tensor all = zeros({3 * static_cast<int64_t>(group.size())}, Dtype::i64, device);
      group.all_gather(all, mine);
      const std::vector<int64_t> seen = all.to(Device::cpu()).to_vector<int64_t>();
      for (int r = 1; r < group.size(); ++r) {
        const int64_t* theirs = &seen[3 * static_cast<size_t>(r)];
        if (theirs[0] == seen[0] && theirs[1] == seen[1] && theirs[2] == seen[2]) continue;
        throw Error(
            NNP_SHAPE_MISMATCH,
            "DistributedDataParallel: rank " + std::to_string(r) + "'s model differs from rank 0's: " +
                std::to_string(theirs[0]) + " parameters of " + std::to_string(theirs[1]) + " elements against " +
                std::to_string(seen[0]) + " of " + std::to_string(seen[1]) +
                (theirs[0] == seen[0] && theirs[1] == seen[1] ? " (same counts, other names, shapes or dtypes)" : "") +
                "; every rank must build the same model");
      }
    }

    void build(const NamedTensors& named) {
      for (const auto& [name, t] : named)
        if (t.requires_grad()) {
          params.push_back(t);
          names.push_back(name);
        }
      // Reverse registration order, one open bucket per (dtype, device).
      const double mib = 1024.0 * 1024.0;
      const double first_cap = std::min(1.0, options.bucket_cap_mb()) * mib, cap = options.bucket_cap_mb() * mib;
      struct Open {
        Dtype dtype;
        Device device;
        std::vector<size_t> params;
        double bytes = 0;
      };
      std::vector<Open> open;
      std::vector<std::vector<size_t>> closed;
      for (size_t i = params.size(); i-- > 0;) {
        const Tensor& p = params[i];
        auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) {
          return o.dtype == p.dtype() && o.device.raw().backend == p.device().raw().backend &&
                 o.device.raw().index == p.device().raw().index;
        });
        if (it == open.end()) it = open.insert(open.end(), Open{p.dtype(), p.device(), {}, 0});
        it->params.push_back(i);
        it->bytes += static_cast<double>(p.numel()) * static_cast<double>(dtype_size(p.dtype()));
        if (it->bytes >= (closed.empty() ? first_cap : cap)) {
          closed.push_back(std::move(it->params));
          open.erase(it);
        }
      }
      for (Open& o : open) closed.push_back(std::move(o.params));
      // Reduced in the order their first gradient is expected.
      std::sort(closed.begin(), closed.end(),
                [](const std::vector<size_t>& a, const std::vector<size_t>& b) { return a.front() > b.front(); });
      bucket_of.assign(params.size(), 0);
      slot_of.assign(params.size(), 0);
      for (std::vector<size_t>& indices : closed) {
        Bucket b;
        int64_t total = 0;
        for (size_t i : indices) {
          bucket_of[i] = buckets.size();
          slot_of[i] = b.offsets.size();
          b.offsets.push_back(total);
          total += params[i].numel();
        }
        b.flat = zeros({total}, params[indices.front()].dtype(), params[indices.front()].device());
        b.params = std::move(indices);
        buckets.push_back(std::move(b));
      }
      ready.assign(params.size(), 0);
      for (size_t i = 0; i < params.size(); ++i)
        hooks.push_back(params[i].register_post_accumulate_grad_hook([this, i](Tensor& leaf) { on_grad(i, leaf); }));
    }

    Tensor slot(size_t i) {
      Bucket& b = buckets[bucket_of[i]];
      return b.flat.narrow(0, b.offsets[slot_of[i]], params[i].numel());
    }

    // A parameter's gradient is complete: copy it into its bucket and start
    // every bucket, in order, that is full.
    void on_grad(size_t i, Tensor& leaf) {
      if (!require_sync) return;
      if (!in_backward) {
        in_backward = true;
        next_bucket = 0;
        std::fill(ready.begin(), ready.end(), 0);
        for (Bucket& b : buckets) b.pending = b.params.size();
        // Runs after the backward, or is dropped when it fails: either way
        // the next backward starts afresh.
        std::shared_ptr<Reducer> backward_over(this, [](Reducer* r) { r->in_backward = false; });
        autograd::queue_callback([this, backward_over] { finish_backward(); });
      }
      if (ready[i])
        throw Error(NNP_INVALID_ARGUMENT, "DistributedDataParallel: parameter '" + names[i] +
                                              "' got its gradient twice in one backward (reentrant backward is "
                                              "not supported)");
      slot(i).copy_(leaf.grad().reshape({-1}));
      mark_ready(i);
    }

    void mark_ready(size_t i) {
      ready[i] = 1;
      --buckets[bucket_of[i]].pending;
      while (next_bucket < buckets.size() && buckets[next_bucket].pending == 0) {
        Bucket& b = buckets[next_bucket++];
        b.work = group.all_reduce(b.flat, distributed::ReduceOp::AVG, /*async_op=*/true);
      }
    }

    // After the whole backward: unused parameters, then wait and write the
    // averages back into .grad.
    void finish_backward() {
      std::vector<size_t> unused;
      for (size_t i = 0; i < params.size(); ++i)
        if (!ready[i]) unused.push_back(i);
      if (!unused.empty() && !options.find_unused_parameters()) {
        for (Bucket& b : buckets) b.work = distributed::Work();  // waits for those started
        std::string list;
        for (size_t k = 0; k < unused.size() && k < 8; ++k) list += (k ? ", '" : "'") + names[unused[k]] + "'";
        if (unused.size() > 8) list += " and " + std::to_string(unused.size() - 8) + " more";
        throw Error(NNP_INVALID_ARGUMENT,
                    "DistributedDataParallel: " + std::to_string(unused.size()) +
                        " parameter(s) got no gradient in this backward (" + list +
                        "): every rank must reduce every parameter, so construct it with "
                        "DistributedDataParallelOptions().find_unused_parameters(true) when some may go unused");
      }
      for (size_t i : unused) {
        slot(i).zero_();
        mark_ready(i);
      }
      // Which parameters some rank used: the others keep their .grad.
      Tensor used;
      distributed::Work used_work;
      if (options.find_unused_parameters()) {
        std::vector<int32_t> mine(params.size(), 1);
        for (size_t i : unused) mine[i] = 0;
        used = from_vector(mine).to(params.front().device());
        used_work = group.all_reduce(used, distributed::ReduceOp::MAX, /*async_op=*/true);
      }
      for (Bucket& b : buckets) b.work.wait();
      used_work.wait();
      const std::vector<int32_t> used_anywhere =
          used.defined() ? used.to(Device::cpu()).to_vector<int32_t>() : std::vector<int32_t>(params.size(), 1);
      for (size_t i = 0; i < params.size(); ++i) {
        if (!used_anywhere[i]) continue;
        Tensor averaged = slot(i).view(params[i].shape());
        Tensor grad = params[i].grad();
        if (grad.defined())
          grad.copy_(averaged);
        else
          params[i].set_grad(averaged.clone());
      }
    }
  };

  void sync_buffers() {
    if (!options_.broadcast_buffers() || reducer_->group.size() == 1) return;
    NoGradGuard no_grad;
    for (auto& [name, t] : module_.named_buffers()) reducer_->group.broadcast(t, 0);
  }

  ModuleHandle module_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<Reducer> reducer_;
};

}  // namespace nnp::nn::parallel
