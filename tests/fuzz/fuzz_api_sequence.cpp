// libFuzzer target: random sequences of C API calls, each made twice, on the
// cpu backend and on the reference backend (the oracle). Both must refuse the
// same calls with the same status and a message, and agree on every result's
// shape, dtype and values. After each call the cpu copy is reset to the
// reference result, so a difference is the last call's, never drift.
#include <nnp/nnp.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);

nnp_device device(const char* name) {
  nnp_device d;
  if (api->device_parse(name, &d) != NNP_OK) __builtin_trap();
  return d;
}
const nnp_device kCpu = device("cpu"), kRef = device("reference");

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  int32_t small(int32_t n) { return static_cast<int32_t>(next() % n); }
  int64_t signed_small() { return static_cast<int8_t>(next()) % 7; }  // -6..6: in and out of range

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

// One tensor as the cpu and reference backends each hold it.
struct Pair {
  nnp_tensor* cpu = nullptr;
  nnp_tensor* ref = nullptr;
};

std::vector<double> values(const nnp_tensor* t) {
  nnp_tensor* host = nullptr;
  if (api->to(t, kCpu, NNP_F64, &host) != NNP_OK) __builtin_trap();
  std::vector<double> out(static_cast<size_t>(api->tensor_numel(host)));
  if (api->copy_to_host(host, out.data(), out.size() * sizeof(double)) != NNP_OK) __builtin_trap();
  api->tensor_release(host);
  return out;
}

double tolerance(nnp_dtype dtype) {
  switch (dtype) {
    case NNP_F16: return 4e-3;
    case NNP_BF16: return 3e-2;
    case NNP_F32: return 1e-4;
    default: return 1e-9;
  }
}

// The largest finite value of a floating dtype (f64's for the rest).
double largest(nnp_dtype dtype) {
  switch (dtype) {
    case NNP_F32: return 3.4028234663852886e38;
    case NNP_F16: return 65504;
    case NNP_BF16: return 3.3895313892515355e38;
    default: return 1.7976931348623157e308;
  }
}

// The two results of one call must agree; the cpu one then becomes a copy of
// the reference one. `accumulates`: a sum of products (matmul), whose f32
// terms may overflow where the reference accumulates in f64 (a term of
// 1e57 is +inf in f32 and finite in f64, so inf + -inf gives NaN on one side
// and -inf on the other): two non-finite answers agree there.
void compare(Pair& p, const char* call, bool accumulates) {
  const int32_t ndim = api->tensor_ndim(p.ref);
  bool same = ndim == api->tensor_ndim(p.cpu) && api->tensor_dtype(p.ref) == api->tensor_dtype(p.cpu);
  for (int32_t i = 0; same && i < ndim; ++i) same = api->tensor_shape(p.ref)[i] == api->tensor_shape(p.cpu)[i];
  if (!same) {
    std::fprintf(stderr, "%s: cpu and reference results differ in shape or dtype\n", call);
    __builtin_trap();
  }
  std::vector<double> c = values(p.cpu), r = values(p.ref);
  double scale = 1;
  for (double v : r)
    if (std::isfinite(v)) scale = std::fmax(scale, std::fabs(v));
  const double tol = tolerance(api->tensor_dtype(p.ref));
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::isnan(r[i]) && std::isnan(c[i])) continue;
    if (accumulates && !std::isfinite(r[i]) && !std::isfinite(c[i])) continue;
    // A sum near the dtype's overflow threshold: the f32 (or narrower)
    // partial sums may pass it where the f64 ones do not, so one side is
    // infinite and the other finite (f32: inf against 3.3e38).
    if (accumulates && std::isfinite(r[i]) != std::isfinite(c[i]) &&
        std::fabs(std::isfinite(r[i]) ? r[i] : c[i]) > 1e-3 * largest(api->tensor_dtype(p.ref)))
      continue;
    if (r[i] == c[i]) continue;  // infinities included
    if (std::fabs(r[i] - c[i]) <= tol * (std::fabs(r[i]) + 1e-2 * scale) + 1e-300) continue;
    std::fprintf(stderr, "%s: element %zu: cpu %.17g, reference %.17g\n", call, i, c[i], r[i]);
    __builtin_trap();
  }
  nnp_tensor* synced = nullptr;
  if (api->to(p.ref, kCpu, api->tensor_dtype(p.ref), &synced) != NNP_OK) __builtin_trap();
  api->tensor_release(p.cpu);
  p.cpu = synced;
}

