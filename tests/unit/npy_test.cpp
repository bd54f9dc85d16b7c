// NumPy's .npy files (core/io/npy.cpp; nnp::save_npy / nnp::load_npy, ABI
// 1.20): every dtype nnplug shares with numpy round-trips bit for bit; the
// bytes written are numpy.save's; what numpy and other writers produce
// (Fortran order, version 2.0, Python 2's longs, double quotes) reads; and
// every malformed file is refused with its name and the problem, leaving
// nothing behind.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_error;

class Npy : public nnp::test::TempDirTest {
 protected:
  // A .npy file of the given version, header text (the newline and the
  // padding added) and data bytes.
  std::string write(const std::string& name, const std::string& dict, const std::string& data, int major = 1) {
    std::string header = dict;
    const size_t prefix = major == 1 ? 10 : 12;
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
    for (size_t i = 0; i < prefix - 8; ++i) bytes += static_cast<char>(header.size() >> (8 * i) & 0xff);
    return raw(name, bytes + header + data);
  }
  std::string raw(const std::string& name, const std::string& bytes) {
    const std::string file = path(name);
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
  }
  static std::string floats(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  // A tensor's elements as bytes, in logical order.
  static std::string bytes_of(const Tensor& t) {
    const Tensor c = t.contiguous();
    std::string out(static_cast<size_t>(c.numel()) * dtype_size(c.dtype()), '\0');
    check(api().copy_to_host(c.get(), out.data(), out.size()));
    return out;
  }
  static std::string read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(Npy, EveryDtypeRoundTripsBitForBit) {
  manual_seed(5);
  const Tensor base = randn({3, 4}) * 100.0;
  for (Dtype dtype : {Dtype::f32, Dtype::f64, Dtype::f16, Dtype::i64, Dtype::i32, Dtype::i16, Dtype::i8, Dtype::u8,
                      Dtype::u16, Dtype::u32, Dtype::u64, Dtype::boolean}) {
    const Tensor t =
        dtype == Dtype::boolean ? base > zeros({3, 4}) : (dtype == Dtype::u8 ? base.abs() : base).to(dtype);
    const std::string file = path(std::string(dtype_name(dtype)) + ".npy");
    save_npy(t, file);
    const Tensor back = load_npy(file);
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(bytes_of(back), bytes_of(t)) << dtype_name(dtype);
  }
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{0, 3}, Shape{2, 1, 3, 1}}) {
    const Tensor t = randn(shape);
    save_npy(t, path("shape.npy"));
    const Tensor back = load_npy(path("shape.npy"));
    EXPECT_EQ(back.shape(), shape);
    EXPECT_EQ(bytes_of(back), bytes_of(t));
  }
  // A transposed (strided) tensor is written in its logical order.
  const Tensor strided = base.t();
  save_npy(strided, path("t.npy"));
  EXPECT_EQ(bytes_of(load_npy(path("t.npy"))), bytes_of(strided));
}

TEST_F(Npy, TheBytesAreNumpySaves) {
  save_npy(from_vector<float>({1, 2, 3, 4, 5, 6}).reshape({2, 3}), path("a.npy"));
  const std::string bytes = read(path("a.npy"));
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  // numpy 1.24+: the dict, 20 spaces of room for the first dimension, then
  // padding to byte 128 (a multiple of 64), 118 header bytes in all.
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes.substr(8, 2), std::string("\x76\x00", 2));
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.substr(10 + dict.size(), 117 - dict.size()), std::string(117 - dict.size(), ' '));
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.substr(128), floats({1, 2, 3, 4, 5, 6}));
  save_npy(from_vector<int64_t>({7}), path("one.npy"));
  EXPECT_NE(read(path("one.npy")).find("'shape': (1,), }"), std::string::npos) << "a 1-tuple has its comma";
}

