// 2-D convolution (nnp_kernels.conv2d and conv2d_backward). oneDNN's direct
// kernels take it where they can (cpu_conv_onednn.hpp); otherwise the windows of a
// chunk of images unrolled into columns (im2col, on the pool), one GEMM per
// group over the whole chunk, then the bias added while the result is moved
// into [N, O, OH, OW]. One GEMM over many images is what makes this
// fast: a 32 x 64 x 400 product per image leaves OpenBLAS idle. Backward
// runs the same columns through the transposed products: the weight's
// gradient is grad_out's columns times the columns, the input's is the
// weight times grad_out's columns folded back onto the image (col2im).
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_conv_onednn.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

// Columns per chunk at most (floats): bounds the scratch at 64 MB however
// large the batch.
constexpr int64_t kMaxColumnFloats = int64_t{16} << 20;

struct Geometry {
  int64_t n, c, h, w;          // input
  int64_t o, cg, kh, kw;       // weight (cg = channels per group)
  int64_t oh, ow, groups, og;  // output (og = output channels per group)
  const nnp_conv2d_params* p;
};

// Scratch that only grows, so steady-state calls do not allocate.
std::vector<float>& scratch(int slot) {
  thread_local std::vector<float> buffers[3];
  return buffers[slot];
}

Geometry geometry_of(const nnp_view& x, const nnp_view& w, const nnp_view& out, const nnp_conv2d_params* p) {
  return Geometry{x.shape[0], x.shape[1], x.shape[2],   x.shape[3],   w.shape[0], w.shape[1],
                  w.shape[2], w.shape[3], out.shape[2], out.shape[3], p->groups,  w.shape[0] / p->groups,
                  p};
}

// Images per chunk: as many as fit kMaxColumnFloats of columns.
int64_t chunk_of(const Geometry& g) {
  return std::clamp<int64_t>(kMaxColumnFloats / std::max<int64_t>(g.cg * g.kh * g.kw * g.oh * g.ow, 1), 1, g.n);
}

// cols[r][i * L + l] for the chunk's images i, r = (c, ki, kj) of group g.
void im2col(const Geometry& g, const float* x, int64_t group, int64_t first, int64_t images, float* cols) {
  const int64_t l_size = g.oh * g.ow, rows = g.cg * g.kh * g.kw, stride = images * l_size;
  const int64_t s0 = g.p->stride[0], s1 = g.p->stride[1], p0 = g.p->padding[0], p1 = g.p->padding[1];
  const int64_t d0 = g.p->dilation[0], d1 = g.p->dilation[1];
  parallel_for(rows * images, l_size, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t r = task / images, i = task % images;
      const int64_t c = r / (g.kh * g.kw), ki = r / g.kw % g.kh, kj = r % g.kw;
      const float* plane = x + ((first + i) * g.c + group * g.cg + c) * g.h * g.w;
      float* dst = cols + r * stride + i * l_size;
      for (int64_t y = 0; y < g.oh; ++y, dst += g.ow) {
        const int64_t iy = y * s0 - p0 + ki * d0;
        if (iy < 0 || iy >= g.h) {
          std::fill(dst, dst + g.ow, 0.0f);
          continue;
        }
        const float* row = plane + iy * g.w;
        const int64_t offset = kj * d1 - p1;  // ix = x * s1 + offset
        if (s1 == 1) {
          const int64_t lo = std::clamp<int64_t>(-offset, 0, g.ow), hi = std::clamp<int64_t>(g.w - offset, lo, g.ow);
          std::fill(dst, dst + lo, 0.0f);
          std::memcpy(dst + lo, row + lo + offset, static_cast<size_t>(hi - lo) * sizeof(float));
          std::fill(dst + hi, dst + g.ow, 0.0f);
        } else {
          for (int64_t xo = 0; xo < g.ow; ++xo) {
            const int64_t ix = xo * s1 + offset;
            dst[xo] = ix >= 0 && ix < g.w ? row[ix] : 0.0f;
          }
        }
      }
    }
  });
}

