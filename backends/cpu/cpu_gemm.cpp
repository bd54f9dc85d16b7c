// Batched GEMM through OpenBLAS, and f32 products large enough in every
// dimension through the backend's own kernels (cpu_sgemm.hpp). f32/f64
// operands are handed to BLAS in place whenever their strides describe a
// (possibly transposed) matrix; bf16 products run on AMX tiles where the CPU
// has them (cpu_amx_gemm.cpp), else through the backend's own kernels, which
// widen bf16 as they pack (own_sgemm_bf16); anything else, and f16, is
// packed into f32 scratch first.
//
// OpenBLAS runs single-threaded here and a large product is split over the
// backend's own pool instead, in column (or row) blocks, one BLAS call each.
// Two sets of threads on the same cores would take turns: OpenBLAS's workers
// spin on sched_yield after every call while the pool's run the elementwise
// ops between the products, and the pool's would do the same to OpenBLAS.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <vector>

#include "cpu_amx_gemm.hpp"
#include "cpu_bf16_vector.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"
#include "cpu_sgemm.hpp"

namespace nnp::cpu {
namespace {

// OpenBLAS's thread count is one setting for the whole process, and other
// code in it (an application, a peer library) may call OpenBLAS too: it is
// lowered to 1 only while a gemm of this backend runs, and the last of
// concurrent gemms puts back the count it found.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() {
    std::lock_guard<std::mutex> lock(mutex());
    if (active()++ == 0) {
      saved() = openblas_get_num_threads();
      if (saved() != 1) openblas_set_num_threads(1);
    }
  }
  ~SingleThreadedBlas() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--active() == 0 && saved() != 1) openblas_set_num_threads(saved());
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& active() {
    static int n = 0;
    return n;
  }
  static int& saved() {
    static int n = 1;
    return n;
  }
};

// Below this many multiply-adds a product runs on one thread (OpenBLAS's own
// threshold for threading one is 262144).
constexpr int64_t kSplitWork = int64_t{1} << 19;

// How BLAS sees one rows x cols operand: pointer, transpose flag and leading
// dimension, or `usable == false` when it must be packed.
template <typename C>
struct BlasMatrix {
  const C* data = nullptr;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 1;
  bool usable = false;
};

template <typename C>
BlasMatrix<C> as_blas(const C* data, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  BlasMatrix<C> m;
  m.data = data;
  const int64_t min_rows = rows > 1 ? rows : 1, min_cols = cols > 1 ? cols : 1;
  if ((col_stride == 1 || cols == 1) && (row_stride >= min_cols || rows == 1)) {
    m.trans = CblasNoTrans;
    m.ld = rows == 1 ? min_cols : row_stride;
    m.usable = true;
  } else if ((row_stride == 1 || rows == 1) && (col_stride >= min_rows || cols == 1)) {
    m.trans = CblasTrans;
    m.ld = cols == 1 ? min_rows : col_stride;
    m.usable = true;
  }
  return m;
}

// Per-thread scratch that only grows, so steady-state calls do not allocate.
std::vector<float>& scratch(int slot) {
  thread_local std::vector<float> buffers[3];
  return buffers[slot];
}

template <typename T>
void pack(const T* data, int64_t rows, int64_t cols, int64_t rs, int64_t cs, float* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = static_cast<float>(Traits<T>::load(data[r * rs + c * cs]));
}

// A 16-bit operand into f32 scratch as blas will read it: a bf16 operand
// whose rows (or columns: a transposed one) are contiguous converts whole
// runs in vector code (cpu_bf16_vector.hpp) and keeps its orientation;
// anything else goes one element at a time, row-major.
template <typename T>
BlasMatrix<float> pack_to_f32(const T* data, int64_t rows, int64_t cols, int64_t rs, int64_t cs, float* dst) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const auto* bits = reinterpret_cast<const uint16_t*>(data);
    if (cs == 1 && rows > 0 && bf16_to_f32_run(bits, dst, cols)) {
      for (int64_t r = 1; r < rows; ++r) bf16_to_f32_run(bits + r * rs, dst + r * cols, cols);
      return as_blas(static_cast<const float*>(dst), rows, cols, cols, 1);
    }
    if (rs == 1 && cols > 0 && bf16_to_f32_run(bits, dst, rows)) {
      for (int64_t c = 1; c < cols; ++c) bf16_to_f32_run(bits + c * cs, dst + c * rows, rows);
      return as_blas(static_cast<const float*>(dst), rows, cols, 1, rows);
    }
  }
  pack(data, rows, cols, rs, cs, dst);
  return as_blas(static_cast<const float*>(dst), rows, cols, cols, 1);
}