// Runs `call` on both backends' operands. Refusals must match; results are
// compared and returned, or an empty pair.
template <typename Call>
Pair both(const char* name, Call&& call, bool accumulates = false) {
  Pair out;
  nnp_status c = call(true, &out.cpu);
  nnp_status r = call(false, &out.ref);
  if (c != r) {
    std::fprintf(stderr, "%s: cpu says %s, reference says %s (%s)\n", name, api->status_name(c), api->status_name(r),
                 api->last_error());
    __builtin_trap();
  }
  if (c != NNP_OK) {
    if (api->last_error()[0] == '\0') __builtin_trap();  // a refusal says why
    api->tensor_release(out.cpu);
    api->tensor_release(out.ref);
    return Pair();
  }
  compare(out, name, accumulates);
  return out;
}

void release(Pair& p) {
  api->tensor_release(p.cpu);
  api->tensor_release(p.ref);
  p = Pair();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  std::vector<Pair> pool(6);
  auto pick = [&]() -> Pair& { return pool[static_cast<size_t>(in.small(6))]; };
  auto of = [](const Pair& p, bool cpu) { return cpu ? p.cpu : p.ref; };
  for (int step = 0; step < 32 && !in.empty(); ++step) {
    Pair result;
    const int32_t op = in.small(17);
    Pair& a = pick();
    Pair& b = pick();
    if (op != 0 && (!a.cpu || !b.cpu)) continue;
    switch (op) {
      case 0: {  // a new tensor: random normal, arange or a constant
        int64_t shape[3];
        const int32_t ndim = in.small(4);
        int64_t numel = 1;
        for (int32_t i = 0; i < ndim; ++i) numel *= (shape[i] = in.small(5));
        const nnp_dtype dtype = in.small(4) == 0 ? NNP_F64 : NNP_F32;
        const int32_t kind = in.small(3);
        const uint64_t seed = in.next();
        const double value = static_cast<int8_t>(in.next()) / 8.0;
        result = both("create", [&](bool cpu, nnp_tensor** out) {
          const nnp_device d = cpu ? kCpu : kRef;
          if (kind == 0) {
            api->manual_seed(seed);
            return api->random(NNP_RANDOM_NORMAL, 0, 2, shape, ndim, dtype, d, out);
          }
          if (kind == 1) {
            nnp_tensor* line = nullptr;
            nnp_status s = api->arange(-value, -value + static_cast<double>(numel), 1, dtype, d, &line);
            if (s == NNP_OK) s = api->reshape(line, shape, ndim, out);
            api->tensor_release(line);
            return s;
          }
          return api->full(shape, ndim, value, dtype, d, out);
        });
        break;
      }
      case 1: {
        const auto u = static_cast<nnp_unary_op>(in.small(NNP_UNARY_COUNT));
        result = both("unary", [&](bool cpu, nnp_tensor** out) { return api->unary(u, of(a, cpu), out); });
        break;
      }
      case 2: {
        const auto bop = static_cast<nnp_binary_op>(in.small(NNP_BINARY_COUNT));
        result =
            both("binary", [&](bool cpu, nnp_tensor** out) { return api->binary(bop, of(a, cpu), of(b, cpu), out); });
        break;
      }
      case 3: {
        const auto rop = static_cast<nnp_reduce_op>(in.small(NNP_REDUCE_COUNT));
        int32_t dims[2] = {static_cast<int32_t>(in.signed_small()), static_cast<int32_t>(in.signed_small())};
        const int32_t ndims = in.small(3), keepdim = in.small(2);
        const double correction = in.small(2);
        result = both("reduce", [&](bool cpu, nnp_tensor** out) {
          return api->reduce(rop, of(a, cpu), dims, ndims, keepdim, correction, out);
        });
        break;
      }
      case 4:
        result = both(
            "matmul", [&](bool cpu, nnp_tensor** out) { return api->matmul(of(a, cpu), of(b, cpu), out); }, true);
        break;
      case 5: {
        const int32_t dim = static_cast<int32_t>(in.signed_small()), log = in.small(2);
        result = both("softmax", [&](bool cpu, nnp_tensor** out) { return api->softmax(of(a, cpu), dim, log, out); });
        break;
      }
      case 6: {
        const int32_t d0 = static_cast<int32_t>(in.signed_small()), d1 = static_cast<int32_t>(in.signed_small());
        result = both("transpose", [&](bool cpu, nnp_tensor** out) { return api->transpose(of(a, cpu), d0, d1, out); });
        break;
      }
      case 7: {
        const int32_t dim = static_cast<int32_t>(in.signed_small());
        const int64_t start = in.signed_small(), end = in.signed_small(), step_by = in.signed_small();
        result = both(
            "slice", [&](bool cpu, nnp_tensor** out) { return api->slice(of(a, cpu), dim, start, end, step_by, out); });
        break;
      }
      case 8:
      case 9: {  // reshape or expand to a fuzzed shape
        int64_t shape[3];
        const int32_t ndim = in.small(4);
        for (int32_t i = 0; i < ndim; ++i) shape[i] = in.signed_small();
        result = both(op == 8 ? "reshape" : "expand", [&](bool cpu, nnp_tensor** out) {
          return op == 8 ? api->reshape(of(a, cpu), shape, ndim, out) : api->expand(of(a, cpu), shape, ndim, out);
        });
        break;
      }
      case 10: {
        int32_t dims[3] = {in.small(4), in.small(4), in.small(4)};
        const int32_t ndim = in.small(4);
        result = both("permute", [&](bool cpu, nnp_tensor** out) { return api->permute(of(a, cpu), dims, ndim, out); });
        break;
      }
      case 11: {
        const int32_t dim = static_cast<int32_t>(in.signed_small()), which = in.small(3);
        result = both("squeeze", [&](bool cpu, nnp_tensor** out) {
          if (which == 2) return api->unsqueeze(of(a, cpu), dim, out);
          return api->squeeze(of(a, cpu), dim, which, out);
        });
        break;
      }
      case 12: {
        const auto dtype = static_cast<nnp_dtype>(in.small(NNP_DTYPE_COUNT + 1));  // one past the last: refused
        result =
            both("to", [&](bool cpu, nnp_tensor** out) { return api->to(of(a, cpu), cpu ? kCpu : kRef, dtype, out); });
        break;
      }
      case 13: {
        Pair& c = pick();
        if (!c.cpu) break;
        result = both("where", [&](bool cpu, nnp_tensor** out) {
          nnp_tensor *zero = nullptr, *cond = nullptr;
          nnp_status s = api->full(nullptr, 0, 0, api->tensor_dtype(of(c, cpu)), cpu ? kCpu : kRef, &zero);
          if (s == NNP_OK) s = api->binary(NNP_BINARY_GT, of(c, cpu), zero, &cond);
          if (s == NNP_OK) s = api->where(cond, of(a, cpu), of(b, cpu), out);
          api->tensor_release(zero);
          api->tensor_release(cond);
          return s;
        });
        break;
      }
      case 14:
      case 15: {  // index_select / gather with fuzzed (possibly bad) indices
        const int32_t dim = static_cast<int32_t>(in.signed_small());
        int64_t index[4];
        for (int64_t& i : index) i = in.signed_small();
        const int64_t count = in.small(5);
        result = both(op == 14 ? "index_select" : "gather", [&](bool cpu, nnp_tensor** out) {
          nnp_tensor* idx = nullptr;
          nnp_status s = api->from_host(index, &count, 1, NNP_I64, cpu ? kCpu : kRef, &idx);
          if (s == NNP_OK)
            s = op == 14 ? api->index_select(of(a, cpu), dim, idx, out) : api->gather(of(a, cpu), dim, idx, out);
          api->tensor_release(idx);
          return s;
        });
        break;
      }
      default: {
        const int32_t dim = static_cast<int32_t>(in.signed_small());
        result = both("cat", [&](bool cpu, nnp_tensor** out) {
          const nnp_tensor* parts[2] = {of(a, cpu), of(b, cpu)};
          return api->cat(parts, 2, dim, out);
        });
        break;
      }
    }
    if (result.cpu) {
      Pair& slot = pool[static_cast<size_t>(step % 6)];
      release(slot);
      slot = result;
    }
  }
  for (Pair& p : pool) release(p);
  return 0;
}
