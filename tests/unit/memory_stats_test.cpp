// Memory statistics (ABI 1.28): torch.cuda.memory_allocated's count of the
// bytes tensors hold, per device, its peak and reset, what is not counted
// (views, DLPack imports), the C entry's refusals; and what activation
// checkpointing is for: the peak of a deep model's step with each block
// checkpointed well below the plain step's.
#include <gtest/gtest.h>

#include <dlpack_v1.hpp>
#include <nnp/checkpoint.hpp>
#include <nnp/memory.hpp>
#include <nnp/nnp.hpp>

#include "test_support.hpp"

namespace memory_stats_test {

using namespace nnp;
using nnp::test::expect_error;

TEST(MemoryStats, CountTheBytesTensorsHoldAndTheirPeak) {
  const Device cpu = Device::cpu();
  const MemoryStats before = memory_stats(cpu);
  Tensor a = zeros({1000}, Dtype::f32);  // 4,000 bytes
  MemoryStats now = memory_stats(cpu);
  EXPECT_EQ(now.allocated_bytes - before.allocated_bytes, 4000);
  EXPECT_EQ(now.allocations - before.allocations, 1);
  EXPECT_EQ(now.total_allocations - before.total_allocations, 1);
  {
    Tensor b = zeros({250, 4}, Dtype::f64);  // 8,000 bytes
    Tensor view = b.transpose(0, 1).narrow(0, 1, 2);  // a view: no storage of its own
    EXPECT_EQ(memory_allocated(cpu) - before.allocated_bytes, 12000);
    EXPECT_GE(max_memory_allocated(cpu), before.allocated_bytes + 12000);
  }
  EXPECT_EQ(memory_allocated(cpu) - before.allocated_bytes, 4000);
  EXPECT_EQ(memory_stats(cpu).allocations - before.allocations, 1);
  EXPECT_EQ(memory_stats(cpu).total_allocations - before.total_allocations, 2);

  // The peak restarts from what is held now, then follows the next high.
  reset_peak_memory_stats(cpu);
  const int64_t held = memory_allocated(cpu);
  EXPECT_EQ(max_memory_allocated(cpu), held);
  { Tensor c = empty({4096}, Dtype::bf16); }
  EXPECT_EQ(max_memory_allocated(cpu), held + 8192);
  EXPECT_EQ(memory_allocated(cpu), held);
  a = Tensor();
  EXPECT_EQ(memory_allocated(cpu), held - 4000);
}

TEST(MemoryStats, EachDeviceCountsItsOwn) {
  const Device cpu = Device::cpu(), reference("reference");
  const int64_t on_cpu = memory_allocated(cpu), on_reference = memory_allocated(reference);
  Tensor r = ones({64}, Dtype::f32, reference);
  EXPECT_EQ(memory_allocated(reference) - on_reference, 256);
  EXPECT_EQ(memory_allocated(cpu), on_cpu);
  Tensor moved = r.to(cpu);
  EXPECT_EQ(memory_allocated(cpu) - on_cpu, 256);
  EXPECT_EQ(memory_allocated(reference) - on_reference, 256);
}

TEST(MemoryStats, DLPackImportsAreNotCounted) {
  std::vector<float> buffer(512, 1.0f);
  std::vector<int64_t> shape{512};
  DLManagedTensor managed{};
  managed.dl_tensor.data = buffer.data();
  managed.dl_tensor.device = {kDLCPU, 0};
  managed.dl_tensor.ndim = 1;
  managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  managed.dl_tensor.shape = shape.data();
  managed.deleter = nullptr;
  const MemoryStats before = memory_stats();
  {
    Tensor imported = Tensor::from_dlpack(&managed);
    EXPECT_EQ(imported.sum().item<float>(), 512.0f);  // the scalar result is nnplug's: 4 bytes, freed
    EXPECT_EQ(memory_allocated(), before.allocated_bytes);
  }
  EXPECT_EQ(memory_stats().allocations, before.allocations);
}

TEST(MemoryStats, TheCEntriesCheckTheirArguments) {
  const nnp_api& c = api();
  nnp_memory_stats stats{};
  nnp_device bad{999, 0};
  stats.struct_size = sizeof(stats);
  EXPECT_EQ(c.memory_stats(Device::cpu().raw(), nullptr), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(c.memory_stats(bad, &stats), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(c.last_error()).find("memory_stats"), std::string::npos) << c.last_error();
  EXPECT_EQ(c.reset_peak_memory_stats(bad), NNP_INVALID_ARGUMENT);
  nnp_memory_stats unsized{};
  EXPECT_EQ(c.memory_stats(Device::cpu().raw(), &unsized), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(c.last_error()).find("struct_size"), std::string::npos) << c.last_error();
  // A caller that knows fewer fields gets those and nothing past them.
  Tensor held = zeros({16});
  struct {
    nnp_memory_stats head;
    int64_t guard;
  } small{};
  small.head.struct_size = NNP_SIZE_THROUGH(nnp_memory_stats, allocated_bytes);
  small.head.peak_allocated_bytes = -7;
  ASSERT_EQ(c.memory_stats(Device::cpu().raw(), &small.head), NNP_OK);
  EXPECT_EQ(small.head.struct_size, NNP_SIZE_THROUGH(nnp_memory_stats, allocated_bytes));
  EXPECT_GE(small.head.allocated_bytes, 64);
  EXPECT_EQ(small.head.peak_allocated_bytes, -7);
}

// Eight blocks of Linear, GELU and LayerNorm on a batch whose activations
// outweigh the weights: checkpointing each block keeps one block's
// activations at a time instead of all eight (PyTorch's reason to have it).
int64_t step_peak(bool checkpointed) {
  manual_seed(3);
  std::vector<nn::Sequential> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(nn::Sequential({nn::Linear(64, 64), nn::GELU(), nn::LayerNorm(std::vector<int64_t>{64})}));
  Tensor x = randn({512, 64});
  reset_peak_memory_stats();
  const int64_t held = memory_allocated();
  Tensor h = x;
  for (nn::Sequential& block : blocks)
    h = checkpointed ? utils::checkpoint([block](const Tensor& t) mutable { return block(t); }, h) : block(h);
  h.pow(2).mean().backward();
  return max_memory_allocated() - held;
}

TEST(MemoryStats, CheckpointingEachBlockLowersTheStepsPeak) {
  const int64_t plain = step_peak(false), checkpointed = step_peak(true);
  // Plain keeps ~6 activations of 128 KB a block (x, the product, GELU's
  // output, the normalized rows...) for 8 blocks; checkpointed, the 8 block
  // inputs and one block's activations.
  EXPECT_GT(plain, 8 * 4 * 131072) << plain;
  EXPECT_LT(checkpointed, plain / 2) << checkpointed << " vs " << plain;
}

}  // namespace memory_stats_test
