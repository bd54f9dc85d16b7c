// Zero-copy views: shapes, strides, shared storage, and when they refuse.
#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

class Views : public ::testing::TestWithParam<const char*> {
 protected:
  Device device{GetParam()};
  // [[0,1,2,3],[4,5,6,7],[8,9,10,11]]
  Tensor grid() { return arange(0, 12, 1, Dtype::f32, device).view({3, 4}); }
};

TEST_P(Views, ViewAndReshape) {
  Tensor x = arange(0, 24, 1, Dtype::f32, device).view({2, 3, 4});
  Tensor v = x.view({6, -1});
  EXPECT_EQ(v.shape(), (Shape{6, 4}));
  EXPECT_EQ(v.to_vector<float>(), x.to_vector<float>());
  expect_error([&] { x.view({5, -1}); }, NNP_SHAPE_MISMATCH, {"[5,-1]", "[2,3,4]"});
  expect_error([&] { x.view({-1, -1}); }, NNP_INVALID_ARGUMENT, {"only one dimension can be -1"});
  Tensor t = grid().t();  // [4,3], strides [1,4]
  expect_error([&] { t.view({12}); }, NNP_INVALID_ARGUMENT, {"use reshape"});
  Tensor flat = t.reshape({12});
  EXPECT_EQ(flat.to_vector<float>(), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // A view that splits a contiguous run is fine even on a transposed tensor.
  EXPECT_EQ(t.view({2, 2, 3}).strides(), (Shape{2, 1, 4}));
}

TEST_P(Views, TransposePermuteStrides) {
  Tensor x = grid();
  Tensor t = x.t();
  EXPECT_EQ(t.shape(), (Shape{4, 3}));
  EXPECT_EQ(t.strides(), (Shape{1, 4}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  Tensor p = arange(0, 24, 1, Dtype::f32, device).view({2, 3, 4}).permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  expect_error([&] { x.permute({0, 0}); }, NNP_INVALID_ARGUMENT, {"more than once"});
  expect_error([&] { x.transpose(0, 2); }, NNP_INVALID_ARGUMENT, {"dimension 2 is out of range"});
}

TEST_P(Views, SliceExpandSqueeze) {
  Tensor x = grid();
  Tensor s = x.slice(1, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(x.slice(0, -1, 100).to_vector<float>(), (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(x.slice(0, 2, 1).numel(), 0);
  expect_error([&] { x.slice(0, 0, 2, 0); }, NNP_INVALID_ARGUMENT, {"step must be positive"});

  Tensor column = x.slice(1, 0, 1);  // [3,1]
  Tensor e = column.expand({2, 3, 4});
  EXPECT_EQ(e.strides(), (Shape{0, 4, 0}));
  EXPECT_EQ(e.sum().item<float>(), 2 * 4 * (0 + 4 + 8));
  EXPECT_EQ(column.expand({-1, 5}).shape(), (Shape{3, 5}));
  expect_error([&] { x.expand({3, 5}); }, NNP_SHAPE_MISMATCH, {"expanded size 5", "existing size 4"});

  Tensor u = x.unsqueeze(1).unsqueeze(-1);
  EXPECT_EQ(u.shape(), (Shape{3, 1, 4, 1}));
  EXPECT_EQ(u.squeeze().shape(), (Shape{3, 4}));
  EXPECT_EQ(u.squeeze(1).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(u.squeeze(0).shape(), (Shape{3, 1, 4, 1}));  // size 3: left alone, as PyTorch
}

TEST_P(Views, ViewsShareStorage) {
  Tensor x = zeros({3, 4}, Dtype::f32, device);
  Tensor row = x.slice(0, 1, 2);
  row.copy_(full({}, 5, Dtype::f32, device));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 5, 5, 5, 5, 0, 0, 0, 0}));
  Tensor col = x.t().slice(0, 3, 4);  // the last column, through a transpose
  col.copy_(from_vector(std::vector<float>{7, 8, 9}, device));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0, 0, 7, 5, 5, 5, 8, 0, 0, 0, 9}));
  // Copying a tensor into its own transpose goes through a temporary.
  Tensor square = arange(0, 4, 1, Dtype::f32, device).view({2, 2}).clone();
  square.copy_(square.t());
  EXPECT_EQ(square.to_vector<float>(), (std::vector<float>{0, 2, 1, 3}));
}

TEST_P(Views, ContiguousAndClone) {
  Tensor t = grid().t();
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (Shape{3, 1}));
  EXPECT_EQ(c.to_vector<float>(), t.to_vector<float>());
  Tensor already = grid();
  EXPECT_EQ(already.contiguous().get(), already.get());
  Tensor copy = already.clone();
  copy.copy_(zeros({}, Dtype::f32, device));
  EXPECT_EQ(already.sum().item<float>(), 66.0f);  // the clone is independent
}

INSTANTIATE_TEST_SUITE_P(Devices, Views, ::testing::Values("cpu", "reference"));