// The inverse of im2col: grad_x[image, group's channel c] += every column
// entry that was read from it. One task per (channel, image) plane, so no two
// tasks write the same element.
void col2im(const Geometry& g, const float* cols, int64_t group, int64_t first, int64_t images, float* grad_x) {
  const int64_t l_size = g.oh * g.ow, stride = images * l_size;
  const int64_t s0 = g.p->stride[0], s1 = g.p->stride[1], p0 = g.p->padding[0], p1 = g.p->padding[1];
  const int64_t d0 = g.p->dilation[0], d1 = g.p->dilation[1];
  parallel_for(g.cg * images, g.kh * g.kw * l_size, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t c = task / images, i = task % images;
      float* plane = grad_x + ((first + i) * g.c + group * g.cg + c) * g.h * g.w;
      for (int64_t ki = 0; ki < g.kh; ++ki)
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          const float* src = cols + ((c * g.kh + ki) * g.kw + kj) * stride + i * l_size;
          for (int64_t y = 0; y < g.oh; ++y, src += g.ow) {
            const int64_t iy = y * s0 - p0 + ki * d0;
            if (iy < 0 || iy >= g.h) continue;
            float* row = plane + iy * g.w;
            const int64_t offset = kj * d1 - p1;
            for (int64_t xo = 0; xo < g.ow; ++xo) {
              const int64_t ix = xo * s1 + offset;
              if (ix >= 0 && ix < g.w) row[ix] += src[xo];
            }
          }
        }
    }
  });
}

// out[n, group's channel k, :] = product[k, i * L ...] + bias.
void finish(const Geometry& g, const float* product, const float* bias, int64_t group, int64_t first, int64_t images,
            float* out) {
  const int64_t l_size = g.oh * g.ow, stride = images * l_size;
  parallel_for(images * g.og, l_size, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t i = task / g.og, k = task % g.og, channel = group * g.og + k;
      const float* src = product + k * stride + i * l_size;
      float* dst = out + ((first + i) * g.o + channel) * l_size;
      const float b = bias ? bias[channel] : 0.0f;
      for (int64_t t = 0; t < l_size; ++t) dst[t] = src[t] + b;
    }
  });
}

}  // namespace

nnp_status conv2d(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* w, const nnp_view* bias,
                  const nnp_conv2d_params* p, const nnp_view* out) {
  if (x->dtype != NNP_F32 || w->dtype != NNP_F32 || out->dtype != NNP_F32 || (bias && bias->dtype != NNP_F32))
    return fail(NNP_DTYPE_MISMATCH, "conv2d: the cpu backend's convolution kernel takes f32 only");
  const bool relu = p->struct_size >= NNP_CONV2D_PARAMS_SIZE_1_18 && p->activation == NNP_ACTIVATION_RELU;
  // oneDNN's ReLU post-op turns a NaN into 0, where nnplug's ReLU (as
  // PyTorch's) keeps it: its convolution runs without the post-op and the
  // ReLU follows, as after im2col (the conformance kit's NaN case, on a CPU
  // without AVX-512 where the packed convolution declines).
  nnp_conv2d_params plain{};
  std::memcpy(&plain, p, std::min(p->struct_size, sizeof(plain)));
  if (relu) plain.activation = NNP_ACTIVATION_NONE;
  if (onednn_conv2d(*x, *w, bias, plain, *out)) return relu ? unary(nullptr, NNP_UNARY_RELU, out, out) : NNP_OK;
  const Geometry g = geometry_of(*x, *w, *out, p);
  const int64_t l_size = g.oh * g.ow, rows = g.cg * g.kh * g.kw;
  const float* px = static_cast<const float*>(x->data);
  const float* pw = static_cast<const float*>(w->data);
  const float* pb = bias ? static_cast<const float*>(bias->data) : nullptr;
  float* po = static_cast<float*>(out->data);
  const int64_t chunk = chunk_of(g);
  std::vector<float>& cols = scratch(0);
  std::vector<float>& product = scratch(1);
  cols.resize(static_cast<size_t>(rows * chunk * l_size));
  product.resize(static_cast<size_t>(g.og * chunk * l_size));
  for (int64_t first = 0; first < g.n; first += chunk) {
    const int64_t images = std::min(chunk, g.n - first), columns = images * l_size;
    for (int64_t group = 0; group < g.groups; ++group) {
      im2col(g, px, group, first, images, cols.data());
      sgemm_on_pool(false, false, g.og, columns, rows, pw + group * g.og * rows, rows, cols.data(), columns, 0.0f,
                    product.data(), columns);
      finish(g, product.data(), pb, group, first, images, po);
    }
  }
  return relu ? unary(nullptr, NNP_UNARY_RELU, out, out) : NNP_OK;
}

