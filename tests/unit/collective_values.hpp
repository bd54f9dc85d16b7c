// Values the collective tests send and check: small integers, exact in every
// dtype (0/1 for bool), different on every rank, so a result names the ranks
// it came from.
#pragma once

#include <nnp/tensor.hpp>
#include <vector>

namespace nnp::test {

inline const Dtype kAllDtypes[] = {Dtype::f32, Dtype::f64, Dtype::f16, Dtype::bf16,   Dtype::i64,
                                   Dtype::i32, Dtype::i8,  Dtype::u8,  Dtype::boolean};

inline bool floating(Dtype d) { return d == Dtype::f32 || d == Dtype::f64 || d == Dtype::f16 || d == Dtype::bf16; }

// Rank r's values: small integers (exact in every dtype), 0/1 for bool.
inline std::vector<double> contribution(int rank, int64_t n, Dtype d) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] =
        d == Dtype::boolean ? ((i + rank) % 3 == 0) : static_cast<double>((i * 7 + rank * 5) % 11);
  return v;
}

inline Tensor tensor_of(const std::vector<double>& v, Dtype d, const Device& device = Device::cpu()) {
  return from_vector(v, {static_cast<int64_t>(v.size())}).to(d).to(device);
}
inline std::vector<double> values(const Tensor& t) { return t.to(Device::cpu()).to(Dtype::f64).to_vector<double>(); }

}  // namespace nnp::test
