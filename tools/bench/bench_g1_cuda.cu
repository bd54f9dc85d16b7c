// G1's peer where PyTorch for CUDA is not at hand: W1's training step (MLP
// 784-512-512-10, batch 1024, cross-entropy, SGD with momentum 0.9) written
// directly against cuBLAS with fused kernels, as a careful CUDA programmer
// would: bias + ReLU in one pass, softmax + cross-entropy + its gradient in
// one pass, the ReLU mask and the bias gradient in one pass, and one
// momentum-SGD pass over every parameter (they live in one buffer).
// f32 throughout, no TF32 (nnplug's matmul is full f32, as PyTorch's).
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda_device.hpp"

namespace {

constexpr int kBatch = 1024, kIn = 784, kHidden = 512, kClasses = 10;

// The parameters (and their gradients, and the momentum buffers) laid out one
// after another in one allocation each.
struct Layout {
  size_t w1 = 0, b1 = w1 + size_t{kHidden} * kIn, w2 = b1 + kHidden, b2 = w2 + size_t{kHidden} * kHidden,
         w3 = b2 + kHidden, b3 = w3 + size_t{kClasses} * kHidden, total = b3 + kClasses;
};

__global__ void bias_relu(float* y, const float* bias, int rows, int cols, bool relu) {
  const int64_t n = int64_t{rows} * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    float v = y[i] + bias[i % cols];
    y[i] = relu ? fmaxf(v, 0.f) : v;
  }
}

// One warp per row: the loss (mean over the batch, accumulated into *loss)
// and d loss / d logits = (softmax - onehot) / rows.
__global__ void softmax_cross_entropy(const float* logits, const int64_t* labels, float* grad, float* loss, int rows,
                                      int cols) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* x = logits + int64_t{row} * cols;
  float max = -INFINITY;
  for (int j = lane; j < cols; j += 32) max = fmaxf(max, x[j]);
  for (int o = 16; o > 0; o >>= 1) max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, o));
  float sum = 0;
  for (int j = lane; j < cols; j += 32) sum += expf(x[j] - max);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  const int64_t label = labels[row];
  for (int j = lane; j < cols; j += 32)
    grad[int64_t{row} * cols + j] = (expf(x[j] - max) / sum - (j == label ? 1.f : 0.f)) / rows;
  if (lane == 0) atomicAdd(loss, (logf(sum) + max - x[label]) / rows);
}

// dz = dy * (y > 0) in place (when masked) and db = the column sums of dz:
// 32 columns per block, its 8 rows of threads striding down the batch.
__global__ void relu_mask_bias_grad(float* dy, const float* y, float* db, int rows, int cols, bool masked) {
  __shared__ float partial[8][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  float sum = 0;
  if (col < cols)
    for (int r = threadIdx.y; r < rows; r += 8) {
      const int64_t i = int64_t{r} * cols + col;
      float g = dy[i];
      if (masked && y[i] <= 0.f) dy[i] = g = 0.f;
      sum += g;
    }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    for (int k = 1; k < 8; ++k) sum += partial[k][threadIdx.x];
    db[col] = sum;
  }
}

// PyTorch's SGD with momentum: buf = grad on the first step, then
// buf = momentum * buf + grad; param -= lr * buf.
__global__ void sgd_momentum(float4* param, const float4* grad, float4* buf, int64_t n4, float lr, float momentum,
                             bool first) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n4; i += int64_t{gridDim.x} * blockDim.x) {
    float4 g = grad[i], b = first ? g : buf[i], p = param[i];
    if (!first) {
      b.x = momentum * b.x + g.x;
      b.y = momentum * b.y + g.y;
      b.z = momentum * b.z + g.z;
      b.w = momentum * b.w + g.w;
    }
    p.x -= lr * b.x;
    p.y -= lr * b.y;
    p.z -= lr * b.z;
    p.w -= lr * b.w;
    buf[i] = b;
    param[i] = p;
  }
}

