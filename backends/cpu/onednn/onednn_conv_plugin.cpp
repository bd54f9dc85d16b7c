// The cpu backend's convolutions through oneDNN's direct (JIT) kernels, a
// library of its own (lib/nnplug/devices/libnnp_cpu_onednn.so) that the cpu
// backend opens at its first convolution (cpu_conv_onednn.cpp), so that
// loading the backend maps no oneDNN. PyTorch convolves on the CPU with the
// same library; against im2col + OpenBLAS it saves the unrolled columns
// (kh * kw copies of the input), their packing, and the skinny products a
// small convolution makes (k = 25 for a 5x5 kernel over one channel).
//
// It is a plugin (it exports nnp_plugin_entry only) whose init registers a
// backend table holding the conv2d and conv2d_backward kernels; the cpu
// backend's opener keeps that table instead of the core.
//
// Threads: each kernel runs on the calling thread; the cpu backend splits the
// batch over its own pool, and a batch smaller than the pool into parts of
// the output channels (each part a convolution of its own here).
//
// Packed weights (conv2d_pack, conv2d_packed): graph mode packs each
// convolution's weight once per plan; here that is the weight reordered
// into the layout the forward kernel reads, so that a call reorders only
// its input and output (the weight's reorder was most of a batch of one's
// time in large models: ResNet-18's 47 MB at every call). Debian's oneDNN runs on OpenMP, whose thread count
// is a setting of the calling thread: it is 1 for the length of each call and
// then put back, so an OpenMP user on that thread (libtorch, an application)
// keeps its own, and no OpenMP team spins beside the pool.
//
// Layouts: tensors here are NCHW / OIHW; the fast kernels want channels in
// blocks of 8 or 16. A plan reorders into buffers of its own and back, and
// skips the reorder wherever oneDNN takes the plain layout as it is.
//
// Plans (primitives and reorders) are cached per thread, keyed by geometry,
// pass and image count; their buffers (the blocked copies and the
// scratchpad) lie in one arena per thread that every plan shares, as large
// as the largest plan needs: a thread runs one plan at a time, and buffers
// per plan held every layer's blocked copies at once (a 1024x1024 U-Net's:
// over a gigabyte). A training step allocates nothing of its own after the
// first; only oneDNN's execute builds its small argument map. A geometry with no JIT kernel on this processor is
// declined (NNP_UNIMPLEMENTED), and the cpu backend runs its im2col path.
#include <nnp/plugin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

// The OpenMP runtime's per-thread thread count (libgomp, which libdnnl links;
// declared here so that no compiler's OpenMP flags or header are needed).
extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int threads);

namespace nnp::onednn {
namespace {

const nnp_api* g_api = nullptr;

using dnnl::memory;

constexpr memory::data_type kF32 = memory::data_type::f32;

// Plans each thread keeps (least recently used dropped first): enough for
// every convolution of a large model (MobileNetV2 has 52, each in up to
// two channel parts), since a dropped plan is JIT-compiled again.
constexpr size_t kPlansPerThread = 256;

enum Pass : int64_t { kForward, kBackwardData, kBackwardWeights };

// One plan's identity: geometry, pass and image count. All int64_t, so that
// it has no padding and compares with memcmp.
struct Key {
  int64_t pass, images, c, h, w, o, kh, kw, oh, ow, groups, bias, relu;
  int64_t packed;  // the weight comes in packed_weights(), not OIHW
  int64_t stride[2], padding[2], dilation[2];
  bool operator==(const Key& k) const { return std::memcmp(this, &k, sizeof(Key)) == 0; }
};

Key key_of(Pass pass, const nnp_view& x, const nnp_view& w, const nnp_view& out, const nnp_conv2d_params& p,
           bool bias) {
  Key k{};
  k.pass = pass;
  k.images = x.shape[0];
  k.c = x.shape[1], k.h = x.shape[2], k.w = x.shape[3];
  k.o = w.shape[0], k.kh = w.shape[2], k.kw = w.shape[3];
  k.oh = out.shape[2], k.ow = out.shape[3];
  k.groups = p.groups;
  k.bias = bias ? 1 : 0;
  k.relu = p.struct_size >= NNP_CONV2D_PARAMS_SIZE_1_18 && p.activation == NNP_ACTIVATION_RELU ? 1 : 0;
  for (int i = 0; i < 2; ++i) k.stride[i] = p.stride[i], k.padding[i] = p.padding[i], k.dilation[i] = p.dilation[i];
  return k;
}

const dnnl::engine& engine() {
  static const dnnl::engine instance(dnnl::engine::kind::cpu, 0);
  return instance;
}

dnnl::stream& stream() {
  thread_local dnnl::stream instance(engine());
  return instance;
}

// oneDNN on one thread for the length of a call (see the top of the file).
class SingleThreadedOmp {
 public:
  SingleThreadedOmp() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~SingleThreadedOmp() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  SingleThreadedOmp(const SingleThreadedOmp&) = delete;
  SingleThreadedOmp& operator=(const SingleThreadedOmp&) = delete;