// c[m, n] (leading dimension ldc) = a @ b + beta * c, then the epilogue,
// on this thread: by the backend's own kernels where they pay (the epilogue
// as they store), else by OpenBLAS and a pass over c.
void blas_gemm(const BlasMatrix<float>& a, const BlasMatrix<float>& b, float* c, int64_t m, int64_t n, int64_t k,
               int64_t ldc, double beta, const SgemmEpilogue& epilogue = {}) {
  if (own_sgemm_pays(m, n, k)) {
    own_sgemm(a.trans == CblasTrans, b.trans == CblasTrans, m, n, k, a.data, a.ld, b.data, b.ld,
              static_cast<float>(beta), c, ldc, epilogue);
    return;
  }
  if (m == 1) {
    // One row (a Linear at batch 1): a matrix-vector product. OpenBLAS's
    // sgemm packs all of b for it except in its SkylakeX build's small-matrix
    // path; its Haswell and Zen builds (every AVX2 CPU) took 6 times longer
    // than sgemv (W1's first layer: 118 us against 20).
    const blasint x_step = static_cast<blasint>(a.trans == CblasNoTrans ? 1 : a.ld);
    if (b.trans == CblasTrans)  // b is stored [n, k]
      cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, b.data,
                  static_cast<blasint>(b.ld), a.data, x_step, static_cast<float>(beta), c, 1);
    else  // b is stored [k, n]
      cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<blasint>(k), static_cast<blasint>(n), 1.0f, b.data,
                  static_cast<blasint>(b.ld), a.data, x_step, static_cast<float>(beta), c, 1);
  } else {
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0f, a.data, static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld),
                static_cast<float>(beta), c, static_cast<blasint>(ldc));
  }
  if (!epilogue.bias && !epilogue.relu) return;
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (epilogue.bias)
      for (int64_t j = 0; j < n; ++j) row[j] += epilogue.bias[j];
    if (epilogue.relu)
      for (int64_t j = 0; j < n; ++j) row[j] = row[j] < 0.0f ? 0.0f : row[j];  // a NaN stays NaN
  }
}

void blas_gemm(const BlasMatrix<double>& a, const BlasMatrix<double>& b, double* c, int64_t m, int64_t n, int64_t k,
               int64_t ldc, double beta) {
  cblas_dgemm(CblasRowMajor, a.trans, b.trans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0, a.data, static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld),
              beta, c, static_cast<blasint>(ldc));
}

// bf16 operands (their bits) into a bf16 c, beta 0: the backend's own
// kernels, whatever the size of this thread's share.
void blas_gemm(const BlasMatrix<uint16_t>& a, const BlasMatrix<uint16_t>& b, uint16_t* c, int64_t m, int64_t n,
               int64_t k, int64_t ldc, double /*beta: 0*/) {
  own_sgemm_bf16(a.trans == CblasTrans, b.trans == CblasTrans, m, n, k, a.data, a.ld, b.data, b.ld, c, ldc);
}

// The rows [first, first + count) of a (as BLAS sees it), or its columns.
template <typename C>
BlasMatrix<C> rows_of(BlasMatrix<C> a, int64_t first) {
  a.data += a.trans == CblasNoTrans ? first * a.ld : first;
  return a;
}
template <typename C>
BlasMatrix<C> columns_of(BlasMatrix<C> b, int64_t first) {
  b.data += b.trans == CblasNoTrans ? first : first * b.ld;
  return b;
}

// The epilogue of the columns [first, ...): their bias.
SgemmEpilogue columns_of(SgemmEpilogue e, int64_t first) {
  if (e.bias) e.bias += first;
  return e;
}

