// Issue 14, class 7: sizes from outside that overflow. Every shape, stride
// and element count reachable from an API argument is checked: each row is
// refused with its status and a message, or (marked) gives PyTorch's answer;
// none is undefined behaviour (this file runs under UBSan in the asan
// preset).
#include <climits>
#include <cmath>
#include <functional>

#include "test_support.hpp"

using namespace nnp;

namespace {

constexpr int64_t kBig = int64_t{1} << 62, kMax = INT64_MAX, kMin = INT64_MIN;

struct ShapeCase {
  const char* label;
  std::function<void()> call;
  nnp_status status;
  const char* fragment;
};

}  // namespace

TEST(HostileShapes, SizesThatOverflowAreRefused) {
  const Tensor four = arange(0, 4), none = empty({0}), one = ones({1});
  const std::vector<ShapeCase> cases = {
      {"empty [2^62, 4]",
       [] {
         empty({kBig, 4});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"zeros [2^32, 2^32]",
       [] {
         zeros({int64_t{1} << 32, int64_t{1} << 32});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"ones [INT64_MAX, 2]",
       [] {
         ones({kMax, 2});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"full [3, INT64_MAX, 3]",
       [] {
         full({3, kMax, 3}, 1.0);
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"rand [0, 2^62, 2^62]",
       [] {
         rand({0, kBig, kBig});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"randn [2^31]x4",
       [] {
         randn({int64_t{1} << 31, int64_t{1} << 31, 4});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"randint [2^62, 8]",
       [] {
         randint(0, 3, {kBig, 8});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"empty [-1]", [] { empty({-1}); }, NNP_INVALID_ARGUMENT, "negative size"},
      {"empty [INT64_MIN]", [] { empty({kMin}); }, NNP_INVALID_ARGUMENT, "negative size"},
      {"empty of 9 dimensions",
       [] {
         empty({1, 1, 1, 1, 1, 1, 1, 1, 1});
       },
       NNP_INVALID_ARGUMENT, "9 dimensions requested"},
      {"empty [INT64_MAX] (fits the count, not memory)", [] { empty({kMax}); }, NNP_OUT_OF_MEMORY, ""},
      {"reshape 4 to [2^62, 2^62]",
       [&] {
         four.reshape({kBig, kBig});
       },
       NNP_SHAPE_MISMATCH, "too large"},
      {"reshape 4 to [INT64_MAX, INT64_MAX, 0]",
       [&] {
         four.reshape({kMax, kMax, 0});
       },
       NNP_SHAPE_MISMATCH, "too large"},
      {"reshape 0 to [0, 2^62, 2^62]",
       [&] {
         none.reshape({0, kBig, kBig});
       },
       NNP_SHAPE_MISMATCH, "too large"},
      {"reshape 0 to [2^62, 2^62, 0]",
       [&] {
         none.reshape({kBig, kBig, 0});
       },
       NNP_SHAPE_MISMATCH, "too large"},
      {"reshape 0 to [-1, 0]",
       [&] {
         none.reshape({-1, 0});
       },
       NNP_SHAPE_MISMATCH, "is invalid"},
      {"reshape 4 to [-1, 2^62, 2^62]",
       [&] {
         four.reshape({-1, kBig, kBig});
       },
       NNP_SHAPE_MISMATCH, "too large"},
      {"reshape 4 to [-1, 2^62]",
       [&] {
         four.reshape({-1, kBig});
       },
       NNP_SHAPE_MISMATCH, "is invalid"},
      {"reshape 4 to [-2]", [&] { four.reshape({-2}); }, NNP_INVALID_ARGUMENT, "invalid size"},
      {"reshape 4 to [INT64_MIN]", [&] { four.reshape({kMin}); }, NNP_INVALID_ARGUMENT, "invalid size"},
      {"view 4 as [2^62, 2^62]",
       [&] {
         four.view({kBig, kBig});
       },
       NNP_SHAPE_MISMATCH, "too large"},
      {"view 4 as [INT64_MAX, -1]",
       [&] {
         four.view({kMax, -1});
       },
       NNP_SHAPE_MISMATCH, "is invalid"},
      {"expand [1] to [2^62, 2^62]",
       [&] {
         one.expand({kBig, kBig});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"expand [1] to [INT64_MAX, 2]",
       [&] {
         one.expand({kMax, 2});
       },
       NNP_INVALID_ARGUMENT, "too large"},
      {"expand [1] to [INT64_MIN]", [&] { one.expand({kMin}); }, NNP_INVALID_ARGUMENT, "invalid size"},
      {"expand [1] to [-1, 3] (new leading -1)",
       [&] {
         one.expand({-1, 3});
       },
       NNP_INVALID_ARGUMENT, "not allowed in a leading"},
      {"slice step 0", [&] { four.slice(0, 0, 4, 0); }, NNP_INVALID_ARGUMENT, "step must be positive"},
      {"slice step INT64_MIN", [&] { four.slice(0, 0, 4, kMin); }, NNP_INVALID_ARGUMENT, "step must be positive"},
      {"slice dim INT32_MAX", [&] { four.slice(INT32_MAX, 0, 4); }, NNP_INVALID_ARGUMENT, "out of range"},
      {"transpose dim INT32_MIN", [&] { four.transpose(INT32_MIN, 0); }, NNP_INVALID_ARGUMENT, "out of range"},
      {"unsqueeze dim INT32_MAX", [&] { four.unsqueeze(INT32_MAX); }, NNP_INVALID_ARGUMENT, "out of range"},
      {"sum over dim INT32_MIN", [&] { four.sum({INT32_MIN}); }, NNP_INVALID_ARGUMENT, "out of range"},
      {"index_select index INT64_MAX", [&] { four.index_select(0, from_vector<int64_t>({kMax})); },
       NNP_INVALID_ARGUMENT, "out of range"},
      {"index_select index INT64_MIN", [&] { four.index_select(0, from_vector<int64_t>({kMin})); },
       NNP_INVALID_ARGUMENT, "out of range"},
      {"arange of 4.6e18 steps", [] { arange(0, 4.6e18); }, NNP_OUT_OF_MEMORY, "too many"},
      {"arange to 1e300", [] { arange(0, 1e300); }, NNP_OUT_OF_MEMORY, "too many"},
      {"arange to infinity", [] { arange(0, INFINITY); }, NNP_INVALID_ARGUMENT, ""},
      {"arange to NaN", [] { arange(0, NAN); }, NNP_INVALID_ARGUMENT, ""},
      {"arange step 0", [] { arange(0, 4, 0); }, NNP_INVALID_ARGUMENT, ""},
      {"arange step NaN", [] { arange(0, 4, NAN); }, NNP_INVALID_ARGUMENT, ""},
  };
  for (const ShapeCase& c : cases) {
    SCOPED_TRACE(c.label);
    if (*c.fragment)
      test::expect_error(c.call, c.status, {c.fragment});
    else
      test::expect_error(c.call, c.status, {});
  }
  std::cout << "class 7, API sizes: " << cases.size() << " cases\n";
}

// slice with steps and bounds at the ends of int64 gives PyTorch's answers
// (torch.arange(10)[3:10:2**62] is tensor([3])).
TEST(HostileShapes, SliceAtTheEndsOfInt64GivesPyTorchsAnswer) {
  const Tensor ten = arange(0, 10, 1, Dtype::i64);
  EXPECT_EQ(ten.slice(0, 0, 10, kMax).to_vector<int64_t>(), std::vector<int64_t>({0}));
  EXPECT_EQ(ten.slice(0, 3, 10, kBig).to_vector<int64_t>(), std::vector<int64_t>({3}));
  EXPECT_EQ(ten.slice(0, kMin, kMax).to_vector<int64_t>().size(), 10u);
  EXPECT_EQ(ten.slice(0, kMax, kMax).numel(), 0);
  EXPECT_EQ(ten.slice(0, kMin, kMin).numel(), 0);
  EXPECT_EQ(ten.slice(0, -3, kMax, 2).to_vector<int64_t>(), std::vector<int64_t>({7, 9}));
  EXPECT_EQ(ten.slice(0, 9, 10, kMax).to_vector<int64_t>(), std::vector<int64_t>({9}));
  EXPECT_EQ(ten.reshape({2, 5}).slice(1, 1, kMax, kMax).contiguous().to_vector<int64_t>(),
            std::vector<int64_t>({1, 6}));
}