nnp_status conv2d_backward(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* w, const nnp_view* grad_out,
                           const nnp_conv2d_params* p, const nnp_view* grad_x, const nnp_view* grad_w,
                           const nnp_view* grad_bias) {
  for (const nnp_view* v : {x, w, grad_out, grad_x, grad_w, grad_bias})
    if (v && v->dtype != NNP_F32)
      return fail(NNP_DTYPE_MISMATCH, "conv2d_backward: the cpu backend's convolution kernel takes f32 only");
  const Geometry g = geometry_of(*x, *w, *grad_out, p);
  const int64_t l_size = g.oh * g.ow, rows = g.cg * g.kh * g.kw;
  const float* px = static_cast<const float*>(x->data);
  const float* pw = static_cast<const float*>(w->data);
  const float* go = static_cast<const float*>(grad_out->data);
  float* gx = grad_x ? static_cast<float*>(grad_x->data) : nullptr;
  float* gw = grad_w ? static_cast<float*>(grad_w->data) : nullptr;
  if (grad_bias) {  // the sum of each output channel over images and positions
    float* gb = static_cast<float*>(grad_bias->data);
    parallel_for(g.o, g.n * l_size, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        double sum = 0;
        for (int64_t n = 0; n < g.n; ++n) {
          // Eight running sums, so that the loop vectorises: one float sum
          // waits on its previous add at every element.
          const float* plane = go + (n * g.o + o) * l_size;
          float lanes[8] = {};
          int64_t t = 0;
          for (; t + 8 <= l_size; t += 8)
            for (int k = 0; k < 8; ++k) lanes[k] += plane[t + k];
          float part = 0;
          for (; t < l_size; ++t) part += plane[t];
          for (float lane : lanes) part += lane;
          sum += part;
        }
        gb[o] = static_cast<float>(sum);
      }
    });
  }
  if (!gx && !gw) return NNP_OK;
  if (onednn_conv2d_backward(*x, *w, *grad_out, *p, grad_x, grad_w)) return NNP_OK;
  if (gx) std::fill(gx, gx + g.n * g.c * g.h * g.w, 0.0f);
  const int64_t chunk = chunk_of(g);
  std::vector<float>& cols = scratch(0);
  std::vector<float>& grads = scratch(1);  // grad_out's columns of one group: [og, images * L]
  std::vector<float>& back = scratch(2);   // the columns' gradient: [rows, images * L]
  cols.resize(static_cast<size_t>(rows * chunk * l_size));
  grads.resize(static_cast<size_t>(g.og * chunk * l_size));
  if (gx) back.resize(static_cast<size_t>(rows * chunk * l_size));
  for (int64_t first = 0; first < g.n; first += chunk) {
    const int64_t images = std::min(chunk, g.n - first), columns = images * l_size;
    for (int64_t group = 0; group < g.groups; ++group) {
      parallel_for(g.og * images, l_size, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t k = task / images, i = task % images;
          std::memcpy(grads.data() + k * columns + i * l_size, go + ((first + i) * g.o + group * g.og + k) * l_size,
                      static_cast<size_t>(l_size) * sizeof(float));
        }
      });
      if (gw) {  // grad_w[group] (+)= grads @ cols^T: [og, rows]
        im2col(g, px, group, first, images, cols.data());
        sgemm_on_pool(false, true, g.og, rows, columns, grads.data(), columns, cols.data(), columns,
                      first == 0 ? 0.0f : 1.0f, gw + group * g.og * rows, rows);
      }
      if (gx) {  // back = w[group]^T @ grads: [rows, columns], then folded onto grad_x
        sgemm_on_pool(true, false, rows, columns, g.og, pw + group * g.og * rows, rows, grads.data(), columns, 0.0f,
                      back.data(), columns);
        col2im(g, back.data(), group, first, images, gx);
      }
    }
  }
  return NNP_OK;
}

}  // namespace nnp::cpu