// c ([m, n], leading dimension ldc, n by default) = a @ b + beta * c (then
// the epilogue, f32 only), a
// large product split over the pool along its larger dimension in blocks of
// whole cache lines of c.
template <typename C, typename... Epilogue>
void call_gemm(const BlasMatrix<C>& a, const BlasMatrix<C>& b, C* c, int64_t m, int64_t n, int64_t k, int64_t ldc = -1,
               double beta = 0, const Epilogue&... epilogue) {
  if (ldc < 0) ldc = n;
  const int threads = ThreadPool::instance().size();
  if (threads <= 1 || m * n * k < kSplitWork || std::max(m, n) < 32) {
    blas_gemm(a, b, c, m, n, k, ldc, beta, epilogue...);
    return;
  }
  bool by_columns = n >= m;
  // A weight gradient (a transposed, k the batch) splits by rows unless it
  // has too few: by columns each thread packs all of a and writes half of
  // every row of c, and W1's 512 x 512 x 128 product ran 1.1 to 1.8 times
  // slower than by rows.
  if (a.trans == CblasTrans && m >= 32) by_columns = false;
  const int64_t extent = by_columns ? n : m, align = 16;
  const int64_t parts = std::clamp<int64_t>(extent / align, 1, threads);
  ThreadPool::instance().run(parts, [&](int64_t part) {
    const int64_t first = extent * part / parts / align * align;
    const int64_t last = part + 1 == parts ? extent : extent * (part + 1) / parts / align * align;
    if (by_columns)
      blas_gemm(a, columns_of(b, first), c + first, m, last - first, k, ldc, beta, columns_of(epilogue, first)...);
    else
      blas_gemm(rows_of(a, first), b, c + first * ldc, last - first, n, k, ldc, beta, epilogue...);
  });
}

template <typename T>
void gemm_one(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, const nnp_view& va, const nnp_view& vb,
              int32_t nb) {
  const int64_t ars = va.strides[nb], acs = va.strides[nb + 1], brs = vb.strides[nb], bcs = vb.strides[nb + 1];
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = Traits<T>::store(0);
    return;
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    BlasMatrix<T> ma = as_blas(a, m, k, ars, acs), mb = as_blas(b, k, n, brs, bcs);
    if (ma.usable && mb.usable) {
      call_gemm(ma, mb, c, m, n, k);
      return;
    }
    if constexpr (std::is_same_v<T, double>) {
      // Rare (overlapping or oddly strided f64): pack to contiguous f64.
      std::vector<double> pa(static_cast<size_t>(m * k)), pb(static_cast<size_t>(k * n));
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < k; ++j) pa[r * k + j] = a[r * ars + j * acs];
      for (int64_t r = 0; r < k; ++r)
        for (int64_t j = 0; j < n; ++j) pb[r * n + j] = b[r * brs + j * bcs];
      call_gemm(as_blas(pa.data(), m, k, k, 1), as_blas(pb.data(), k, n, n, 1), c, m, n, k);
      return;
    }
  }
  if constexpr (std::is_same_v<T, BFloat16>) {
    // The smallest products cost more to pack than to multiply (attention's per head from 64 x 32 x 32 up).
    if (m >= 32 && n >= 32 && m * n * k >= (int64_t{1} << 16) && amx_gemm_available()) {
      amx_gemm(reinterpret_cast<const uint16_t*>(a), reinterpret_cast<const uint16_t*>(b),
               reinterpret_cast<uint16_t*>(c), m, n, k, ars, acs, brs, bcs);
      return;
    }
    // Widened as the own kernels pack, rounded as each block of c is done:
    // no f32 copy of a, b or c, and every conversion on the threads that
    // multiply (W7's bf16 products on AVX2 ran 1.2-1.45 times their f32
    // form with the copies made first, on one thread).
    if (own_sgemm_bf16_pays(m, n, k)) {
      const BlasMatrix<uint16_t> ma = as_blas(reinterpret_cast<const uint16_t*>(a), m, k, ars, acs);
      const BlasMatrix<uint16_t> mb = as_blas(reinterpret_cast<const uint16_t*>(b), k, n, brs, bcs);
      if (ma.usable && mb.usable) {
        call_gemm(ma, mb, reinterpret_cast<uint16_t*>(c), m, n, k);
        return;
      }
    }
  }
  // Pack into f32 scratch; f16/bf16 also compute and round from f32.
  std::vector<float>& sa = scratch(0);
  std::vector<float>& sb = scratch(1);
  sa.resize(static_cast<size_t>(m * k));
  sb.resize(static_cast<size_t>(k * n));
  const BlasMatrix<float> ma = pack_to_f32(a, m, k, ars, acs, sa.data());
  const BlasMatrix<float> mb = pack_to_f32(b, k, n, brs, bcs, sb.data());
  if constexpr (std::is_same_v<T, float>) {
    call_gemm(ma, mb, c, m, n, k);
  } else {
    std::vector<float>& sc = scratch(2);
    sc.resize(static_cast<size_t>(m * n));
    call_gemm(ma, mb, sc.data(), m, n, k);
    if (!std::is_same_v<T, BFloat16> || !f32_to_bf16_run(sc.data(), reinterpret_cast<uint16_t*>(c), m * n))
      for (int64_t i = 0; i < m * n; ++i) c[i] = Traits<T>::store(sc[i]);
  }
}

}  // namespace