 private:
  int saved_;
};

memory::desc plain(const memory::dims& dims, memory::format_tag tag) { return memory::desc(dims, kF32, tag); }
memory::desc any(const memory::dims& dims) { return memory::desc(dims, kF32, memory::format_tag::any); }

memory::dims src_dims(const Key& k) { return {k.images, k.c, k.h, k.w}; }
memory::dims dst_dims(const Key& k) { return {k.images, k.o, k.oh, k.ow}; }
// [O, C/g, KH, KW] is, in memory, oneDNN's [g, O/g, C/g, KH, KW].
memory::dims weight_dims(const Key& k) {
  if (k.groups == 1) return {k.o, k.c, k.kh, k.kw};
  return {k.groups, k.o / k.groups, k.c / k.groups, k.kh, k.kw};
}
memory::format_tag weight_tag(const Key& k) {
  return k.groups == 1 ? memory::format_tag::oihw : memory::format_tag::goihw;
}

// One tensor argument of a primitive: the caller's plain memory (its pointer
// set at each call) and, where the primitive wants another layout, a buffer
// of the plan's own with the reorder between them.
struct Operand {
  int arg = 0;
  bool output = false;
  memory user, inner;
  dnnl::reorder reorder;
  bool reordered = false;
};

struct Plan {
  Key key{};
  bool declined = false;  // oneDNN has no JIT kernel for it here
  dnnl::primitive primitive;
  std::vector<Operand> operands;
  memory scratchpad;
  size_t bytes = 0;  // its buffers' bytes in the thread's arena (each 64-byte aligned)
};

Operand operand(int arg, bool output, const memory::desc& user, const memory::desc& wanted) {
  Operand op;
  op.arg = arg;
  op.output = output;
  op.user = memory(user, engine(), DNNL_MEMORY_NONE);
  if (wanted == user) {
    op.inner = op.user;
  } else {
    op.inner = memory(wanted, engine(), DNNL_MEMORY_NONE);  // in the thread's arena, set at each run
    op.reordered = true;
    op.reorder = output ? dnnl::reorder(op.inner, op.user) : dnnl::reorder(op.user, op.inner);
  }
  return op;
}

bool is_jit(const char* implementation) { return std::strncmp(implementation, "jit", 3) == 0; }

dnnl::convolution_forward::primitive_desc forward_descriptor(const Key& k, const dnnl::primitive_attr& attr) {
  const memory::dims strides{k.stride[0], k.stride[1]}, padding{k.padding[0], k.padding[1]};
  const memory::dims dilation{k.dilation[0] - 1, k.dilation[1] - 1};  // oneDNN counts the gaps
  const memory::desc bias = k.bias ? plain({k.o}, memory::format_tag::x) : memory::desc();
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                       any(src_dims(k)), any(weight_dims(k)), bias, any(dst_dims(k)), strides, dilation,
                                       padding, padding);
  return dnnl::convolution_forward::primitive_desc(desc, attr, engine());
}

// oneDNN's forward kernel for the geometry at one image of a nominal
// 32 x 32, and (packed_weights) the weight layout it reads, which
// conv2d_pack writes: the image's size is not known when a plan packs; the
// kernels chosen here want the same layout at every size but a few, where a
// plan's run reorders from this one, as it reordered from OIHW before.
dnnl::convolution_forward::primitive_desc nominal_forward(Key k) {
  k.images = 1;
  k.bias = 0;
  k.relu = 0;
  for (int i = 0; i < 2; ++i) {
    const int64_t span = (i == 0 ? k.kh - 1 : k.kw - 1) * k.dilation[i] + 1;
    const int64_t size = std::max<int64_t>(32, span);
    (i == 0 ? k.h : k.w) = size;
    (i == 0 ? k.oh : k.ow) = (size + 2 * k.padding[i] - span) / k.stride[i] + 1;
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return forward_descriptor(k, attr);
}
memory::desc packed_weights(const Key& k) { return nominal_forward(k).weights_desc(); }

// Builds the primitive for k, or marks the plan declined.
void build(Plan& plan) {
  const Key& k = plan.key;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const memory::dims strides{k.stride[0], k.stride[1]}, padding{k.padding[0], k.padding[1]};
  const memory::dims dilation{k.dilation[0] - 1, k.dilation[1] - 1};
  const memory::desc user_src = plain(src_dims(k), memory::format_tag::nchw);
  const memory::desc user_dst = plain(dst_dims(k), memory::format_tag::nchw);
  const memory::desc user_weights = k.packed ? packed_weights(k) : plain(weight_dims(k), weight_tag(k));
  const auto training_forward = forward_descriptor(k, attr);  // the backward passes' hint
  memory::desc scratchpad;
  if (k.pass == kForward) {
    // ReLU as the primitive's post-op: applied as each output block is
    // written, not in another pass over the output.
    dnnl::primitive_attr forward_attr = attr;
    if (k.relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      forward_attr.set_post_ops(ops);
    }
    const auto forward = k.relu ? forward_descriptor(k, forward_attr) : training_forward;
    // A packed weight has no other way to run: any kernel oneDNN has will do.
    if (!is_jit(forward.impl_info_str()) && !k.packed) return void(plan.declined = true);
    plan.primitive = dnnl::convolution_forward(forward);
    plan.operands.push_back(operand(DNNL_ARG_SRC, false, user_src, forward.src_desc()));
    plan.operands.push_back(operand(DNNL_ARG_WEIGHTS, false, user_weights, forward.weights_desc()));
    if (k.bias)
      plan.operands.push_back(operand(DNNL_ARG_BIAS, false, plain({k.o}, memory::format_tag::x), forward.bias_desc()));
    plan.operands.push_back(operand(DNNL_ARG_DST, true, user_dst, forward.dst_desc()));
    scratchpad = forward.scratchpad_desc();
  } else if (k.pass == kBackwardData) {
    dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, any(src_dims(k)),
                                               any(weight_dims(k)), any(dst_dims(k)), strides, dilation, padding,
                                               padding);
    dnnl::convolution_backward_data::primitive_desc pd(desc, attr, engine(), training_forward);
    if (!is_jit(pd.impl_info_str())) return void(plan.declined = true);
    plan.primitive = dnnl::convolution_backward_data(pd);
    plan.operands.push_back(operand(DNNL_ARG_DIFF_DST, false, user_dst, pd.diff_dst_desc()));
    plan.operands.push_back(operand(DNNL_ARG_WEIGHTS, false, user_weights, pd.weights_desc()));
    plan.operands.push_back(operand(DNNL_ARG_DIFF_SRC, true, user_src, pd.diff_src_desc()));
    scratchpad = pd.scratchpad_desc();
  } else {
    dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, any(src_dims(k)),
                                                  any(weight_dims(k)), any(dst_dims(k)), strides, dilation, padding,
                                                  padding);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, engine(), training_forward);
    if (!is_jit(pd.impl_info_str())) return void(plan.declined = true);
    plan.primitive = dnnl::convolution_backward_weights(pd);
    plan.operands.push_back(operand(DNNL_ARG_SRC, false, user_src, pd.src_desc()));
    plan.operands.push_back(operand(DNNL_ARG_DIFF_DST, false, user_dst, pd.diff_dst_desc()));
    plan.operands.push_back(operand(DNNL_ARG_DIFF_WEIGHTS, true, user_weights, pd.diff_weights_desc()));
    scratchpad = pd.scratchpad_desc();
  }
  plan.scratchpad = memory(scratchpad, engine(), DNNL_MEMORY_NONE);
  auto aligned = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  plan.bytes = aligned(scratchpad.get_size());
  for (const Operand& op : plan.operands)
    if (op.reordered) plan.bytes += aligned(op.inner.get_desc().get_size());
}