TEST_F(Npy, WhatOtherWritersProduceReads) {
  // Fortran order: the bytes are the transpose's in C order.
  const std::string fortran =
      write("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", floats({1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(load_npy(fortran).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Version 2.0 (a 4-byte header length), Python 2's longs, double quotes,
  // keys in another order, '=' and '<' for one byte.
  const std::string v2 =
      write("v2.npy", R"({"shape": (3L,), "fortran_order": False, "descr": "=f4"})", floats({1, 2, 3}), 2);
  EXPECT_EQ(load_npy(v2).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  const std::string bytes = write("u1.npy", "{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", "\x07\x09");
  EXPECT_EQ(load_npy(bytes).to(Dtype::i64).to_vector<int64_t>(), (std::vector<int64_t>{7, 9}));
  const std::string scalar =
      write("s.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", std::string("\0\0\0\0\0\0\xf8\x3f", 8));
  EXPECT_EQ(load_npy(scalar).item<double>(), 1.5);
}

TEST_F(Npy, MalformedFilesAreRefusedByNameAndProblem) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  struct Case {
    std::string file;
    nnp_status status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {raw("empty.npy", ""), NNP_INVALID_ARGUMENT, "too short"},
      {raw("magic.npy", "PK\x03\x04 not numpy at all"), NNP_INVALID_ARGUMENT, "not a .npy file"},
      {write("v4.npy", ok_dict, floats({1, 2}), 4), NNP_INVALID_ARGUMENT, "format version 4.0"},
      {raw("past.npy", std::string("\x93NUMPY\x01\x00\xff\x00{", 11)), NNP_INVALID_ARGUMENT, "past the end"},
      {write("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2})),
       NNP_INVALID_ARGUMENT, "astype('<f4')"},
      {write("complex.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", floats({1, 2})),
       NNP_INVALID_ARGUMENT, "'<c8' is not one nnplug holds"},
      {write("twice.npy", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2})),
       NNP_INVALID_ARGUMENT, "names 'descr' twice"},
      {write("unknown.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", floats({1, 2})),
       NNP_INVALID_ARGUMENT, "a key 'x'"},
      {write("missing.npy", "{'descr': '<f4', 'shape': (2,), }", floats({1, 2})), NNP_INVALID_ARGUMENT, "lacks one of"},
      {write("overflow.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", ""),
       NNP_INVALID_ARGUMENT, "overflows"},
      {write("huge_dim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""),
       NNP_INVALID_ARGUMENT, "too large"},
      {write("short.npy", ok_dict, floats({1})), NNP_INVALID_ARGUMENT, "says 8 bytes of data, the file holds 4"},
      {write("long.npy", ok_dict, floats({1, 2, 3})), NNP_INVALID_ARGUMENT, "the file holds 12"},
      {write("bool.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02"), NNP_INVALID_ARGUMENT,
       "other than 0 and 1"},
      {write("tail.npy", ok_dict + " junk", floats({1, 2})), NNP_INVALID_ARGUMENT, "text after"},
      {write("bytes.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), \x01}", floats({1, 2})),
       NNP_INVALID_ARGUMENT, "not printable ASCII"},
      {write(
           "dims.npy",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
               [] {
                 std::string many;
                 for (int i = 0; i < NNP_MAX_DIMS + 1; ++i) many += "1, ";
                 return many;
               }() +
               "), }",
           floats({1})),
       NNP_INVALID_ARGUMENT, "more than"},
      {raw("long_header.npy", std::string("\x93NUMPY\x02\x00\x00\x00\x10\x00", 12) + std::string(1 << 20, ' ')),
       NNP_INVALID_ARGUMENT, "more than the limit"},
      {dir_.string(), NNP_IO_ERROR, "directory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    expect_error([&] { load_npy(c.file); }, c.status, {c.says, std::filesystem::path(c.file).filename().string()});
  }
}

TEST_F(Npy, AWriteThatCannotBeMadeLeavesNothing) {
  expect_error([&] { save_npy(randn({2}).to(Dtype::bf16), path("b.npy")); }, NNP_DTYPE_MISMATCH,
               {"bf16", "no numpy dtype"});
  EXPECT_FALSE(std::filesystem::exists(path("b.npy")));
  save_npy(from_vector<float>({1, 2}), path("keep.npy"));
  expect_error([&] { save_npy(randn({2}), path("missing/dir/x.npy")); }, NNP_IO_ERROR, {"missing/dir/x.npy"});
  EXPECT_EQ(load_npy(path("keep.npy")).to_vector<float>(), (std::vector<float>{1, 2}));
}

}  // namespace
