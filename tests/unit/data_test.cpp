// nnp::data (datasets, random_split, DataLoader, read_csv) and
// nnp::Generator / randperm, against hand values.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <numeric>
#include <set>

#include "test_support.hpp"

using namespace nnp;
using namespace nnp::data;
using nnp::test::expect_error;

namespace {

// Rows 0..n-1: data [n, 2] = (i, 10 i), target i.
std::shared_ptr<TensorDataset> numbered(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    x.push_back(static_cast<float>(i));
    x.push_back(static_cast<float>(10 * i));
    y.push_back(i);
  }
  return std::make_shared<TensorDataset>(from_vector(x, {n, 2}), from_vector(y));
}

std::vector<int64_t> targets_of(DataLoader& loader) {
  std::vector<int64_t> out;
  for (Example& batch : loader) {
    std::vector<int64_t> t = batch.target.to_vector<int64_t>();
    std::vector<float> d = batch.data.to_vector<float>();
    for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(d[2 * i + 1], 10.0f * static_cast<float>(t[i]));  // rows stay whole
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

bool is_permutation_of_range(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// A dataset whose get() fails at one index, to see errors come through.
struct Failing : Dataset {
  Example get(int64_t index) const override {
    if (index == 5) throw Error(NNP_INVALID_ARGUMENT, "example 5 is broken");
    return {full({1}, static_cast<double>(index)), Tensor()};
  }
  int64_t size() const override { return 8; }
};

}  // namespace

TEST(Data, TensorDatasetGivesRowsAndBatches) {
  auto ds = numbered(5);
  EXPECT_EQ(ds->size(), 5);
  Example e = ds->get(3);
  EXPECT_EQ(e.data.shape(), (Shape{2}));
  EXPECT_EQ(e.data.to_vector<float>(), (std::vector<float>{3, 30}));
  EXPECT_EQ(e.target.item<int64_t>(), 3);
  Example b = ds->get_batch({4, 0});
  EXPECT_EQ(b.data.to_vector<float>(), (std::vector<float>{4, 40, 0, 0}));
  EXPECT_EQ(b.target.to_vector<int64_t>(), (std::vector<int64_t>{4, 0}));
  expect_error([&] { ds->get(5); }, NNP_INVALID_ARGUMENT, {"index 5 is out of range", "5 examples"});
  expect_error([] { TensorDataset(zeros({3, 2}), zeros({4})); }, NNP_SHAPE_MISMATCH, {"3 data rows but 4 target rows"});
  // The default get_batch stacks examples.
  Failing failing;
  EXPECT_EQ(failing.get_batch({1, 2}).data.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(stack({ones({2}), zeros({2})}, 1).to_vector<float>(), (std::vector<float>{1, 0, 1, 0}));
}

TEST(Data, SubsetAndRandomSplit) {
  auto ds = numbered(10);
  Subset odd(ds, {1, 3, 5});
  EXPECT_EQ(odd.get(2).target.item<int64_t>(), 5);
  EXPECT_EQ(odd.get_batch({2, 0}).target.to_vector<int64_t>(), (std::vector<int64_t>{5, 1}));
  expect_error([&] { Subset(ds, {10}); }, NNP_INVALID_ARGUMENT, {"index 10"});

  Generator g(42);
  auto parts = random_split(ds, {7, 3}, g);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->size(), 7);
  EXPECT_EQ(parts[1]->size(), 3);
  std::vector<int64_t> all = parts[0]->indices();
  all.insert(all.end(), parts[1]->indices().begin(), parts[1]->indices().end());
  EXPECT_TRUE(is_permutation_of_range(all));
  Generator same(42);
  EXPECT_EQ(random_split(ds, {7, 3}, same)[1]->indices(), parts[1]->indices());  // the generator fixes it

  // Fractions: floor of each, the remainder one by one to the first (PyTorch's rule).
  auto thirds = random_split(numbered(5), {0.5, 0.5}, g);
  EXPECT_EQ(thirds[0]->size(), 3);
  EXPECT_EQ(thirds[1]->size(), 2);
  expect_error(
      [&] {
        random_split(ds, {4, 4}, g);
      },
      NNP_INVALID_ARGUMENT, {"sum of input lengths (8.0) does not equal the length of the input dataset (10)"});
  expect_error([&] { random_split(ds, {2.5, 7.5}, g); }, NNP_INVALID_ARGUMENT, {"whole sizes"});
  expect_error([&] { random_split(ds, {1e30, -1e30}, g); }, NNP_INVALID_ARGUMENT, {"non-negative"});
  expect_error([&] { random_split(ds, {1e30, 10}, g); }, NNP_INVALID_ARGUMENT, {"does not equal"});
}

TEST(Data, RandpermIsAPermutationFixedByItsGenerator) {
  Generator g(7);
  std::vector<int64_t> a = randperm(50, &g).to_vector<int64_t>();
  EXPECT_TRUE(is_permutation_of_range(a));
  g.manual_seed(7);
  EXPECT_EQ(randperm(50, &g).to_vector<int64_t>(), a);
  EXPECT_NE(randperm(50, &g).to_vector<int64_t>(), a);  // the stream moved on
  manual_seed(3);
  std::vector<int64_t> global = randperm(50).to_vector<int64_t>();
  EXPECT_TRUE(is_permutation_of_range(global));
  manual_seed(3);
  EXPECT_EQ(randperm(50).to_vector<int64_t>(), global);
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(randperm(1).to_vector<int64_t>(), (std::vector<int64_t>{0}));
  EXPECT_EQ(randperm(5, Dtype::f32).dtype(), Dtype::f32);
  expect_error([] { randperm(-1); }, NNP_INVALID_ARGUMENT, {"non-negative"});
  // Every position equally likely: where element 0 lands over 6000 draws of
  // randperm(6) (chi-square with 5 degrees of freedom, far tail at 25).
  std::vector<int> where(6, 0);
  for (int trial = 0; trial < 6000; ++trial) {
    std::vector<int64_t> p = randperm_vector(6, &g);
    ++where[static_cast<size_t>(std::find(p.begin(), p.end(), 0) - p.begin())];
  }
  double chi2 = 0;
  for (int count : where) chi2 += (count - 1000.0) * (count - 1000.0) / 1000.0;
  EXPECT_LT(chi2, 25.0);
}

TEST(Data, DataLoaderBatchesInOrderOrShuffled) {
  auto ds = numbered(10);
  DataLoader in_order(ds, DataLoaderOptions(4));
  EXPECT_EQ(in_order.size(), 3);
  std::vector<int64_t> sizes;
  for (Example& batch : in_order) sizes.push_back(batch.data.size(0));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  std::vector<int64_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(targets_of(in_order), expected);

  DataLoader dropping(ds, DataLoaderOptions(4).drop_last(true));
  EXPECT_EQ(dropping.size(), 2);
  EXPECT_EQ(targets_of(dropping).size(), 8u);

  Generator g(11);
  DataLoader shuffled(ds, DataLoaderOptions(3).shuffle(true).generator(&g));
  std::vector<int64_t> first = targets_of(shuffled), second = targets_of(shuffled);
  EXPECT_TRUE(is_permutation_of_range(first));
  EXPECT_TRUE(is_permutation_of_range(second));
  EXPECT_NE(first, second);  // each epoch draws a new order
  Generator again(11);
  DataLoader replay(ds, DataLoaderOptions(3).shuffle(true).generator(&again));
  EXPECT_EQ(targets_of(replay), first);

  expect_error([&] { DataLoader(ds, DataLoaderOptions(0)); }, NNP_INVALID_ARGUMENT, {"batch_size"});
  expect_error([&] { DataLoader(nullptr); }, NNP_INVALID_ARGUMENT, {"null"});
}

// torch.utils.data.distributed.DistributedSampler(range(n), num_replicas,
// rank, shuffle=False, drop_last) gives these shares (PyTorch 1.13).
TEST(Data, DistributedSamplerSharesMatchPyTorchsInOrder) {
  struct Case {
    int64_t n, replicas;
    bool drop_last;
    std::vector<std::vector<int64_t>> shares;
  };
  const Case cases[] = {{10, 4, false, {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}}},
                        {10, 4, true, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
                        {3, 4, false, {{0}, {1}, {2}, {0}}},
                        {3, 4, true, {{}, {}, {}, {}}},
                        {8, 4, true, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}}};
  for (const Case& c : cases)
    for (int64_t r = 0; r < c.replicas; ++r) {
      DistributedSampler sampler(r, c.replicas, false, 0, c.drop_last);
      EXPECT_EQ(sampler.indices(c.n), c.shares[static_cast<size_t>(r)]) << c.n << " over " << c.replicas;
      EXPECT_EQ(sampler.count(c.n), static_cast<int64_t>(c.shares[static_cast<size_t>(r)].size()));
    }
  expect_error([] { DistributedSampler(4, 4); }, NNP_INVALID_ARGUMENT, {"invalid rank 4", "[0, 3]"});
  expect_error([] { DistributedSampler(0, 0); }, NNP_INVALID_ARGUMENT, {"num_replicas"});
}

// Shuffled: every rank draws the same permutation of an epoch, so the
// shares are disjoint and cover the data; set_epoch gives a new one.
TEST(Data, DistributedSamplerShuffledSharesCoverTheDataOnceAnEpoch) {
  auto ds = numbered(10);
  for (int64_t replicas : {2, 3, 5}) {
    std::vector<std::vector<int64_t>> epochs;
    for (int64_t epoch : {0, 1}) {
      std::vector<int64_t> all;
      for (int64_t r = 0; r < replicas; ++r) {
        auto sampler = std::make_shared<DistributedSampler>(r, replicas, true, 42);
        sampler->set_epoch(epoch);
        DataLoader loader(ds, DataLoaderOptions(2).sampler(sampler));
        EXPECT_EQ(loader.size(), (sampler->count(10) + 1) / 2);
        const std::vector<int64_t> mine = targets_of(loader);
        EXPECT_EQ(mine, sampler->indices(10)) << "the loader visits the sampler's order";
        EXPECT_EQ(targets_of(loader), mine) << "the same epoch again gives the same share";
        all.insert(all.end(), mine.begin(), mine.end());
      }
      // Padding repeats at most replicas - 1 examples.
      std::vector<int64_t> distinct = all;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      EXPECT_EQ(distinct.size(), 10u) << replicas << " replicas, epoch " << epoch;
      EXPECT_EQ(static_cast<int64_t>(all.size()), (10 + replicas - 1) / replicas * replicas);
      epochs.push_back(all);
    }
    EXPECT_NE(epochs[0], epochs[1]) << "set_epoch reshuffles";
  }
  expect_error(
      [&] { DataLoader(ds, DataLoaderOptions(2).shuffle(true).sampler(std::make_shared<DistributedSampler>(0, 2))); },
      NNP_INVALID_ARGUMENT, {"mutually exclusive with shuffle"});
}

TEST(Data, WorkersGiveTheSameBatchesInTheSameOrder) {
  auto ds = numbered(103);
  Generator a(5), b(5);
  DataLoader plain(ds, DataLoaderOptions(8).shuffle(true).generator(&a));
  DataLoader threaded(ds, DataLoaderOptions(8).shuffle(true).generator(&b).workers(3));
  EXPECT_EQ(targets_of(threaded), targets_of(plain));
  // Leaving an epoch early stops its workers (no hang, no leak).
  for (Example& batch : threaded) {
    EXPECT_EQ(batch.data.size(0), 8);
    break;
  }
  EXPECT_EQ(targets_of(threaded).size(), 103u);
}

TEST(Data, CollateAndErrorsReachTheLoop) {
  auto ds = numbered(6);
  std::atomic<int> calls{0};
  DataLoader summed(ds, DataLoaderOptions(3).collate([&](const std::vector<Example>& examples) {
    ++calls;
    Tensor total = zeros({2});
    for (const Example& e : examples) total = total + e.data;
    return Example{total, Tensor()};
  }));
  std::vector<float> sums;
  for (Example& batch : summed) {
    std::vector<float> v = batch.data.to_vector<float>();
    sums.push_back(v[0]);
  }
  EXPECT_EQ(sums, (std::vector<float>{0 + 1 + 2, 3 + 4 + 5}));
  EXPECT_EQ(calls.load(), 2);

  for (int64_t workers : {0, 2}) {
    DataLoader broken(std::make_shared<Failing>(), DataLoaderOptions(2).workers(workers));
    expect_error(
        [&] {
          for (Example& batch : broken) EXPECT_EQ(batch.data.size(0), 2);
        },
        NNP_INVALID_ARGUMENT, {"example 5 is broken"});
  }
}

class CsvFiles : public nnp::test::TempDirTest {};

TEST_F(CsvFiles, ReadsFeaturesAndLabels) {
  std::ofstream(path("rows.csv")) << "a,b,label\n1.5, 2, 0\n-3,4e2,2\n";
  nnp::data::CsvData csv = read_csv(path("rows.csv"));
  EXPECT_EQ(csv.features.shape(), (Shape{2, 2}));
  EXPECT_EQ(csv.features.dtype(), Dtype::f32);
  EXPECT_EQ(csv.features.to_vector<float>(), (std::vector<float>{1.5f, 2, -3, 400}));
  EXPECT_EQ(csv.labels.to_vector<int64_t>(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(csv.info.rows, 2);
  EXPECT_EQ(csv.info.classes, 3);
  EXPECT_EQ(csv.info.largest_label_line, 3);
  EXPECT_EQ(csv.info.header_skipped, 1);
  EXPECT_EQ(csv.dataset()->get(1).target.item<int64_t>(), 2);

  std::ofstream(path("numeric_header.csv")) << "1,2,3\n4,5,6\n";
  EXPECT_EQ(read_csv(path("numeric_header.csv")).info.rows, 2);
  EXPECT_EQ(read_csv(path("numeric_header.csv"), CsvOptions().header(true)).info.rows, 1);

  std::ofstream(path("nan.csv")) << "1,2,0\nnan,2,1\n";
  expect_error([&] { read_csv(path("nan.csv")); }, NNP_CORRUPT_DATA, {"nan.csv:2", "column 1", "not a finite number"});
  expect_error([&] { read_csv(dir_.string()); }, NNP_IO_ERROR, {"is a directory"});
  expect_error([&] { read_csv(path("missing.csv")); }, NNP_IO_ERROR, {"missing.csv", "cannot open"});
}

TEST_F(CsvFiles, TheCEntryChecksItsArguments) {
  std::ofstream(path("rows.csv")) << "1,0\n";
  nnp_tensor *x = nullptr, *y = nullptr;
  nnp_csv_options bad{};
  bad.struct_size = sizeof(bad);
  bad.header = 7;
  EXPECT_EQ(api().load_csv(path("rows.csv").c_str(), &bad, Device::cpu().raw(), &x, &y, nullptr), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("NNP_CSV_HEADER_AUTO"), std::string::npos);
  EXPECT_EQ(api().load_csv(path("rows.csv").c_str(), nullptr, Device::cpu().raw(), nullptr, &y, nullptr),
            NNP_INVALID_ARGUMENT);
  // An older caller's info struct (a smaller struct_size) gets only its fields.
  nnp_csv_info small{};
  small.struct_size = offsetof(nnp_csv_info, classes);
  small.classes = -7;
  ASSERT_EQ(api().load_csv(path("rows.csv").c_str(), nullptr, Device::cpu().raw(), &x, &y, &small), NNP_OK);
  EXPECT_EQ(small.rows, 1);
  EXPECT_EQ(small.classes, -7);
  api().tensor_release(x);
  api().tensor_release(y);
}