class G1Peer {
 public:
  explicit G1Peer(cudaStream_t stream) : stream_(stream) {
    cublasCreate(&blas_);
    cublasSetStream(blas_, stream_);
    cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH);
    const size_t total = (layout_.total + 3) / 4 * 4;  // whole float4s
    cudaMalloc(&params_, total * sizeof(float));
    cudaMalloc(&grads_, total * sizeof(float));
    cudaMalloc(&momentum_, total * sizeof(float));
    cudaMemset(grads_, 0, total * sizeof(float));
    cudaMalloc(&x_, sizeof(float) * kBatch * kIn);
    cudaMalloc(&labels_, sizeof(int64_t) * kBatch);
    cudaMalloc(&h1_, sizeof(float) * kBatch * kHidden);
    cudaMalloc(&h2_, sizeof(float) * kBatch * kHidden);
    cudaMalloc(&logits_, sizeof(float) * kBatch * kClasses);
    cudaMalloc(&dh_, sizeof(float) * kBatch * kHidden);
    cudaMalloc(&dh2_, sizeof(float) * kBatch * kHidden);
    cudaMalloc(&loss_, sizeof(float));
    // Kaiming-uniform-like weights and random data, as the nnplug side has.
    std::mt19937 rng(1);
    std::vector<float> host(total, 0.f);
    auto fill = [&](size_t at, size_t count, float bound) {
      std::uniform_real_distribution<float> u(-bound, bound);
      for (size_t i = 0; i < count; ++i) host[at + i] = u(rng);
    };
    fill(layout_.w1, size_t{kHidden} * kIn, 1 / std::sqrt(float(kIn)));
    fill(layout_.b1, kHidden, 1 / std::sqrt(float(kIn)));
    fill(layout_.w2, size_t{kHidden} * kHidden, 1 / std::sqrt(float(kHidden)));
    fill(layout_.b2, kHidden, 1 / std::sqrt(float(kHidden)));
    fill(layout_.w3, size_t{kClasses} * kHidden, 1 / std::sqrt(float(kHidden)));
    fill(layout_.b3, kClasses, 1 / std::sqrt(float(kHidden)));
    cudaMemcpy(params_, host.data(), total * sizeof(float), cudaMemcpyHostToDevice);
    std::normal_distribution<float> normal;
    std::vector<float> x(size_t{kBatch} * kIn);
    for (float& v : x) v = normal(rng);
    cudaMemcpy(x_, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
    std::vector<int64_t> labels(kBatch);
    for (int64_t& v : labels) v = static_cast<int64_t>(rng() % kClasses);
    cudaMemcpy(labels_, labels.data(), labels.size() * sizeof(int64_t), cudaMemcpyHostToDevice);
    n4_ = static_cast<int64_t>(total / 4);
  }
  ~G1Peer() {
    for (void* p :
         {static_cast<void*>(params_), static_cast<void*>(grads_), static_cast<void*>(momentum_),
          static_cast<void*>(x_), static_cast<void*>(labels_), static_cast<void*>(h1_), static_cast<void*>(h2_),
          static_cast<void*>(logits_), static_cast<void*>(dh_), static_cast<void*>(dh2_), static_cast<void*>(loss_)})
      cudaFree(p);
    cublasDestroy(blas_);
  }

