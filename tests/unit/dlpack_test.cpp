// DLPack exchange: layouts, zero-copy in both directions, ownership (the
// deleter runs once, after the last view), and refusals that leave the
// producer's array with its owner.
#include <cstring>
#include <dlpack_v1.hpp>
#include <vector>

#include "test_support.hpp"

namespace nnp {
namespace {

using test::expect_error;

// A producer of the kind a vendor library is: owns a buffer and counts how
// often its deleter runs.
template <typename Managed>
struct Producer {
  std::vector<double> buffer;
  std::vector<int64_t> shape, strides;
  Managed managed{};
  int deleted = 0;

  Producer(std::vector<double> values, std::vector<int64_t> shape_, std::vector<int64_t> strides_)
      : buffer(std::move(values)), shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor& t = managed.dl_tensor;
    t.data = buffer.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 64, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](Managed* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) managed.version = {1, 0};
  }
};

TEST(DLPack, ExportSharesMemoryAndDescribesTheLayout) {
  Tensor base = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor t = base.transpose(0, 1);  // shape [3, 2], strides [1, 3]
  DLManagedTensor* m = t.to_dlpack();
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.device.device_id, 0);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.dtype.lanes, 1);
  ASSERT_EQ(d.ndim, 2);
  EXPECT_EQ(std::vector<int64_t>(d.shape, d.shape + 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::vector<int64_t>(d.strides, d.strides + 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(d.data, t.data_ptr());
  EXPECT_EQ(d.byte_offset, 0u);

  // Zero copy: a write through DLPack shows in the tensor.
  static_cast<float*>(d.data)[1] = 42.0f;  // base[0][1], t[1][0]
  EXPECT_EQ(test::floats(t), (std::vector<float>{0, 3, 42, 4, 2, 5}));

  // The consumer's view outlives every nnplug handle.
  base = Tensor();
  t = Tensor();
  EXPECT_EQ(static_cast<float*>(d.data)[5], 5.0f);
  m->deleter(m);
}

TEST(DLPack, ExportOfASliceStartsAtItsFirstElement) {
  Tensor t = from_vector<int64_t>({10, 11, 12, 13, 14}, {5}).slice(0, 2, 5);
  DLManagedTensor* m = t.to_dlpack();
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 64);
  EXPECT_EQ(static_cast<int64_t*>(m->dl_tensor.data)[0], 12);
  m->deleter(m);
}

TEST(DLPack, ExportKeepsItsDataWhenTheTensorMovesDevice) {
  auto layer = nn::create_layer("nn.Linear", nn::Attrs().set("in_features", 2).set("out_features", 1));
  Tensor weight = layer.get_parameter("weight");
  std::vector<float> before = test::floats(weight);
  DLManagedTensor* m = weight.detach().to_dlpack();
  layer.to(Device("reference"), Dtype::f64);  // swaps the parameter's storage in place
  EXPECT_EQ(weight.dtype(), Dtype::f64);
  const float* exported = static_cast<const float*>(m->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(exported, exported + 2), before);
  m->deleter(m);
}

TEST(DLPack, BoolNeedsTheVersionedForm) {
  Tensor flags = from_vector<uint8_t>({1, 0, 1}).to(Dtype::boolean);
  expect_error([&] { flags.to_dlpack(); }, NNP_DTYPE_MISMATCH, {"DLPack 0.6 has no bool type", "to_dlpack_versioned"});
  DLManagedTensorVersioned* m = flags.to_dlpack_versioned();
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->version.minor, 0u);
  EXPECT_EQ(m->flags, 0u);
  EXPECT_EQ(m->dl_tensor.dtype.code, nnp::core::interop::kDLBoolCode);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 8);
  const uint8_t* bytes = static_cast<const uint8_t*>(m->dl_tensor.data);
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + 3), (std::vector<uint8_t>{1, 0, 1}));
  m->deleter(m);
}

TEST(DLPack, TensorsRequiringGradAreRefused) {
  Tensor w = ones({2}).requires_grad_();
  expect_error([&] { w.to_dlpack(); }, NNP_INVALID_ARGUMENT, {"to_dlpack", "requires grad", "detached"});
  DLManagedTensor* m = w.detach().to_dlpack();
  m->deleter(m);
}

