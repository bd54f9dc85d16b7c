// The recorder in every slot of a backend record's kernel table, and the
// tape's hooks (tape.hpp).
#include <cstring>
#include <tuple>
#include <type_traits>

#include "../random_state.hpp"
#include "../tensor.hpp"
#include "../view_extent.hpp"
#include "tape.hpp"

namespace nnp::core::capture {

std::atomic<int32_t> g_recording_threads{0};

namespace {

thread_local Tape* t_tape = nullptr;
thread_local bool t_inside_kernel = false;

// How a recorded call keeps one argument. Numbers and enums by value.
template <typename T, typename = void>
struct Held {
  static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "a kernel argument the recorder does not know");
  T value;
  explicit Held(T v) : value(v) {}
  T get() const { return value; }
  void describe(Describer& d) const { d.bytes(&value, sizeof value); }
  void views(std::vector<nnp_view*>&) {}
};

// Views and parameter structs (none holds a pointer but a view's data) by value.
template <typename S>
struct Held<const S*, std::enable_if_t<std::is_class_v<S>>> {
  S value{};
  bool present;
  explicit Held(const S* p) : present(p != nullptr) {
    if (p) value = *p;
  }
  const S* get() const { return present ? &value : nullptr; }
  void describe(Describer& d) const {
    if constexpr (std::is_same_v<S, nnp_view>) {
      d.view(get());
    } else {
      d.bytes(&present, sizeof present);
      if (present) d.bytes(&value, sizeof value);
    }
  }
  void views(std::vector<nnp_view*>& out) {
    if constexpr (std::is_same_v<S, nnp_view>)
      if (present) out.push_back(&value);
  }
};

// A pooling window {ph, pw} (conv2d_pack and conv2d_packed).
template <>
struct Held<const int64_t*> {
  int64_t value[2] = {0, 0};
  bool present;
  explicit Held(const int64_t* p) : present(p != nullptr) {
    if (p) value[0] = p[0], value[1] = p[1];
  }
  const int64_t* get() const { return present ? value : nullptr; }
  void describe(Describer& d) const {
    d.bytes(&present, sizeof present);
    d.bytes(value, sizeof value);
  }
  void views(std::vector<nnp_view*>&) {}
};

// The size a packing kernel reports: packing belongs to graph mode's plans,
// made once, not to a step.
template <>
struct Held<int64_t*> {
  int64_t* value;
  explicit Held(int64_t* p) : value(p) {
    refuse(
        "the step packs weights (a graph-mode plan is made inside it): compile the step around the "
        "module itself");
  }
  int64_t* get() const { return value; }
  void describe(Describer&) const {}
  void views(std::vector<nnp_view*>&) {}
};

template <typename... A>
class KernelCall final : public RecordedCall {
 public:
  using Fn = nnp_status (*)(const nnp_kernel_ctx*, A...);
  // The random slot's seed and offset are drawn again at each run, as the
  // eager op draws them.
  static constexpr bool kDraws =
      std::is_same_v<std::tuple<A...>,
                     std::tuple<nnp_random_kind, uint64_t, uint64_t, double, double, const nnp_view*>>;

  KernelCall(const char* name, Fn fn, const nnp_kernel_ctx* ctx, A... a)
      : name_(name), fn_(fn), ctx_(ctx), args_(a...) {}

  nnp_status run() const override {
    if constexpr (kDraws) {
      const nnp_view& out = *std::get<5>(args_).get();
      const nnp_device device{BackendRecord::owner_of(ctx_).id(), ctx_->device};
      const RngState start = take_draws(device, static_cast<uint64_t>(view_numel(out)));
      return fn_(ctx_, std::get<0>(args_).get(), start.seed, start.offset, std::get<3>(args_).get(),
                 std::get<4>(args_).get(), &out);
    } else {
      return run_as_recorded();
    }
  }
  nnp_status run_as_recorded() const override {
    return std::apply([&](const auto&... held) { return fn_(ctx_, held.get()...); }, args_);
  }
  const char* name() const override { return name_; }
  int32_t op() const override {
    if constexpr (sizeof...(A) > 0) {
      using First = std::tuple_element_t<0, std::tuple<A...>>;
      if constexpr (std::is_integral_v<First>) return static_cast<int32_t>(std::get<0>(args_).get());
    }
    return -1;
  }
  const nnp_kernel_ctx* context() const override { return ctx_; }
  bool fills_with(double& value) const override {
    if constexpr (std::is_same_v<std::tuple<A...>, std::tuple<const nnp_view*, double>>) {
      if (std::strcmp(name_, "fill") != 0) return false;
      value = std::get<1>(args_).get();
      return true;
    } else {
      (void)value;
      return false;
    }
  }
  void describe(Describer& d) const override {
    d.bytes(&fn_, sizeof fn_);
    d.address(ctx_);
    std::apply(
        [&](const auto&... held) {
          size_t i = 0;
          // The draws' start differs from run to run by design.
          ((kDraws && (i == 1 || i == 2) ? void(++i) : (held.describe(d), void(++i))), ...);
        },
        args_);
  }
  void views(std::vector<nnp_view*>& out) override {
    std::apply([&](auto&... held) { (held.views(out), ...); }, args_);
  }

