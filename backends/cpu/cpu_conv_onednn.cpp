// The batch split and the library behind cpu_conv_onednn.hpp.
#include "cpu_conv_onednn.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "../library_beside.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"
#include "thread_pool.hpp"

namespace nnp::cpu {
namespace {

// Floats of blocked copies the library holds for one chunk of images at most
// (about 4 MB): a large batch runs in chunks.
constexpr int64_t kMaxChunkFloats = int64_t{1} << 20;
// Below this many multiply-adds a call runs on the calling thread alone.
constexpr int64_t kSplitWork = int64_t{1} << 19;

struct OneDnnLibrary : beside::OpenedLibrary {
  std::once_flag once;
  nnp_api proxy{};
} g_onednn;

// NNP_CPU_ONEDNN=0 turns oneDNN off (every convolution by im2col), to compare
// the two or to rule oneDNN out.
bool enabled() {
  const char* env = std::getenv("NNP_CPU_ONEDNN");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

void open_onednn() {
  if (!enabled()) {
    g_onednn.reason = "NNP_CPU_ONEDNN=0";
    return;
  }
  beside::open_library(reinterpret_cast<const void*>(&open_onednn), "libnnp_cpu_onednn.so", "the oneDNN library",
                       "nnplug.cpu.onednn", g_api, g_onednn.proxy, g_onednn);
  if (g_onednn.loaded && (g_onednn.kernels.conv2d == nullptr || g_onednn.kernels.conv2d_backward == nullptr)) {
    g_onednn.loaded = false;
    g_onednn.reason = "the oneDNN library " + g_onednn.path + " has no convolution kernels (reinstall nnplug)";
  }
}

// The library's kernels, opened on first call; NULL when there are none.
// They run on the calling thread and read no kernel context (nullptr here).
const nnp_kernels* onednn() {
  std::call_once(g_onednn.once, open_onednn);
  return g_onednn.loaded ? &g_onednn.kernels : nullptr;
}

// The batch split: `tasks` contiguous ranges of images, each run in chunks of
// at most `chunk` images.
struct Split {
  int64_t tasks, chunk;
  int64_t first(int64_t images, int64_t task) const { return images * task / tasks; }
};

Split split_of(const nnp_view& x, const nnp_view& w, const nnp_view& out) {
  const auto blocked = [](int64_t channels) { return (channels + 15) / 16 * 16; };
  const int64_t images = x.shape[0], in_plane = x.shape[2] * x.shape[3], out_plane = out.shape[2] * out.shape[3];
  const int64_t per_image = blocked(x.shape[1]) * in_plane + blocked(out.shape[1]) * out_plane;
  const int64_t chunk = std::max<int64_t>(kMaxChunkFloats / std::max<int64_t>(per_image, 1), 1);
  const int64_t work = images * out.shape[1] * out_plane * w.shape[1] * w.shape[2] * w.shape[3];
  const int64_t threads = ThreadPool::instance().size();
  return {work < kSplitWork ? 1 : std::clamp<int64_t>(threads, 1, images), chunk};
}

// The images [first, first + count) of a contiguous batch.
nnp_view images_of(const nnp_view& v, int64_t first, int64_t count) {
  nnp_view part = v;
  part.data = static_cast<float*>(v.data) + first * v.strides[0];
  part.shape[0] = count;
  return part;
}

// Calls body(task, first, count) for every chunk, the tasks across the pool;
// false if any call failed.
template <typename Body>
bool for_each_chunk(int64_t images, const Split& split, Body body) {
  std::atomic<bool> ok{true};
  const auto task = [&](int64_t t) {
    const int64_t end = split.first(images, t + 1);
    for (int64_t first = split.first(images, t); first < end && ok.load(std::memory_order_relaxed);) {
      const int64_t count = std::min(split.chunk, end - first);
      if (body(t, first, count) != NNP_OK) ok = false;
      first += count;
    }
  };
  if (split.tasks == 1)
    task(0);
  else
    ThreadPool::instance().run(split.tasks, task);
  return ok.load();
}

// A convolution's output channels (its groups, where it has more than one)
// in up to kMaxParts parts: a batch smaller than the pool runs as images x
// parts tasks, so that one image keeps every thread busy. With one group,
// each part reorders the whole input again; its channels come in blocks of
// 16, the kernels' vector.
constexpr int64_t kMaxParts = 8;
struct Parts {
  int64_t count = 1;
  int64_t first[kMaxParts + 1] = {};  // channels, or groups where it has several
};

Parts parts_of(int64_t out_channels, int64_t groups, int64_t threads) {
  Parts parts;
  const int64_t units = groups > 1 ? groups : (out_channels + 15) / 16;
  parts.count = std::clamp<int64_t>(std::min(threads, units), 1, kMaxParts);
  for (int64_t i = 0; i <= parts.count; ++i) {
    const int64_t unit = units * i / parts.count;
    parts.first[i] = groups > 1 ? unit : std::min(unit * 16, out_channels);
  }
  return parts;
}

// The channels [first, first + count) of one image (dimension 1).
nnp_view channels_of(const nnp_view& v, int64_t first, int64_t count) {
  nnp_view part = v;
  part.data = static_cast<float*>(v.data) + first * v.strides[1];
  part.shape[1] = count;
  return part;
}

// The rows [first, first + count) of a weight or a bias (dimension 0).
nnp_view rows_of(const nnp_view& v, int64_t first, int64_t count) {
  nnp_view part = v;
  part.data = static_cast<float*>(v.data) + first * v.strides[0];
  part.shape[0] = count;
  return part;
}

// Scratch that only grows, so steady-state calls do not allocate: the weight
// gradients of all but the first task (the caller's), and one chunk's
// gradient before it is added to its task's (each task's thread).
std::vector<float>& scratch(int slot) {
  thread_local std::vector<float> buffers[2];
  return buffers[slot];
}

}  // namespace

const char* convolution_engine() {
  static const std::string name = [] {
    if (onednn() == nullptr) return "im2col + OpenBLAS (" + g_onednn.reason + ")";
    const std::string& line = g_onednn.description;  // "oneDNN 2.6.3 convolutions for ..."
    return line.substr(0, line.find(" convolutions"));
  }();
  return name.c_str();
}

bool onednn_conv2d(const nnp_view& x, const nnp_view& w, const nnp_view* bias, const nnp_conv2d_params& p,
                   const nnp_view& out) {
  const nnp_kernels* k = onednn();
  if (k == nullptr) return false;
  const Split split = split_of(x, w, out);
  const int64_t images = x.shape[0], threads = ThreadPool::instance().size();
  if (split.tasks > 1 && images < threads) {  // each image's channels in parts
    const Parts parts = parts_of(out.shape[1], p.groups, threads);
    const int64_t in_per_group = x.shape[1] / p.groups, out_per_group = out.shape[1] / p.groups;
    std::atomic<bool> ok{true};
    ThreadPool::instance().run(images * parts.count, [&](int64_t task) {
      const int64_t image = task / parts.count, part = task % parts.count;
      const int64_t first = parts.first[part], count = parts.first[part + 1] - first;
      nnp_view part_x = images_of(x, image, 1), part_out = images_of(out, image, 1);
      nnp_conv2d_params part_p = p;
      nnp_view part_w = w, part_bias{};
      if (p.groups > 1) {
        part_x = channels_of(part_x, first * in_per_group, count * in_per_group);
        part_out = channels_of(part_out, first * out_per_group, count * out_per_group);
        part_w = rows_of(w, first * out_per_group, count * out_per_group);
        if (bias) part_bias = rows_of(*bias, first * out_per_group, count * out_per_group);
        part_p.groups = count;
      } else {
        part_out = channels_of(part_out, first, count);
        part_w = rows_of(w, first, count);
        if (bias) part_bias = rows_of(*bias, first, count);
      }
      if (k->conv2d(nullptr, &part_x, &part_w, bias ? &part_bias : nullptr, &part_p, &part_out) != NNP_OK) ok = false;
    });
    return ok.load();
  }
  return for_each_chunk(x.shape[0], split, [&](int64_t, int64_t first, int64_t count) {
    const nnp_view part_x = images_of(x, first, count), part_out = images_of(out, first, count);
    return k->conv2d(nullptr, &part_x, &w, bias, &p, &part_out);
  });
}

namespace {

// The packed form of onednn_conv2d_pack: this header, then each part's
// weight as the library packed it (its own header first), from byte
// offset[i] (64-byte aligned) for bytes[i] bytes.
constexpr uint32_t kPartsMagic = 0x70646e6eu;  // "nndp"
struct PartsHeader {
  uint32_t magic;
  int32_t reserved;
  int64_t out_channels, in_channels;
  Parts parts;
  int64_t offset[kMaxParts], bytes[kMaxParts];
};
constexpr int64_t kPartsHeaderBytes = (sizeof(PartsHeader) + 63) / 64 * 64;

int64_t aligned64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

bool is_onednn_packed(const nnp_view& packed) {
  uint32_t magic = 0;
  if (packed.dtype != NNP_U8 || packed.ndim != 1 || packed.shape[0] < kPartsHeaderBytes) return false;
  std::memcpy(&magic, packed.data, sizeof magic);
  return magic == kPartsMagic;
}

nnp_status onednn_conv2d_pack(const nnp_view& w, const nnp_conv2d_params& p, const int64_t* pool,
                              const nnp_view* packed, int64_t* bytes) {
  *bytes = 0;
  const nnp_kernels* k = onednn();
  if (k == nullptr || k->conv2d_pack == nullptr || k->conv2d_packed == nullptr || w.ndim != 4 || !is_contiguous(w) ||
      p.groups != 1)
    return NNP_OK;
  PartsHeader h{};
  h.magic = kPartsMagic;
  h.out_channels = w.shape[0];
  h.in_channels = w.shape[1];
  h.parts = parts_of(w.shape[0], 1, ThreadPool::instance().size());
  int64_t at = kPartsHeaderBytes;
  for (int64_t i = 0; i < h.parts.count; ++i) {
    const nnp_view part_w = rows_of(w, h.parts.first[i], h.parts.first[i + 1] - h.parts.first[i]);
    int64_t part_bytes = 0;
    if (nnp_status status = k->conv2d_pack(nullptr, &part_w, &p, pool, nullptr, &part_bytes); status != NNP_OK)
      return status;
    if (part_bytes <= 0) return NNP_OK;  // no packed form for this geometry
    h.offset[i] = at;
    h.bytes[i] = part_bytes;
    at += aligned64(part_bytes);
  }
  if (packed == nullptr) {
    *bytes = at;
    return NNP_OK;
  }
  if (nnp_status status = check_packed_room(*packed, at, "conv2d_pack"); status != NNP_OK) return status;
  char* base = static_cast<char*>(packed->data);
  std::memset(base, 0, static_cast<size_t>(kPartsHeaderBytes));
  std::memcpy(base, &h, sizeof h);
  for (int64_t i = 0; i < h.parts.count; ++i) {
    const nnp_view part_w = rows_of(w, h.parts.first[i], h.parts.first[i + 1] - h.parts.first[i]);
    nnp_view part = *packed;
    part.data = base + h.offset[i];
    part.shape[0] = h.bytes[i];
    int64_t written = 0;
    if (nnp_status status = k->conv2d_pack(nullptr, &part_w, &p, pool, &part, &written); status != NNP_OK)
      return status;
  }
  *bytes = at;
  return NNP_OK;
}

nnp_status onednn_conv2d_packed(const nnp_view& x, const nnp_view& packed, const nnp_view* bias,
                                const nnp_conv2d_params& p, const int64_t* pool, const nnp_view& out) {
  const nnp_kernels* k = onednn();
  PartsHeader h{};
  std::memcpy(&h, packed.data, sizeof h);
  bool valid = h.parts.count >= 1 && h.parts.count <= kMaxParts && h.parts.first[0] == 0 &&
               h.parts.first[h.parts.count] == h.out_channels;
  for (int64_t i = 0; valid && i < h.parts.count; ++i)
    valid = h.parts.first[i] < h.parts.first[i + 1] && h.offset[i] >= kPartsHeaderBytes && h.bytes[i] > 0 &&
            h.offset[i] <= packed.shape[0] && h.bytes[i] <= packed.shape[0] - h.offset[i];
  if (!valid) return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: packed is not a weight conv2d_pack wrote");
  if (k == nullptr || k->conv2d_packed == nullptr)
    return fail(NNP_UNIMPLEMENTED, "conv2d_packed: this weight was packed for oneDNN, which is not loaded");
  if (x.dtype != NNP_F32 || out.dtype != NNP_F32 || x.ndim != 4 || out.ndim != 4 || !is_contiguous(x) ||
      !is_contiguous(out) || x.shape[1] != h.in_channels || out.shape[1] != h.out_channels ||
      out.shape[0] != x.shape[0])
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: x and out must be contiguous f32 [N, " +
                                          std::to_string(h.in_channels) + ", H, W] and [N, " +
                                          std::to_string(h.out_channels) + ", H', W'] for this packed weight");
  if (bias && (bias->dtype != NNP_F32 || bias->ndim != 1 || bias->shape[0] != h.out_channels))
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: bias must be f32 [" + std::to_string(h.out_channels) + "]");
  const int64_t images = x.shape[0];
  std::atomic<bool> ok{true};
  const auto task = [&](int64_t t) {
    if (!ok.load(std::memory_order_relaxed)) return;
    const int64_t image = t / h.parts.count, part = t % h.parts.count;
    const int64_t first = h.parts.first[part], count = h.parts.first[part + 1] - first;
    const nnp_view part_x = images_of(x, image, 1), part_out = channels_of(images_of(out, image, 1), first, count);
    nnp_view part_bias{}, part_packed = packed;
    if (bias) part_bias = rows_of(*bias, first, count);
    part_packed.data = static_cast<char*>(packed.data) + h.offset[part];
    part_packed.shape[0] = h.bytes[part];
    if (k->conv2d_packed(nullptr, &part_x, &part_packed, bias ? &part_bias : nullptr, &p, pool, &part_out) != NNP_OK)
      ok = false;
  };
  const int64_t tasks = images * h.parts.count;
  const int64_t work = images * out.shape[1] * out.shape[2] * out.shape[3] * x.shape[1];
  if (tasks == 1 || work < kSplitWork) {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
    ThreadPool::instance().run(tasks, task);
  }
  // The library's message stands where a part failed.
  return ok.load() ? NNP_OK : NNP_INTERNAL;
}

bool onednn_conv2d_backward(const nnp_view& x, const nnp_view& w, const nnp_view& grad_out, const nnp_conv2d_params& p,
                            const nnp_view* grad_x, const nnp_view* grad_w) {
  const nnp_kernels* k = onednn();
  if (k == nullptr) return false;
  const Split split = split_of(x, w, grad_out);
  const int64_t weights = w.shape[0] * w.shape[1] * w.shape[2] * w.shape[3];
  auto* gw = grad_w ? static_cast<float*>(grad_w->data) : nullptr;
  // Task t's share of grad_w: grad_w itself for task 0, else a partial sum.
  std::vector<float>& partials = scratch(0);
  if (gw) partials.resize(static_cast<size_t>((split.tasks - 1) * weights));
  const bool ok = for_each_chunk(x.shape[0], split, [&](int64_t t, int64_t first, int64_t count) {
    const nnp_view part_x = images_of(x, first, count), part_grad = images_of(grad_out, first, count);
    nnp_view part_gx{}, part_gw{};
    if (grad_x) part_gx = images_of(*grad_x, first, count);
    // A task's first chunk writes its share; later ones are added to it.
    const bool first_chunk = first == split.first(x.shape[0], t);
    float* share = t == 0 ? gw : partials.data() + (t - 1) * weights;
    std::vector<float>& chunk_grad = scratch(1);
    if (gw) {
      if (!first_chunk) chunk_grad.resize(static_cast<size_t>(weights));
      part_gw = *grad_w;
      part_gw.data = first_chunk ? share : chunk_grad.data();
    }
    const nnp_status status = k->conv2d_backward(nullptr, &part_x, &w, &part_grad, &p, grad_x ? &part_gx : nullptr,
                                                 gw ? &part_gw : nullptr, nullptr);
    if (status == NNP_OK && gw && !first_chunk)
      for (int64_t i = 0; i < weights; ++i) share[i] += chunk_grad[static_cast<size_t>(i)];
    return status;
  });
  if (!ok) return false;
  for (int64_t t = 1; gw && t < split.tasks; ++t) {
    const float* part = partials.data() + (t - 1) * weights;
    for (int64_t i = 0; i < weights; ++i) gw[i] += part[i];
  }
  return true;
}

}  // namespace nnp::cpu
