// Indexing (nnp/indexing.hpp) against PyTorch: each op's output, its shape
// and the gradient of sum(out * w) with respect to its input, as PyTorch
// 1.13 gives them (indexing_fixtures.inc, from indexing_fixtures.py).
#include <cmath>
#include <functional>
#include <map>

#include "pytorch_fixtures.hpp"

using namespace nnp;
using namespace nnp::indexing;
using nnp::test::expect_error;

namespace {

const nnp::test::PyTorchFixture kFixtures[] = {
#include "indexing_fixtures.inc"
};

Tensor values(const Shape& shape, int seed) { return nnp::test::rational_values(shape, seed); }
Tensor leaf(const Shape& shape, int seed) { return nnp::test::rational_leaf(shape, seed); }
Tensor longs(const std::vector<int64_t>& v, const Shape& shape) { return from_vector(v, shape); }
Tensor ties() {
  return from_vector(std::vector<double>{3, 1, 3, -2, 1, 0.5, 0.5, -1, 2, 0.5}, {2, 5}).requires_grad_();
}

using Case = nnp::test::PyTorchCase;

std::map<std::string, Case> cases() {
  std::map<std::string, Case> c;
  auto with = [&](const char* name, Shape shape, int seed, std::function<Tensor(const Tensor&)> op) {
    c[name] = [=] {
      Tensor x = leaf(shape, seed);
      return std::pair{x, op(x)};
    };
  };
  with("select", {4, 5}, 1, [](const Tensor& x) { return x.select(1, -2); });
  with("narrow", {4, 5}, 1, [](const Tensor& x) { return x.narrow(0, 1, 2); });
  with("subscript", {4, 5}, 1, [](const Tensor& x) { return x[3]; });
  with("slice_none_int", {4, 5, 3}, 2, [](const Tensor& x) { return x.index({Slice(1, None, 2), None, -1}); });
  with("ellipsis_int", {4, 5, 3}, 2, [](const Tensor& x) { return x.index({"...", 1}); });
  with("slice_step_stop", {4, 5, 3}, 2, [](const Tensor& x) {
    return x.index({Slice(), Slice(1, 4, 2), Slice(None, 2)});
  });
  with("int_tensor", {4, 5}, 1, [](const Tensor& x) { return x.index({Slice(), longs({2, 0, -1, 2}, {4})}); });
  with("int_tensor_2d", {4, 5}, 1, [](const Tensor& x) { return x.index({longs({0, 3, 1, 1}, {2, 2})}); });
  with("mask_2d", {3, 4}, 3, [](const Tensor& x) { return x.index({values({3, 4}, 4).gt(x.scalar_like(0))}); });
  with("mask_1d_after_slice", {3, 4}, 3, [](const Tensor& x) {
    return x.index({Slice(), values({4}, 5).gt(x.scalar_like(0))});
  });
  with("true_index", {3, 4}, 3, [](const Tensor& x) { return x.index({true}); });
  with("false_index", {3, 4}, 3, [](const Tensor& x) { return x.index({false}); });
  with("masked_fill", {3, 4}, 3, [](const Tensor& x) {
    return x.masked_fill(values({3, 4}, 6).gt(x.scalar_like(0.5)), -7.5);
  });
  with("masked_select_broadcast", {4, 5}, 1, [](const Tensor& x) {
    return x.masked_select(values({1, 5}, 7).gt(x.scalar_like(0)));
  });
  with("nonzero", {3, 4}, 8, [](const Tensor& x) {
    return (x * values({3, 4}, 9).gt(x.scalar_like(0)).to(Dtype::f64)).nonzero().to(Dtype::f64);
  });
  c["sort_desc_values"] = [] {
    Tensor t = ties();
    return std::pair{t, std::get<0>(t.sort(1, true))};
  };
  c["sort_desc_indices"] = [] { return std::pair{Tensor(), ties().argsort(1, true).to(Dtype::f64)}; };
  c["sort_dim0_values"] = [] {
    Tensor t = ties();
    return std::pair{t, std::get<0>(t.sort(0))};
  };
  c["sort_dim0_indices"] = [] { return std::pair{Tensor(), std::get<1>(ties().sort(0)).to(Dtype::f64)}; };
  with("topk_values", {4, 5}, 10, [](const Tensor& x) { return std::get<0>(x.topk(2, 0)); });
  c["topk_indices"] = [] { return std::pair{Tensor(), std::get<1>(values({4, 5}, 10).topk(2, 0)).to(Dtype::f64)}; };
  with("topk_smallest_values", {4, 5}, 10, [](const Tensor& x) { return std::get<0>(x.topk(3, 1, false)); });
  c["topk_smallest_indices"] = [] {
    return std::pair{Tensor(), std::get<1>(values({4, 5}, 10).topk(3, 1, false)).to(Dtype::f64)};
  };
  with("cumsum", {3, 7}, 11, [](const Tensor& x) { return x.cumsum(1); });
  with("cumsum_dim0", {5, 2}, 11, [](const Tensor& x) { return x.cumsum(0); });
  c["cumsum_int"] = [] {
    Tensor s = from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}).cumsum(1);
    EXPECT_EQ(s.dtype(), Dtype::i64);
    return std::pair{Tensor(), s.to(Dtype::f64)};
  };
  c["index_put_slice"] = [] {
    Tensor y = values({4, 5}, 12);
    y.index_put_({Slice(1, 3), Slice(None, None, 2)}, 9.0);
    return std::pair{Tensor(), y};
  };
  c["index_put_tensor"] = [] {
    Tensor y = values({4, 5}, 12);
    y.index_put_({Slice(), longs({4, 0}, {2})}, values({4, 2}, 13));
    return std::pair{Tensor(), y};
  };
  c["index_put_mask"] = [] {
    Tensor y = values({4, 5}, 12);
    y.index_put_({values({4, 5}, 14).gt(y.scalar_like(0))}, -1.0);
    return std::pair{Tensor(), y};
  };
  return c;
}

}  // namespace