 private:
  const char* name_;
  Fn fn_;
  const nnp_kernel_ctx* ctx_;
  std::tuple<Held<A>...> args_;
};

// elementwise_chain: its inputs and steps are arrays with counts.
class ChainCall final : public RecordedCall {
 public:
  using Fn = decltype(nnp_kernels::elementwise_chain);
  ChainCall(Fn fn, const nnp_kernel_ctx* ctx, const nnp_view* const* inputs, int32_t n_inputs,
            const nnp_elementwise_step* steps, int32_t n_steps, const nnp_view* out)
      : fn_(fn), ctx_(ctx), steps_(steps, steps + (n_steps > 0 ? n_steps : 0)), out_(*out) {
    for (int32_t i = 0; i < n_inputs; ++i) inputs_.push_back(*inputs[i]);
    point();
  }
  nnp_status run() const override {
    return fn_(ctx_, pointers_.data(), static_cast<int32_t>(pointers_.size()), steps_.data(),
               static_cast<int32_t>(steps_.size()), &out_);
  }
  const char* name() const override { return "elementwise_chain"; }
  void describe(Describer& d) const override {
    d.bytes(&fn_, sizeof fn_);
    d.address(ctx_);
    for (const nnp_view& v : inputs_) d.view(&v);
    if (!steps_.empty()) d.bytes(steps_.data(), steps_.size() * sizeof steps_[0]);
    d.view(&out_);
  }
  void views(std::vector<nnp_view*>& out) override {
    for (nnp_view& v : inputs_) out.push_back(&v);
    out.push_back(&out_);
  }

 private:
  void point() {
    pointers_.clear();
    for (const nnp_view& v : inputs_) pointers_.push_back(&v);
  }
  Fn fn_;
  const nnp_kernel_ctx* ctx_;
  std::vector<nnp_view> inputs_;
  std::vector<const nnp_view*> pointers_;
  std::vector<nnp_elementwise_step> steps_;
  nnp_view out_;
};

// `bytes` bytes at data, as a view (what the tape's passes and the input
// rebinding read of a host copy).
nnp_view byte_view(void* data, size_t bytes) {
  nnp_view v{};
  v.data = data;
  v.dtype = NNP_U8;
  v.ndim = 1;
  v.shape[0] = static_cast<int64_t>(bytes);
  v.strides[0] = 1;
  return v;
}

// A copy between the host and `bytes` of a device's memory, with the host's
// side kept: the bytes written, or the value read.
class HostCopyCall : public RecordedCall {
 public:
  HostCopyCall(const BackendRecord& backend, int32_t device, const void* device_bytes, const void* host_bytes,
               size_t bytes)
      : backend_(backend),
        device_(device),
        memory_(byte_view(const_cast<void*>(device_bytes), bytes)),
        host_(static_cast<const unsigned char*>(host_bytes), static_cast<const unsigned char*>(host_bytes) + bytes) {}
  void describe(Describer& d) const override {
    d.view(&memory_);
    if (!host_.empty()) d.bytes(host_.data(), host_.size());
  }
  void views(std::vector<nnp_view*>& out) override { out.push_back(&memory_); }

