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
  return for_each_chunk(x.shape[0], split_of(x, w, out), [&](int64_t, int64_t first, int64_t count) {
    const nnp_view part_x = images_of(x, first, count), part_out = images_of(out, first, count);
    return k->conv2d(nullptr, &part_x, &w, bias, &p, &part_out);
  });
}

bool onednn_conv2d_backward(const nnp_view& x, const nnp_view& w, const nnp_view& grad_out,
                            const nnp_conv2d_params& p, const nnp_view* grad_x, const nnp_view* grad_w) {
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