void sgemm_on_pool(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  SingleThreadedBlas serial;
  const BlasMatrix<float> ma{a, trans_a ? CblasTrans : CblasNoTrans, lda, true};
  const BlasMatrix<float> mb{b, trans_b ? CblasTrans : CblasNoTrans, ldb, true};
  call_gemm(ma, mb, c, m, n, k, ldc, beta);
}

nnp_status gemm(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  SingleThreadedBlas serial;
  const int32_t nb = out->ndim - 2;
  const int64_t m = out->shape[nb], n = out->shape[nb + 1], k = a->shape[nb + 1];
  int64_t batches = 1;
  for (int32_t i = 0; i < nb; ++i) batches *= out->shape[i];
  return dispatch(a->dtype, [&](auto tag) -> nnp_status {
    using T = typename decltype(tag)::type;
    if constexpr (!is_floating_v<T>) {
      return fail(NNP_DTYPE_MISMATCH, "gemm: the cpu backend multiplies floating-point matrices only");
    } else {
      const T* pa = static_cast<const T*>(a->data);
      const T* pb = static_cast<const T*>(b->data);
      T* pc = static_cast<T*>(out->data);  // contiguous, allocated by the core
      auto products = [&](int64_t first, int64_t last) {
        for (int64_t batch = first; batch < last; ++batch) {
          int64_t oa = 0, ob = 0, rest = batch;
          for (int32_t i = nb - 1; i >= 0; --i) {
            int64_t idx = rest % out->shape[i];
            rest /= out->shape[i];
            oa += idx * a->strides[i];
            ob += idx * b->strides[i];
          }
          gemm_one<T>(pa + oa, pb + ob, pc + batch * m * n, m, n, k, *a, *b, nb);
        }
      };
      // A large product is split over the pool (call_gemm); a batch of
      // smaller ones (attention's heads) is spread over it instead, one
      // product per task.
      const int64_t work = m * n * k;
      if (batches > 1 && work < kSplitWork)
        parallel_for(batches, work, products);
      else
        products(0, batches);
      return NNP_OK;
    }
  });
}