TEST(DLPack, ImportViewsTheProducersMemoryWithItsStrides) {
  // A column-major 2x3 array: element (i, j) at i + 2 j.
  Producer<DLManagedTensor> p({1, 4, 2, 5, 3, 6}, {2, 3}, {1, 2});
  {
    Tensor t = Tensor::from_dlpack(&p.managed);
    EXPECT_EQ(t.device().backend(), "cpu");
    EXPECT_EQ(t.dtype(), Dtype::f64);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.strides(), (Shape{1, 2}));
    EXPECT_EQ(t.data_ptr(), p.buffer.data());
    EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
    // Computing with it, and writing through it.
    Tensor product = t.matmul(from_vector<double>({1, 1, 1}, {3, 1}));
    EXPECT_EQ(product.to_vector<double>(), (std::vector<double>{6, 15}));
    t.copy_(t * 2.0);
    EXPECT_EQ(p.buffer[1], 8.0);
    Tensor view = t.transpose(0, 1);
    t = Tensor();
    EXPECT_EQ(p.deleted, 0) << "a view still uses the memory";
    EXPECT_EQ(view.to_vector<double>(), (std::vector<double>{2, 8, 4, 10, 6, 12}));
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, ImportOfCompactArraysAndByteOffsets) {
  Producer<DLManagedTensorVersioned> p({9, 9, 1, 2, 3, 4}, {2, 2}, {});
  p.managed.dl_tensor.byte_offset = 2 * sizeof(double);
  {
    Tensor t = Tensor::from_dlpack(&p.managed);
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, RoundTripKeepsThePointer) {
  Tensor t = arange(0, 6, 1, Dtype::f32).reshape({2, 3});
  void* data = t.data_ptr();
  Tensor back = Tensor::from_dlpack(t.to_dlpack_versioned());
  t = Tensor();
  EXPECT_EQ(back.data_ptr(), data);
  EXPECT_EQ(test::floats(back), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  Tensor reference_copy = back.to(Device("reference"));
  Tensor again = Tensor::from_dlpack(reference_copy.to_dlpack());
  EXPECT_EQ(again.device().backend(), "cpu") << "host memory comes back on the cpu backend";
  EXPECT_EQ(test::floats(again), test::floats(reference_copy));
}

bool cuda_backend_loaded() {
  for (const nnp_backend_info& info : backends())
    if (std::string(info.name) == "cuda") return true;
  return false;
}

TEST(DLPack, RefusedImportsLeaveTheArrayWithItsOwner) {
  struct Case {
    const char* what;
    void (*spoil)(DLManagedTensorVersioned&);
    nnp_status status;
    std::vector<std::string> fragments;
  };
  const Case cases[] = {
      {"negative stride",
       [](DLManagedTensorVersioned& m) { m.dl_tensor.strides[0] = -2; },
       NNP_INVALID_ARGUMENT,
       {"negative stride -2", "make the array contiguous"}},
      {"vector lanes",
       [](DLManagedTensorVersioned& m) { m.dl_tensor.dtype.lanes = 4; },
       NNP_DTYPE_MISMATCH,
       {"4 lanes"}},
      {"complex",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.dtype = {kDLComplex, 64, 1};
       },
       NNP_DTYPE_MISMATCH,
       {"type code 5 with 64 bits has no nnplug dtype"}},
      {"misaligned",
       [](DLManagedTensorVersioned& m) { m.dl_tensor.byte_offset = 3; },
       NNP_INVALID_ARGUMENT,
       {"not aligned to its 8-byte elements"}},
      {"too many dims",
       [](DLManagedTensorVersioned& m) { m.dl_tensor.ndim = NNP_MAX_DIMS + 1; },
       NNP_SHAPE_MISMATCH,
       {"9 dimensions"}},
      {"newer major",
       [](DLManagedTensorVersioned& m) {
         m.version = {2, 0};
       },
       NNP_ABI_MISMATCH,
       {"DLPack 2.0", "reads DLPack 1.x"}},
      {"read only",
       [](DLManagedTensorVersioned& m) { m.flags = DLPACK_FLAG_BITMASK_READ_ONLY; },
       NNP_UNIMPLEMENTED,
       {"read-only"}},
      {"no cuda backend",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.device = {kDLCUDA, 0};
       },
       NNP_NOT_FOUND,
       {"cuda device but no cuda backend is loaded"}},
      {"vulkan",
       [](DLManagedTensorVersioned& m) {
         m.dl_tensor.device = {kDLVulkan, 0};
       },
       NNP_UNIMPLEMENTED,
       {"device type 7 has no nnplug backend"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    if (c.status == NNP_NOT_FOUND && cuda_backend_loaded()) continue;  // the case needs its absence
    Producer<DLManagedTensorVersioned> p({1, 2, 3, 4}, {2, 2}, {2, 1});
    c.spoil(p.managed);
    expect_error([&] { Tensor::from_dlpack(&p.managed); }, c.status, c.fragments);
    EXPECT_EQ(p.deleted, 0) << "a refused array stays the caller's";
  }
  expect_error([] { Tensor::from_dlpack(static_cast<DLManagedTensor*>(nullptr)); }, NNP_INVALID_ARGUMENT,
               {"src is NULL"});
  for (const nnp_backend_info& info : backends())  // a cuda backend with no device here
    if (std::string(info.name) == "cuda" && info.device_count == 0) {
      Producer<DLManagedTensorVersioned> p({1, 2}, {2}, {1});
      p.managed.dl_tensor.device = {kDLCUDA, 0};
      expect_error([&] { Tensor::from_dlpack(&p.managed); }, NNP_INVALID_ARGUMENT,
                   {"cuda device 0 does not exist (0 devices)"});
      EXPECT_EQ(p.deleted, 0);
    }
}

}  // namespace
}  // namespace nnp