// This thread's arena, at least `bytes` long (64-byte aligned).
char* arena(size_t bytes) {
  struct Freed {
    void operator()(char* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<char, Freed> block;
  thread_local size_t size = 0;
  if (bytes > size) {
    block.reset();
    block.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    if (!block) throw std::bad_alloc();
    size = bytes;
  }
  return block.get();
}

// This thread's plan for k (built on first use), or nullptr if declined.
Plan* plan_for(const Key& k) {
  thread_local std::vector<std::unique_ptr<Plan>> plans;  // most recently used first
  auto found = std::find_if(plans.begin(), plans.end(), [&](const auto& plan) { return plan->key == k; });
  if (found == plans.end()) {
    auto plan = std::make_unique<Plan>();
    plan->key = k;
    try {
      build(*plan);
    } catch (const dnnl::error&) {  // a geometry oneDNN refuses: remembered as declined
      plan->declined = true;
    }
    if (plans.size() == kPlansPerThread) plans.pop_back();
    plans.insert(plans.begin(), std::move(plan));
  } else {
    std::rotate(plans.begin(), found, found + 1);
  }
  return plans.front()->declined ? nullptr : plans.front().get();
}

void check(dnnl_status_t status) {
  if (status != dnnl_success) throw dnnl::error(status, "oneDNN: execution failed");
}

void execute(dnnl::primitive& primitive, int count, const dnnl_exec_arg_t* args) {
  check(dnnl_primitive_execute(primitive.get(), stream().get(), count, args));
}

// Runs the plan with data[i] as the memory of operand i.
void run(Plan& plan, const void* const* data) {
  char* at = arena(plan.bytes);
  auto place = [&](memory& m) {
    m.set_data_handle(at);
    at += (m.get_desc().get_size() + 63) / 64 * 64;
  };
  place(plan.scratchpad);
  for (Operand& op : plan.operands)
    if (op.reordered) place(op.inner);
  dnnl_exec_arg_t args[8];
  int count = 0;
  for (size_t i = 0; i < plan.operands.size(); ++i) {
    Operand& op = plan.operands[i];
    op.user.set_data_handle(const_cast<void*>(data[i]));
    if (op.reordered && !op.output) {
      const dnnl_exec_arg_t reorder_args[2] = {{DNNL_ARG_FROM, op.user.get()}, {DNNL_ARG_TO, op.inner.get()}};
      execute(op.reorder, 2, reorder_args);
    }
    args[count++] = {op.arg, op.inner.get()};
  }
  args[count++] = {DNNL_ARG_SCRATCHPAD, plan.scratchpad.get()};
  execute(plan.primitive, count, args);
  for (Operand& op : plan.operands)
    if (op.reordered && op.output) {
      const dnnl_exec_arg_t reorder_args[2] = {{DNNL_ARG_FROM, op.inner.get()}, {DNNL_ARG_TO, op.user.get()}};
      execute(op.reorder, 2, reorder_args);
    }
  check(dnnl_stream_wait(stream().get()));
}

nnp_status fail(nnp_status status, const std::string& message) {
  g_api->set_error(status, message.c_str());
  return status;
}

nnp_status declined() {
  return fail(NNP_UNIMPLEMENTED, "oneDNN has no JIT convolution for this geometry on this processor");
}

// Runs body() with oneDNN single-threaded, turning its exceptions into errors.
template <typename Body>
nnp_status guarded(const char* op, Body body) {
  try {
    SingleThreadedOmp single_threaded;
    return body();
  } catch (const dnnl::error& e) {
    return fail(NNP_INTERNAL, std::string(op) + ": oneDNN: " + e.what());
  } catch (const std::bad_alloc&) {
    return fail(NNP_OUT_OF_MEMORY, std::string(op) + ": out of memory for oneDNN's buffers");
  }
}

nnp_status conv2d(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* w, const nnp_view* bias,
                  const nnp_conv2d_params* p, const nnp_view* out) {
  return guarded("conv2d", [&]() -> nnp_status {
    Plan* plan = plan_for(key_of(kForward, *x, *w, *out, *p, bias != nullptr));
    if (plan == nullptr) return declined();
    const void* data[4] = {x->data, w->data};
    int i = 2;
    if (bias) data[i++] = bias->data;
    data[i] = out->data;
    run(*plan, data);
    return NNP_OK;
  });
}

// grad_x and grad_w; the cpu backend sums the bias's gradient itself.
nnp_status conv2d_backward(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* w, const nnp_view* grad_out,
                           const nnp_conv2d_params* p, const nnp_view* grad_x, const nnp_view* grad_w,
                           const nnp_view* grad_bias) {
  if (grad_bias != nullptr)
    return fail(NNP_UNIMPLEMENTED, "conv2d_backward: oneDNN's kernel leaves grad_bias to the cpu backend");
  return guarded("conv2d_backward", [&]() -> nnp_status {
    Key k = key_of(kBackwardData, *x, *w, *grad_out, *p, false);
    Plan* data_plan = grad_x ? plan_for(k) : nullptr;
    k.pass = kBackwardWeights;
    Plan* weights_plan = grad_w ? plan_for(k) : nullptr;
    if ((grad_x && data_plan == nullptr) || (grad_w && weights_plan == nullptr)) return declined();
    if (grad_x) {
      const void* data[3] = {grad_out->data, w->data, grad_x->data};
      run(*data_plan, data);
    }
    if (grad_w) {
      const void* data[3] = {x->data, grad_out->data, grad_w->data};
      run(*weights_plan, data);
    }
    return NNP_OK;
  });
}

// ---- weights packed once (conv2d_pack, conv2d_packed) ----

// The packed form: this header, then the weight in packed_weights()'s
// layout from byte kPackedHeaderBytes (64-byte aligned).
constexpr uint32_t kPackedMagic = 0x77646e6eu;  // "nndw"
constexpr int64_t kPackedHeaderBytes = 128;
struct PackedHeader {
  uint32_t magic;
  int32_t activation;
  int64_t out_channels, in_channels, kernel[2], stride[2], padding[2], dilation[2];
  int64_t weight_bytes;
};
static_assert(sizeof(PackedHeader) <= kPackedHeaderBytes, "the header fits its slot");

// The geometry a packed weight is made for (images, sizes and bias as the
// forward call's; 1 image of nothing where only the weight matters).
Key packed_key(const nnp_view& w, const nnp_conv2d_params& p) {
  Key k{};
  k.pass = kForward;
  k.packed = 1;
  k.images = 1;
  k.c = w.shape[1], k.o = w.shape[0], k.kh = w.shape[2], k.kw = w.shape[3];
  k.groups = 1;
  for (int i = 0; i < 2; ++i) k.stride[i] = p.stride[i], k.padding[i] = p.padding[i], k.dilation[i] = p.dilation[i];
  return k;
}

bool contiguous_f32(const nnp_view& v, int32_t ndim) {
  if (v.dtype != NNP_F32 || v.ndim != ndim) return false;
  int64_t expected = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    if (v.shape[d] < 1 || (v.shape[d] > 1 && v.strides[d] != expected)) return false;
    expected *= v.shape[d];
  }
  return true;
}

// w [O, C, kH, kW] in the layout oneDNN's forward kernel reads, once per
// plan (groups 1, no pooling; anything else: *bytes = 0, the caller then
// runs conv2d). The ReLU is applied by conv2d_packed after the kernel.
nnp_status conv2d_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_conv2d_params* p, const int64_t* pool,
                       const nnp_view* packed, int64_t* bytes) {
  if (!w || !p || !pool || !bytes) return fail(NNP_INVALID_ARGUMENT, "conv2d_pack: w, p, pool and bytes are required");
  *bytes = 0;
  if (!contiguous_f32(*w, 4) || p->groups != 1 || pool[0] != 0 || pool[1] != 0 ||
      (p->activation != NNP_ACTIVATION_NONE && p->activation != NNP_ACTIVATION_RELU))
    return NNP_OK;
  // Sizes past 2^20 (a hostile spec's stride of 2^63 - 1) have no packed
  // form: the nominal image below could not be sized, nor oneDNN asked.
  constexpr int64_t kLargest = int64_t{1} << 20;
  for (int i = 0; i < 2; ++i)
    if (p->stride[i] < 1 || p->dilation[i] < 1 || p->padding[i] < 0 || p->stride[i] > kLargest ||
        p->dilation[i] > kLargest || p->padding[i] > kLargest)
      return NNP_OK;
  for (int d = 0; d < 4; ++d)
    if (w->shape[d] > kLargest) return NNP_OK;
  return guarded("conv2d_pack", [&]() -> nnp_status {
    const Key k = packed_key(*w, *p);
    dnnl::convolution_forward::primitive_desc forward;
    try {
      forward = nominal_forward(k);
    } catch (const dnnl::error&) {  // a geometry oneDNN has no kernel for: no packed form
      return NNP_OK;
    }
    if (!is_jit(forward.impl_info_str())) return NNP_OK;  // only where its JIT kernels take it
    const memory::desc layout = forward.weights_desc();
    const int64_t need = kPackedHeaderBytes + static_cast<int64_t>(layout.get_size());
    if (!packed) {
      *bytes = need;
      return NNP_OK;
    }
    if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->shape[0] < need || packed->strides[0] != 1)
      return fail(NNP_INVALID_ARGUMENT, "conv2d_pack: packed must be a contiguous u8 view of " + std::to_string(need) +
                                            " bytes (ask with packed NULL first)");
    PackedHeader h{};
    h.magic = kPackedMagic;
    h.activation = p->activation;
    h.out_channels = k.o, h.in_channels = k.c, h.kernel[0] = k.kh, h.kernel[1] = k.kw;
    for (int i = 0; i < 2; ++i) h.stride[i] = k.stride[i], h.padding[i] = k.padding[i], h.dilation[i] = k.dilation[i];
    h.weight_bytes = need - kPackedHeaderBytes;
    char* base = static_cast<char*>(packed->data);
    std::memset(base, 0, kPackedHeaderBytes);
    std::memcpy(base, &h, sizeof h);
    memory from(plain(weight_dims(k), weight_tag(k)), engine(), w->data);
    memory to(layout, engine(), base + kPackedHeaderBytes);
    dnnl::reorder(from, to).execute(stream(), from, to);
    stream().wait();
    *bytes = need;
    return NNP_OK;
  });
}