// The product with its epilogue: the bias and the ReLU applied as each
// block of c is stored (the backend's own kernels), or in a pass over each
// thread's share of c right after OpenBLAS wrote it.
nnp_status gemm_epilogue(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* bias,
                         int32_t activation, const nnp_view* out) {
  if (a->dtype != NNP_F32 || b->dtype != NNP_F32 || out->dtype != NNP_F32 || (bias && bias->dtype != NNP_F32))
    return fail(NNP_DTYPE_MISMATCH, "gemm_epilogue: the cpu kernel takes f32");
  SingleThreadedBlas serial;
  const int64_t m = out->shape[0], n = out->shape[1], k = a->shape[1];
  const auto* pa = static_cast<const float*>(a->data);
  const auto* pb = static_cast<const float*>(b->data);
  auto* pc = static_cast<float*>(out->data);
  BlasMatrix<float> ma = as_blas(pa, m, k, a->strides[0], a->strides[1]);
  BlasMatrix<float> mb = as_blas(pb, k, n, b->strides[0], b->strides[1]);
  if (!ma.usable) {
    std::vector<float>& sa = scratch(0);
    sa.resize(static_cast<size_t>(m * k));
    pack(pa, m, k, a->strides[0], a->strides[1], sa.data());
    ma = as_blas(sa.data(), m, k, k, 1);
  }
  if (!mb.usable) {
    std::vector<float>& sb = scratch(1);
    sb.resize(static_cast<size_t>(k * n));
    pack(pb, k, n, b->strides[0], b->strides[1], sb.data());
    mb = as_blas(sb.data(), k, n, n, 1);
  }
  SgemmEpilogue epilogue;
  epilogue.bias = bias ? static_cast<const float*>(bias->data) : nullptr;
  epilogue.relu = activation == NNP_ACTIVATION_RELU;
  call_gemm(ma, mb, pc, m, n, k, n, 0.0, epilogue);
  return NNP_OK;
}

namespace {

// The packed right operand: a header naming what it was packed from, then
// the AVX-512 kernel's panels (sgemm_avx512_pack_b), 64-byte aligned.
constexpr uint32_t kPackedMagic = 0x6770636eu;  // "ncpg"
constexpr int64_t kPackedHeaderBytes = 128;
struct PackedHeader {
  uint32_t magic;
  uint32_t reserved;
  int64_t k, n;
};

}  // namespace

// Only where the backend's own AVX-512 kernel runs, and for products its
// panels suit (the thin ones stay with gemm_epilogue and OpenBLAS).
nnp_status gemm_pack(const nnp_kernel_ctx*, const nnp_view* b, const nnp_view* packed, int64_t* bytes) {
  if (!b || !bytes) return fail(NNP_INVALID_ARGUMENT, "gemm_pack: b and bytes are required");
  if (own_sgemm_kernel() != SgemmKernel::avx512 || b->dtype != NNP_F32 || b->ndim != 2 || b->shape[0] < 8 ||
      b->shape[1] < 32 || b->shape[0] > (int64_t{1} << 24) || b->shape[1] > (int64_t{1} << 24)) {
    *bytes = 0;
    return NNP_OK;
  }
  const int64_t k = b->shape[0], n = b->shape[1];
  const int64_t need = kPackedHeaderBytes + sgemm_avx512_packed_b_floats(k, n) * static_cast<int64_t>(sizeof(float));
  if (!packed) {
    *bytes = need;
    return NNP_OK;
  }
  if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->strides[0] != 1 || packed->shape[0] < need ||
      reinterpret_cast<uintptr_t>(packed->data) % 64 != 0)
    return fail(NNP_INVALID_ARGUMENT, "gemm_pack: packed must be a contiguous, 64-byte aligned u8 view of " +
                                          std::to_string(need) + " bytes (ask with packed NULL first)");
  auto* base = static_cast<char*>(packed->data);
  std::memset(base, 0, kPackedHeaderBytes);
  const PackedHeader h{kPackedMagic, 0, k, n};
  std::memcpy(base, &h, sizeof h);
  float* panels = reinterpret_cast<float*>(base + kPackedHeaderBytes);
  const auto* pb = static_cast<const float*>(b->data);
  if (b->strides[1] == 1 && b->strides[0] >= n) {
    sgemm_avx512_pack_b(false, k, n, pb, b->strides[0], panels);
  } else if (b->strides[0] == 1 && b->strides[1] >= k) {  // a weight [N, K] seen transposed
    sgemm_avx512_pack_b(true, k, n, pb, b->strides[1], panels);
  } else {
    std::vector<float>& sb = scratch(1);
    sb.resize(static_cast<size_t>(k * n));
    pack(pb, k, n, b->strides[0], b->strides[1], sb.data());
    sgemm_avx512_pack_b(false, k, n, sb.data(), n, panels);
  }
  *bytes = need;
  return NNP_OK;
}