 protected:
  const BackendRecord& backend_;
  int32_t device_;
  nnp_view memory_;
  std::vector<unsigned char> host_;
};

// Bytes the host wrote into a device's memory while recording, written again.
class HostWriteCall final : public HostCopyCall {
 public:
  using HostCopyCall::HostCopyCall;
  nnp_status run() const override {
    const nnp_backend& t = backend_.table();
    return t.copy_from_host(t.state, device_, memory_.data, host_.data(), host_.size());
  }
  const char* name() const override { return "copy_from_host"; }
};

// A value the host read while recording, read again at each replay.
class HostReadCall final : public HostCopyCall {
 public:
  HostReadCall(const BackendRecord& backend, int32_t device, const void* src, const void* value, size_t bytes,
               size_t place)
      : HostCopyCall(backend, device, src, value, bytes), place_(place) {}
  nnp_status run() const override {
    thread_local std::vector<unsigned char> now;
    now.resize(host_.size());
    const nnp_backend& t = backend_.table();
    const nnp_status status = t.copy_to_host(t.state, device_, now.data(), memory_.data, host_.size());
    if (status != NNP_OK) return status;
    if (now != host_) throw HostReadChanged{place_};
    return NNP_OK;
  }
  const char* name() const override { return "copy_to_host"; }

 private:
  size_t place_;
};

// Runs a call just recorded (from its copies, so the tape holds what ran)
// and keeps it.
nnp_status keep(Tape& tape, std::unique_ptr<RecordedCall> call) {
  nnp_status status;
  {
    InsideKernel inside;
    status = call->run_as_recorded();
  }
  tape.calls.push_back(std::move(call));
  return status;
}

template <auto Member, const char* Name, typename Slot>
struct Recorder;

template <auto Member, const char* Name, typename... A>
struct Recorder<Member, Name, nnp_status (*nnp_kernels::*)(const nnp_kernel_ctx*, A...)> {
  static nnp_status call(const nnp_kernel_ctx* ctx, A... a) {
    const auto fn = BackendRecord::owner_of(ctx).played_kernels().*Member;
    Tape* tape = any_recording() ? recording_tape() : nullptr;
    if (tape == nullptr) return fn(ctx, a...);
    if constexpr (std::is_same_v<std::remove_const_t<decltype(fn)>, decltype(nnp_kernels::elementwise_chain)>) {
      return keep(*tape, std::make_unique<ChainCall>(fn, ctx, a...));
    } else {
      return keep(*tape, std::make_unique<KernelCall<A...>>(Name, fn, ctx, a...));
    }
  }
};

#define NNP_SLOT_NAMES(X)                                                                                   \
  X(copy)                                                                                                   \
  X(fill)                                                                                                   \
  X(unary)                                                                                                  \
  X(binary)                                                                                                 \
  X(where)                                                                                                  \
  X(reduce)                                                                                                 \
  X(gemm)                                                                                                   \
  X(softmax)                                                                                                \
  X(index_select)                                                                                           \
  X(gather)                                                                                                 \
  X(scatter_add) X(random) X(gemm_i8) X(conv2d) X(max_pool2d) X(sgd_step) X(conv2d_backward) X(layer_norm)  \
      X(gemm_epilogue) X(quantized_gemm) X(elementwise_chain) X(attention) X(conv2d_pack) X(conv2d_packed)  \
          X(gemm_pack) X(gemm_packed) X(quantized_conv2d_pack) X(quantized_conv2d_packed) X(add_layer_norm) \
              X(relu_backward) X(unscale_check) X(conv2d_integer_pack) X(conv2d_integer_packed)             \
                  X(dynamic_quantize_linear)

#define NNP_SLOT_NAME(slot) constexpr char k_##slot[] = #slot;
NNP_SLOT_NAMES(NNP_SLOT_NAME)
#undef NNP_SLOT_NAME
#define NNP_COUNT_SLOT(slot) +1
// A slot added to nnp_kernels must be added to the list, or its calls would
// escape the tape.
static_assert(sizeof(nnp_kernels) == sizeof(size_t) + (0 NNP_SLOT_NAMES(NNP_COUNT_SLOT)) * sizeof(void*),
              "nnp_kernels has a slot NNP_SLOT_NAMES does not list");
#undef NNP_COUNT_SLOT

void hold(std::vector<Storage*>& list, Storage* storage) {
  retain(storage);
  storage->taped.fetch_add(1, std::memory_order_relaxed);
  list.push_back(storage);
}

void release_all(std::vector<Storage*>& storages) {
  for (Storage* s : storages) {
    s->taped.fetch_sub(1, std::memory_order_relaxed);
    release(s);
  }
  storages.clear();
}

}  // namespace