// out = activation(conv(x, w) + bias) with w as conv2d_pack packed it; x
// and out [N, C, H, W] dense within each image (a batch of one may be a
// slice of a larger tensor's channels).
nnp_status conv2d_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* packed, const nnp_view* bias,
                         const nnp_conv2d_params* p, const int64_t* pool, const nnp_view* out) {
  if (!x || !packed || !p || !pool || !out)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: x, packed, p, pool and out are required");
  PackedHeader h{};
  if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->strides[0] != 1 || packed->shape[0] < kPackedHeaderBytes)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: packed is not a weight conv2d_pack wrote");
  std::memcpy(&h, packed->data, sizeof h);
  if (h.magic != kPackedMagic || h.weight_bytes < 0 || packed->shape[0] - kPackedHeaderBytes < h.weight_bytes)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: packed is not a weight conv2d_pack wrote");
  bool same = p->groups == 1 && p->activation == h.activation && pool[0] == 0 && pool[1] == 0;
  for (int i = 0; i < 2; ++i)
    same = same && p->stride[i] == h.stride[i] && p->padding[i] == h.padding[i] && p->dilation[i] == h.dilation[i];
  if (!same)
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_packed: the packed weight was made for another geometry (stride, padding, dilation, "
                "activation or pooling); pack it again for this one");
  if (x->dtype != NNP_F32 || out->dtype != NNP_F32 || x->ndim != 4 || out->ndim != 4 || x->shape[1] != h.in_channels ||
      out->shape[1] != h.out_channels || out->shape[0] != x->shape[0])
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: x and out must be f32 [N, " + std::to_string(h.in_channels) +
                                          ", H, W] and [N, " + std::to_string(h.out_channels) +
                                          ", H', W'] for this packed weight");
  nnp_view w{};  // the geometry the weight was packed for, to key the plan
  w.dtype = NNP_F32;
  w.ndim = 4;
  w.shape[0] = h.out_channels, w.shape[1] = h.in_channels, w.shape[2] = h.kernel[0], w.shape[3] = h.kernel[1];
  Key k = key_of(kForward, *x, w, *out, *p, bias != nullptr);
  k.packed = 1;
  k.relu = 0;
  for (int i = 0; i < 2; ++i) {
    const int64_t span = (h.kernel[i] - 1) * h.dilation[i] + 1;
    const int64_t size = (x->shape[2 + i] + 2 * h.padding[i] - span) / h.stride[i] + 1;
    if (x->shape[2 + i] + 2 * h.padding[i] < span || out->shape[2 + i] != size)
      return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: out's size does not follow from x's for this geometry");
  }
  if (bias && (bias->dtype != NNP_F32 || bias->ndim != 1 || bias->shape[0] != h.out_channels ||
               (h.out_channels > 1 && bias->strides[0] != 1)))
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_packed: bias must be contiguous f32 [" + std::to_string(h.out_channels) + "]");
  return guarded("conv2d_packed", [&]() -> nnp_status {
    Plan* plan = plan_for(k);
    if (plan == nullptr) return declined();
    const void* data[4] = {x->data, static_cast<const char*>(packed->data) + kPackedHeaderBytes};
    int i = 2;
    if (bias) data[i++] = bias->data;
    data[i] = out->data;
    run(*plan, data);
    if (h.activation == NNP_ACTIVATION_RELU) {  // max(0, v), a NaN kept (oneDNN's post-op turns it into 0)
      float* o = static_cast<float*>(out->data);
      const int64_t n = out->shape[0] * out->shape[1] * out->shape[2] * out->shape[3];
      for (int64_t j = 0; j < n; ++j) o[j] = o[j] < 0.0f ? 0.0f : o[j];
    }
    return NNP_OK;
  });
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static nnp_kernels kernels{};
  kernels.struct_size = sizeof(nnp_kernels);
  kernels.conv2d = conv2d;
  kernels.conv2d_backward = conv2d_backward;
  kernels.conv2d_pack = conv2d_pack;
  kernels.conv2d_packed = conv2d_packed;
  static nnp_backend table{};
  table.struct_size = sizeof(nnp_backend);
  table.name = "cpu.onednn";
  table.kernels = &kernels;
  return api->register_backend(host, &table);
}

// "oneDNN 2.6.3 convolutions for the cpu backend"
const char* description() {
  static const std::string text = [] {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
           " convolutions for the cpu backend";
  }();
  return text.c_str();
}

}  // namespace
}  // namespace nnp::onednn

NNP_PLUGIN("nnplug.cpu.onednn", NNP_PLUGIN_VERSION, nnp::onednn::description(), nnp::onednn::init)
