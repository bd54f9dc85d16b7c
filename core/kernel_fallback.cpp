#include "kernel_fallback.hpp"

#include <cstdint>
#include <memory>
#include <vector>

#include "backend_record.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "plugin_registry.hpp"
#include "profiler/profiler.hpp"
#include "view_extent.hpp"

namespace nnp::core {
namespace {

// The backend a stand-in runs its kernel on: a host-memory backend of
// nnplug's that has the kernel.
const BackendRecord& fallback_for(const BackendRecord& owner, nnp_kernel_slot slot) {
  for (const char* name : {"cpu", "reference"}) {
    const BackendRecord* b = PluginRegistry::instance().find_backend(name);
    if (b && b != &owner && b->host_memory() && !(b->missing_kernels() >> slot & 1u)) return *b;
  }
  fail(NNP_UNIMPLEMENTED, "backend '", owner.name(), "' lacks the '", nnp_kernel_slot_name(slot),
       "' kernel (nnp_backend.missing_kernels) and neither the cpu nor the reference backend is loaded to run it "
       "instead; install nnplug's cpu plugin beside the others");
}

// Host memory for up to four operands a thread stages at once, kept between
// calls so a steady stream of fallbacks allocates nothing.
constexpr int kMaxOperands = 4;
constexpr size_t kHostAlignment = 64;
struct HostBuffer {
  std::unique_ptr<char[]> bytes;
  size_t capacity = 0;
  char* reserve(size_t size) {
    if (size + kHostAlignment > capacity) {
      capacity = size + kHostAlignment;
      bytes = std::make_unique<char[]>(capacity);
    }
    const auto address = reinterpret_cast<uintptr_t>(bytes.get());
    return bytes.get() + (kHostAlignment - address % kHostAlignment) % kHostAlignment;
  }
};
thread_local HostBuffer t_buffers[kMaxOperands];

// One kernel call's operands moved to host memory and back.
class Staging {
 public:
  Staging(const nnp_kernel_ctx* ctx, nnp_kernel_slot slot)
      : owner_(BackendRecord::owner_of(ctx)),
        device_(ctx->device),
        slot_(slot),
        fallback_(fallback_for(owner_, slot)) {}

  const nnp_kernels& kernels() const { return fallback_.kernels(); }
  const nnp_kernel_ctx* ctx() const { return &fallback_.context(0); }
  const BackendRecord& fallback() const { return fallback_; }

  // A view the fallback's kernel reads: a host copy of its bytes.
  nnp_view in(const nnp_view& v) { return stage(v, true, false); }
  // A view it writes; read first where the kernel adds to it (reads) or
  // leaves some of its bytes alone (a view with gaps).
  nnp_view out(const nnp_view& v, bool reads = false) { return stage(v, reads, true); }
  // Copies what the kernel wrote back to the device.
  void finish() {
    for (int i = 0; i < count_; ++i) {
      const Operand& o = operands_[i];
      if (!o.written || o.bytes == 0) continue;
      const profiler::CopyScope event([&] { return copy_name(false, o.bytes); }, device_text());
      check(owner_.table().copy_from_host(owner_.table().state, device_, o.device_bytes, o.host_bytes, o.bytes),
            "copy_from_host");
    }
  }

 private:
  struct Operand {
    char* device_bytes = nullptr;
    char* host_bytes = nullptr;
    size_t bytes = 0;
    bool written = false;
  };

  nnp_view stage(const nnp_view& v, bool read, bool written) {
    nnp_view host = v;
    if (owner_.host_memory()) return host;  // the fallback reads and writes it where it lies
    const int64_t numel = view_numel(v), span = view_span(v);
    if (numel == 0) return host;
    const size_t size = dtype_size(v.dtype);
    Operand& o = operands_[count_];
    o.device_bytes = static_cast<char*>(v.data);
    o.bytes = static_cast<size_t>(span) * size;
    o.host_bytes = t_buffers[count_].reserve(o.bytes);
    o.written = written;
    ++count_;
    if (read || span != numel) {
      const profiler::CopyScope event([&] { return copy_name(true, o.bytes); }, device_text());
      check(owner_.table().copy_to_host(owner_.table().state, device_, o.host_bytes, o.device_bytes, o.bytes),
            "copy_to_host");
    }
    host.data = o.host_bytes;
    return host;
  }

  std::string device_text() const { return owner_.name() + ":" + std::to_string(device_); }
  // "copy acme:0 -> host: where on cpu (4096 bytes)"
  std::string copy_name(bool to_host, size_t bytes) const {
    return str_cat("copy ", to_host ? device_text() : "host", " -> ", to_host ? "host" : device_text(), ": ",
                   nnp_kernel_slot_name(slot_), " on ", fallback_.name(), " (", bytes, " bytes)");
  }

  void check(nnp_status status, const char* what) const {
    if (status != NNP_OK) check_plugin_status(status, owner_.name().c_str(), what);
  }