void Describer::view(const nnp_view* v) {
  const bool present = v != nullptr;
  bytes(&present, sizeof present);
  if (!present) return;
  address(v->data);
  bytes(&v->dtype, sizeof v->dtype);
  bytes(&v->ndim, sizeof v->ndim);
  bytes(v->shape, sizeof(int64_t) * static_cast<size_t>(v->ndim));
  bytes(v->strides, sizeof(int64_t) * static_cast<size_t>(v->ndim));
}

Tape::~Tape() {
  calls.clear();
  release_all(allocated);
  release_all(viewed);
}

Tape* recording_tape() { return t_inside_kernel ? nullptr : t_tape; }

Recording::Recording(Tape& tape) : outer_(t_tape) {
  t_tape = &tape;
  g_recording_threads.fetch_add(1, std::memory_order_relaxed);
}

Recording::~Recording() {
  g_recording_threads.fetch_sub(1, std::memory_order_relaxed);
  t_tape = outer_;
}

InsideKernel::InsideKernel() : outer_(t_inside_kernel) { t_inside_kernel = true; }
InsideKernel::~InsideKernel() { t_inside_kernel = outer_; }

void note_allocation(Storage* storage) {
  if (Tape* tape = recording_tape()) hold(tape->allocated, storage);
}

void note_view(Storage* storage) {
  Tape* tape = recording_tape();
  if (tape == nullptr) return;
  // The same storage is viewed many times in a row (an op's operands).
  for (size_t i = tape->viewed.size(), seen = 0; i > 0 && seen < 8; --i, ++seen)
    if (tape->viewed[i - 1] == storage) return;
  hold(tape->viewed, storage);
}

void note_host_write(const BackendRecord& backend, int32_t device, void* dst, const void* src, size_t bytes) {
  if (Tape* tape = recording_tape())
    tape->calls.push_back(std::make_unique<HostWriteCall>(backend, device, dst, src, bytes));
}

void note_host_read(const nnp_tensor& src, const void* value, size_t bytes) {
  Tape* tape = recording_tape();
  if (tape == nullptr || bytes == 0) return;
  note_view(src.storage);
  tape->calls.push_back(
      std::make_unique<HostReadCall>(src.backend(), src.device.index, src.data(), value, bytes, tape->calls.size()));
}

void refuse(const std::string& why) {
  if (Tape* tape = recording_tape())
    if (tape->refused.empty()) tape->refused = why;
}

std::unique_ptr<RecordedCall> gemm_epilogue_call(const nnp_kernel_ctx* ctx, const nnp_view& a, const nnp_view& b,
                                                 const nnp_view& bias, int32_t activation, const nnp_view& out) {
  const auto fn = BackendRecord::owner_of(ctx).played_kernels().gemm_epilogue;
  if (fn == nullptr) return nullptr;
  return std::make_unique<KernelCall<const nnp_view*, const nnp_view*, const nnp_view*, int32_t, const nnp_view*>>(
      k_gemm_epilogue, fn, ctx, &a, &b, &bias, activation, &out);
}

std::unique_ptr<RecordedCall> relu_backward_call(const nnp_kernel_ctx* ctx, const nnp_view& result,
                                                 const nnp_view& grad, const nnp_view& grad_in,
                                                 const nnp_view* column_sums) {
  const BackendRecord& backend = BackendRecord::owner_of(ctx);
  if (backend.relu_backward() == nullptr) return nullptr;
  return std::make_unique<KernelCall<const nnp_view*, const nnp_view*, const nnp_view*, const nnp_view*>>(
      k_relu_backward, backend.played_kernels().relu_backward, ctx, &result, &grad, &grad_in, column_sums);
}

void install_kernel_recorders(nnp_kernels& kernels) {
#define NNP_INSTALL(slot) \
  if (kernels.slot) kernels.slot = Recorder<&nnp_kernels::slot, k_##slot, decltype(&nnp_kernels::slot)>::call;
  NNP_SLOT_NAMES(NNP_INSTALL)
#undef NNP_INSTALL
}

}  // namespace nnp::core::capture