  // One training step, queued on the stream; returns the first error met.
  cudaError_t step() {
    const int fill_blocks = 132 * 4;
    cudaMemsetAsync(loss_, 0, sizeof(float), stream_);
    linear_forward(p(layout_.w1), x_, h1_, kIn, kHidden);
    bias_relu<<<fill_blocks, 256, 0, stream_>>>(h1_, p(layout_.b1), kBatch, kHidden, true);
    linear_forward(p(layout_.w2), h1_, h2_, kHidden, kHidden);
    bias_relu<<<fill_blocks, 256, 0, stream_>>>(h2_, p(layout_.b2), kBatch, kHidden, true);
    linear_forward(p(layout_.w3), h2_, logits_, kHidden, kClasses);
    bias_relu<<<(kBatch * kClasses + 255) / 256, 256, 0, stream_>>>(logits_, p(layout_.b3), kBatch, kClasses, false);
    float* dlogits = dh2_;  // free until layer 3's backward writes dh2
    softmax_cross_entropy<<<kBatch / 8, 256, 0, stream_>>>(logits_, labels_, dlogits, loss_, kBatch, kClasses);
    // Layer 3.
    relu_mask_bias_grad<<<1, dim3(32, 8), 0, stream_>>>(dlogits, nullptr, g(layout_.b3), kBatch, kClasses, false);
    linear_weight_grad(dlogits, h2_, g(layout_.w3), kHidden, kClasses);
    linear_input_grad(dlogits, p(layout_.w3), dh_, kHidden, kClasses);
    // Layer 2 (dlogits is dead now: dh2_ is reused for layer 2's input grad).
    relu_mask_bias_grad<<<kHidden / 32, dim3(32, 8), 0, stream_>>>(dh_, h2_, g(layout_.b2), kBatch, kHidden, true);
    linear_weight_grad(dh_, h1_, g(layout_.w2), kHidden, kHidden);
    linear_input_grad(dh_, p(layout_.w2), dh2_, kHidden, kHidden);
    // Layer 1 (no input gradient).
    relu_mask_bias_grad<<<kHidden / 32, dim3(32, 8), 0, stream_>>>(dh2_, h1_, g(layout_.b1), kBatch, kHidden, true);
    linear_weight_grad(dh2_, x_, g(layout_.w1), kIn, kHidden);
    sgd_momentum<<<fill_blocks, 256, 0, stream_>>>(reinterpret_cast<float4*>(params_),
                                                   reinterpret_cast<const float4*>(grads_),
                                                   reinterpret_cast<float4*>(momentum_), n4_, 0.01f, 0.9f, first_);
    first_ = false;
    if (blas_error_ != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;
    return cudaGetLastError();
  }

  float loss() const {
    float host = 0;
    cudaMemcpy(&host, loss_, sizeof host, cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  float* p(size_t at) { return params_ + at; }
  float* g(size_t at) { return grads_ + at; }

  // Row-major [rows, cols] is column-major [cols, rows]: each product below
  // is written as cuBLAS sees the transposes.
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* a, int lda, const float* b,
            int ldb, float* c, int ldc) {
    const float one = 1, zero = 0;
    cublasStatus_t s = cublasSgemm(blas_, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
    if (s != CUBLAS_STATUS_SUCCESS) blas_error_ = s;
  }
  // y[B, out] = x[B, in] w[out, in]^T
  void linear_forward(const float* w, const float* x, float* y, int in, int out) {
    gemm(CUBLAS_OP_T, CUBLAS_OP_N, out, kBatch, in, w, in, x, in, y, out);
  }
  // dw[out, in] = dy[B, out]^T x[B, in]
  void linear_weight_grad(const float* dy, const float* x, float* dw, int in, int out) {
    gemm(CUBLAS_OP_N, CUBLAS_OP_T, in, out, kBatch, x, in, dy, out, dw, in);
  }
  // dx[B, in] = dy[B, out] w[out, in]
  void linear_input_grad(const float* dy, const float* w, float* dx, int in, int out) {
    gemm(CUBLAS_OP_N, CUBLAS_OP_N, in, kBatch, out, w, in, dy, out, dx, in);
  }

  cudaStream_t stream_;
  cublasHandle_t blas_ = nullptr;
  cublasStatus_t blas_error_ = CUBLAS_STATUS_SUCCESS;
  Layout layout_;
  float *params_ = nullptr, *grads_ = nullptr, *momentum_ = nullptr, *x_ = nullptr;
  int64_t* labels_ = nullptr;
  float *h1_ = nullptr, *h2_ = nullptr, *logits_ = nullptr, *dh_ = nullptr, *dh2_ = nullptr, *loss_ = nullptr;
  int64_t n4_ = 0;
  bool first_ = true;
};

void G1_cuda_direct(benchmark::State& state) {
  if (!nnp::bench::require_cuda_device(state)) return;
  cudaError_t error = cudaSuccess;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  {
    G1Peer peer(stream);
    float first_loss = 0;
    for (int i = 0; i < 10; ++i) {  // warm-up, as the nnplug side
      if ((error = peer.step()) != cudaSuccess) break;
      if (i == 0) first_loss = peer.loss();
    }
    cudaStreamSynchronize(stream);
    for (auto _ : state) {
      if (error == cudaSuccess) error = peer.step();
      cudaStreamSynchronize(stream);
    }
    if (error != cudaSuccess) {
      state.SkipWithError((std::string("the direct CUDA step failed: ") + cudaGetErrorString(error)).c_str());
    } else {
      // The loss falling shows the step is a real training step.
      state.counters["first_loss"] = first_loss;
      state.counters["last_loss"] = peer.loss();
    }
  }
  cudaStreamDestroy(stream);
}
BENCHMARK(G1_cuda_direct)->Name("G1/cuda_direct")->Unit(benchmark::kMicrosecond)->MinTime(2.0)->UseRealTime();

}  // namespace
