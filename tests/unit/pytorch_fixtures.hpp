// What the tests against PyTorch's numbers share (functional_test,
// indexing_test): inputs that are exact rationals, built as
// pytorch_fixtures.py builds them, the fixtures its generators write, and
// the check of a case's output, shape and gradient against one.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace nnp::test {

struct PyTorchFixture {
  const char* name;
  std::vector<double> out;
  std::vector<int64_t> shape;
  std::vector<double> grad;  // of sum(out * values(shape, 99)); empty: not checked
};

inline Tensor rational_values(const Shape& shape, int seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * 37 + seed * 11) % 19) / 4.0 - 2.3);
  return from_vector(v, shape);
}
inline Tensor rational_leaf(const Shape& shape, int seed) { return rational_values(shape, seed).requires_grad_(); }

// A case gives its input (a leaf, or undefined) and its output.
using PyTorchCase = std::function<std::pair<Tensor, Tensor>()>;

// Every fixture has its case and every case its fixture; outputs, shapes
// and gradients agree within a tolerance relative to the value (the
// default, or the case's own in `tolerances`).
template <size_t N>
void check_against_pytorch(const PyTorchFixture (&fixtures)[N], const std::map<std::string, PyTorchCase>& cases,
                           double default_tolerance, const std::map<std::string, double>& tolerances = {}) {
  double tolerance = default_tolerance;
  auto close = [&](const std::vector<double>& got, const std::vector<double>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], tolerance * (1 + std::fabs(want[i]))) << what << " element " << i;
  };
  size_t checked = 0;
  for (const PyTorchFixture& f : fixtures) {
    SCOPED_TRACE(f.name);
    auto own = tolerances.find(f.name);
    tolerance = own == tolerances.end() ? default_tolerance : own->second;
    auto it = cases.find(f.name);
    ASSERT_NE(it, cases.end()) << "no case for fixture " << f.name;
    const std::pair<Tensor, Tensor> result = it->second();
    const Tensor &x = result.first, &out = result.second;
    EXPECT_EQ(out.shape(), f.shape);
    close(out.to(Dtype::f64).to_vector<double>(), f.out, "output");
    if (!f.grad.empty()) {
      (out * rational_values(out.shape(), 99)).sum().backward();
      ASSERT_TRUE(x.grad().defined());
      close(x.grad().to_vector<double>(), f.grad, "gradient");
    }
    ++checked;
  }
  EXPECT_EQ(checked, cases.size()) << "a case has no fixture";
}

}  // namespace nnp::test