nnp_status gemm_packed(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* packed, const nnp_view* bias,
                       int32_t activation, const nnp_view* out) {
  if (!a || !packed || !out) return fail(NNP_INVALID_ARGUMENT, "gemm_packed: a, packed and out are required");
  PackedHeader h{};
  if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->strides[0] != 1 ||
      packed->shape[0] < kPackedHeaderBytes || reinterpret_cast<uintptr_t>(packed->data) % 64 != 0)
    return fail(NNP_INVALID_ARGUMENT, "gemm_packed: packed is not a b gemm_pack wrote");
  std::memcpy(&h, packed->data, sizeof h);
  if (h.magic != kPackedMagic || h.k < 1 || h.n < 1 || h.k > (int64_t{1} << 24) || h.n > (int64_t{1} << 24) ||
      packed->shape[0] < kPackedHeaderBytes + sgemm_avx512_packed_b_floats(h.k, h.n) * int64_t{sizeof(float)} ||
      own_sgemm_kernel() != SgemmKernel::avx512)
    return fail(NNP_INVALID_ARGUMENT, "gemm_packed: packed is not a b gemm_pack wrote");
  if (a->dtype != NNP_F32 || out->dtype != NNP_F32 || a->ndim != 2 || out->ndim != 2 || a->shape[1] != h.k ||
      out->shape[1] != h.n || out->shape[0] != a->shape[0] || out->strides[1] != 1 || out->strides[0] != h.n)
    return fail(NNP_INVALID_ARGUMENT, "gemm_packed: a [M, " + std::to_string(h.k) + "] and a contiguous out [M, " +
                                          std::to_string(h.n) + "] (f32) go with this packed b");
  if (bias && (bias->dtype != NNP_F32 || bias->ndim != 1 || bias->shape[0] != h.n || bias->strides[0] != 1))
    return fail(NNP_INVALID_ARGUMENT, "gemm_packed: bias must be a contiguous f32 [" + std::to_string(h.n) + "]");
  const int64_t m = a->shape[0], n = h.n, k = h.k;
  const auto* pa = static_cast<const float*>(a->data);
  int64_t lda = a->strides[0];
  if (a->strides[1] != 1 || lda < k) {
    std::vector<float>& sa = scratch(0);
    sa.resize(static_cast<size_t>(m * k));
    pack(pa, m, k, a->strides[0], a->strides[1], sa.data());
    pa = sa.data();
    lda = k;
  }
  const float* panels = reinterpret_cast<const float*>(static_cast<const char*>(packed->data) + kPackedHeaderBytes);
  auto* pc = static_cast<float*>(out->data);
  SgemmEpilogue epilogue;
  epilogue.bias = bias ? static_cast<const float*>(bias->data) : nullptr;
  epilogue.relu = activation == NNP_ACTIVATION_RELU;
  // Split along the larger side, columns in whole panels, rows in whole
  // register blocks (a multiple of 6 rows, so every row is summed in the
  // same order however the product is split), in guided parts (GuidedParts:
  // a faster core takes more of them) of at least 2M multiply-adds past one
  // a thread; the packed b is shared, so no thread packs it.
  const int threads = ThreadPool::instance().size();
  const int64_t panel = sgemm_avx512_panel_columns();
  const bool by_columns = n >= m;
  const int64_t unit = by_columns ? panel : 48, extent = by_columns ? n : m;
  const int64_t units = (extent + unit - 1) / unit, unit_work = m * n * k / units + 1;
  const GuidedParts parts(units, m * n * k < kSplitWork ? 1 : threads, 4 * kSplitWork / unit_work + 1);
  auto run_part = [&](int64_t part) {
    const int64_t first = parts.begin(part) * unit, last = std::min(extent, parts.end(part) * unit);
    if (first >= last) return;
    if (by_columns)
      sgemm_avx512_packed(m, n, k, pa, lda, panels, first, last, pc, n, epilogue);
    else
      sgemm_avx512_packed(last - first, n, k, pa + first * lda, lda, panels, 0, n, pc + first * n, n, epilogue);
  };
  if (parts.count() == 1)
    run_part(0);
  else
    ThreadPool::instance().run(parts.count(), run_part);
  return NNP_OK;
}

}  // namespace nnp::cpu