  const BackendRecord& owner_;
  int32_t device_;
  nnp_kernel_slot slot_;
  const BackendRecord& fallback_;
  Operand operands_[kMaxOperands];
  int count_ = 0;
};

// Stages the operands (body), runs the fallback's kernel and copies back.
template <typename Body>
nnp_status run_on_fallback(const nnp_kernel_ctx* ctx, nnp_kernel_slot slot, Body&& body) {
  return guard([&] {
    Staging staging(ctx, slot);
    const nnp_status status = body(staging);
    if (status != NNP_OK) check_plugin_status(status, staging.fallback().name().c_str(), nnp_kernel_slot_name(slot));
    staging.finish();
  });
}

nnp_status copy_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* src, const nnp_view* dst) {
  return run_on_fallback(ctx, NNP_KERNEL_COPY, [&](Staging& s) {
    const nnp_view x = s.in(*src), y = s.out(*dst);
    return s.kernels().copy(s.ctx(), &x, &y);
  });
}
nnp_status fill_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* dst, double value) {
  return run_on_fallback(ctx, NNP_KERNEL_FILL, [&](Staging& s) {
    const nnp_view y = s.out(*dst);
    return s.kernels().fill(s.ctx(), &y, value);
  });
}
nnp_status unary_elsewhere(const nnp_kernel_ctx* ctx, nnp_unary_op op, const nnp_view* x, const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_UNARY, [&](Staging& s) {
    const nnp_view a = s.in(*x), y = s.out(*out);
    return s.kernels().unary(s.ctx(), op, &a, &y);
  });
}
nnp_status binary_elsewhere(const nnp_kernel_ctx* ctx, nnp_binary_op op, const nnp_view* a, const nnp_view* b,
                            const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_BINARY, [&](Staging& s) {
    const nnp_view x = s.in(*a), z = s.in(*b), y = s.out(*out);
    return s.kernels().binary(s.ctx(), op, &x, &z, &y);
  });
}
nnp_status where_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                           const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_WHERE, [&](Staging& s) {
    const nnp_view c = s.in(*cond), x = s.in(*a), z = s.in(*b), y = s.out(*out);
    return s.kernels().where(s.ctx(), &c, &x, &z, &y);
  });
}
nnp_status reduce_elsewhere(const nnp_kernel_ctx* ctx, nnp_reduce_op op, const nnp_view* x, int32_t nreduce,
                            double correction, const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_REDUCE, [&](Staging& s) {
    const nnp_view a = s.in(*x), y = s.out(*out);
    return s.kernels().reduce(s.ctx(), op, &a, nreduce, correction, &y);
  });
}
nnp_status gemm_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_GEMM, [&](Staging& s) {
    const nnp_view x = s.in(*a), z = s.in(*b), y = s.out(*out);
    return s.kernels().gemm(s.ctx(), &x, &z, &y);
  });
}
nnp_status softmax_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, int32_t log,
                             const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_SOFTMAX, [&](Staging& s) {
    const nnp_view a = s.in(*x), y = s.out(*out);
    return s.kernels().softmax(s.ctx(), &a, dim, log, &y);
  });
}
nnp_status index_select_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, const nnp_view* index,
                                  const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_INDEX_SELECT, [&](Staging& s) {
    const nnp_view a = s.in(*x), i = s.in(*index), y = s.out(*out);
    return s.kernels().index_select(s.ctx(), &a, dim, &i, &y);
  });
}
nnp_status gather_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, const nnp_view* index,
                            const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_GATHER, [&](Staging& s) {
    const nnp_view a = s.in(*x), i = s.in(*index), y = s.out(*out);
    return s.kernels().gather(s.ctx(), &a, dim, &i, &y);
  });
}
nnp_status scatter_add_elsewhere(const nnp_kernel_ctx* ctx, const nnp_view* out, int32_t dim, const nnp_view* index,
                                 const nnp_view* src) {
  return run_on_fallback(ctx, NNP_KERNEL_SCATTER_ADD, [&](Staging& s) {
    const nnp_view y = s.out(*out, true), i = s.in(*index), a = s.in(*src);
    return s.kernels().scatter_add(s.ctx(), &y, dim, &i, &a);
  });
}
nnp_status random_elsewhere(const nnp_kernel_ctx* ctx, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a,
                            double b, const nnp_view* out) {
  return run_on_fallback(ctx, NNP_KERNEL_RANDOM, [&](Staging& s) {
    const nnp_view y = s.out(*out);
    return s.kernels().random(s.ctx(), kind, seed, offset, a, b, &y);
  });
}

}  // namespace

void install_kernel_fallbacks(nnp_kernels& k, uint32_t missing) {
  const auto lacks = [missing](nnp_kernel_slot slot) { return (missing >> slot & 1u) != 0; };
  if (lacks(NNP_KERNEL_COPY)) k.copy = copy_elsewhere;
  if (lacks(NNP_KERNEL_FILL)) k.fill = fill_elsewhere;
  if (lacks(NNP_KERNEL_UNARY)) k.unary = unary_elsewhere;
  if (lacks(NNP_KERNEL_BINARY)) k.binary = binary_elsewhere;
  if (lacks(NNP_KERNEL_WHERE)) k.where = where_elsewhere;
  if (lacks(NNP_KERNEL_REDUCE)) k.reduce = reduce_elsewhere;
  if (lacks(NNP_KERNEL_GEMM)) k.gemm = gemm_elsewhere;
  if (lacks(NNP_KERNEL_SOFTMAX)) k.softmax = softmax_elsewhere;
  if (lacks(NNP_KERNEL_INDEX_SELECT)) k.index_select = index_select_elsewhere;
  if (lacks(NNP_KERNEL_GATHER)) k.gather = gather_elsewhere;
  if (lacks(NNP_KERNEL_SCATTER_ADD)) k.scatter_add = scatter_add_elsewhere;
  if (lacks(NNP_KERNEL_RANDOM)) k.random = random_elsewhere;
}

std::string kernel_slot_text(uint32_t slots) {
  std::string text;
  for (nnp_kernel_slot s = 0; s < NNP_KERNEL_REQUIRED_COUNT; ++s)
    if (slots >> s & 1u) text += (text.empty() ? "" : ", ") + std::string(nnp_kernel_slot_name(s));
  return text.empty() ? "none" : text;
}

}  // namespace nnp::core