TEST(Indexing, MatchesPyTorchValuesShapesAndGradients) { nnp::test::check_against_pytorch(kFixtures, cases(), 1e-12); }

TEST(Indexing, RefusesWhatPyTorchRefuses) {
  Tensor x = values({3, 4}, 1);
  expect_error([&] { x.select(0, 3); }, NNP_INVALID_ARGUMENT, {"select(): index 3 out of range", "[3, 4]"});
  expect_error([&] { x.select(2, 0); }, NNP_INVALID_ARGUMENT, {"dimension out of range"});
  expect_error([&] { x.narrow(1, 3, 2); }, NNP_INVALID_ARGUMENT, {"exceeds dimension size (4)"});
  expect_error([&] { x.index({0, 0, 0}); }, NNP_INVALID_ARGUMENT, {"too many indices for tensor of dimension 2"});
  expect_error([&] { x.index({"...", "..."}); }, NNP_INVALID_ARGUMENT, {"single ellipsis"});
  expect_error([&] { x.index({Slice(None, None, -1)}); }, NNP_INVALID_ARGUMENT, {"step must be positive"});
  expect_error([&] { x.index({values({2}, 1)}); }, NNP_DTYPE_MISMATCH, {"long, int or bool"});
  expect_error([&] { x.index({x.gt(x.scalar_like(0)).slice(1, 0, 3)}); }, NNP_SHAPE_MISMATCH, {"shape of the mask"});
  expect_error([&] { x.index({longs({0}, {1}), longs({1}, {1})}); }, NNP_UNIMPLEMENTED, {"one tensor at a time"});
  expect_error([&] { x.masked_fill(x, 1.0); }, NNP_DTYPE_MISMATCH, {"boolean masks"});
  expect_error([&] { x.topk(5, 1); }, NNP_INVALID_ARGUMENT, {"k (5) out of range"});
  expect_error([&] { x.index({longs({7}, {1})}); }, NNP_INVALID_ARGUMENT, {});
}

TEST(Indexing, SortPutsNaNLastAndKeepsTheDevice) {
  Tensor t = from_vector(std::vector<float>{2, NAN, -1, 5});
  auto [sorted, order] = t.sort();
  std::vector<float> v = sorted.to_vector<float>();
  EXPECT_EQ(v[0], -1);
  EXPECT_EQ(v[2], 5);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(order.to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 3, 1}));
  EXPECT_EQ(order.dtype(), Dtype::i64);
  Tensor r = t.to(Device("reference"));
  EXPECT_EQ(r.argsort().device(), r.device());
  EXPECT_EQ(r.cumsum(0).device(), r.device());
  // A big row: cumsum in log-steps stays exact for integers.
  Tensor big = ones({100000}, Dtype::i64).cumsum(0);
  EXPECT_EQ(big.to_vector<int64_t>().back(), 100000);
}
