// Safetensors files: round trips, a file written by hand from the format's
// specification, and every kind of corrupt or mismatched file refused with
// the module left unchanged.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

namespace {

struct TwoLayer : nn::Module {
  Tensor w, b;
  TwoLayer(int64_t in, int64_t out) : Module("TwoLayer") {
    w = register_parameter("weight", randn({out, in}));
    b = register_parameter("bias", randn({out}));
    register_buffer("steps", zeros({}, Dtype::i64));
  }
  Tensor forward(const Tensor& x) override { return x.matmul(w.t()) + b; }
};

class Files : public test::TempDirTest {
 protected:
  // A file made of an 8-byte little-endian length, the header, then data.
  std::string write_raw(const std::string& name, const std::string& header, const std::string& data,
                        int64_t claimed_length = -1) {
    std::string file = path(name);
    std::ofstream out(file, std::ios::binary);
    uint64_t length = claimed_length >= 0 ? static_cast<uint64_t>(claimed_length) : header.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>(length >> (8 * i)));
    out << header << data;
    return file;
  }
};

std::string floats_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

}  // namespace

TEST_F(Files, RoundTripEveryDtypeWithMetadata) {
  NamedTensors tensors = {
      {"f32", randn({2, 3})},
      {"f64", randn({4}, Dtype::f64)},
      {"f16", randn({3}).to(Dtype::f16)},
      {"bf16", randn({3}).to(Dtype::bf16)},
      {"i64", arange(0, 5)},
      {"i32", arange(0, 3, 1, Dtype::i32)},
      {"u8", arange(250, 256, 1, Dtype::u8)},
      {"flags", from_vector(std::vector<uint8_t>{1, 0, 1}).to(Dtype::boolean)},
      {"scalar", full({}, 3.5)},
      {"empty", zeros({0, 4})},
      {"transposed", randn({3, 2}).t()},
  };
  save_safetensors(tensors, path("all.safetensors"), {{"format", "pt"}, {"note", "round trip"}});
  NamedTensors loaded = load_safetensors(path("all.safetensors"));
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [key, original] : tensors) {
    const std::string& name = key;  // C++17 lambdas cannot capture structured bindings
    SCOPED_TRACE(name);
    auto it = std::find_if(loaded.begin(), loaded.end(), [&](const auto& e) { return e.first == name; });
    ASSERT_NE(it, loaded.end());
    EXPECT_EQ(it->second.shape(), original.shape());
    EXPECT_EQ(it->second.dtype(), original.dtype());
    if (original.numel() > 0) {
      EXPECT_EQ(it->second.to(Dtype::f64).to_vector<double>(), original.to(Dtype::f64).to_vector<double>());
    }
  }
  EXPECT_EQ(safetensors_metadata(path("all.safetensors"), "note"), "round trip");
  expect_error([&] { safetensors_metadata(path("all.safetensors"), "absent"); }, NNP_NOT_FOUND, {"absent"});
  // The header is padded to a multiple of 8 bytes, as the reference writer does.
  std::ifstream in(path("all.safetensors"), std::ios::binary);
  unsigned char length[8];
  in.read(reinterpret_cast<char*>(length), 8);
  EXPECT_EQ(length[0] % 8, 0);
}

TEST_F(Files, ReadsAFileWrittenFromTheSpecification) {
  // Two tensors, PyTorch's dtype names, offsets into the data block.
  std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string file = write_raw("spec.safetensors", header, floats_bytes({0.5f, -1.5f, 1, 2, 3, 4}));
  NamedTensors loaded = load_safetensors(file);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].first, "b");  // in the order of the data
  EXPECT_EQ(loaded[0].second.to_vector<float>(), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(loaded[1].second.shape(), (Shape{2, 2}));
  EXPECT_EQ(loaded[1].second.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  // A module loads it by PyTorch's key names.
  struct Tiny : nn::Module {
    Tiny() : Module("Tiny") {
      register_parameter("w", zeros({2, 2}));
      register_parameter("b", zeros({2}));
    }
  };
  auto tiny = nn::make<Tiny>();
  tiny->load(file);
  EXPECT_EQ(tiny->get_parameter("w").to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(Files, ModuleSaveAndLoadRoundTrip) {
  auto a = nn::make<TwoLayer>(3, 2);
  a->save(path("model.safetensors"));
  EXPECT_EQ(safetensors_metadata(path("model.safetensors"), "format"), "pt");
  auto b = nn::make<TwoLayer>(3, 2);
  b->load(path("model.safetensors"));
  Tensor x = randn({4, 3});
  EXPECT_EQ((*a)(x).to_vector<float>(), (*b)(x).to_vector<float>());
  // Saving over the file replaces it whole, leaving no temporary behind.
  a->save(path("model.safetensors"));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
  expect_error([&] { a->save(path("no/such/dir/model.safetensors")); }, NNP_IO_ERROR, {"cannot create"});
  expect_error(
      [&] {
        save_safetensors({{"x", ones({1})}, {"x", ones({1})}}, path("dup.safetensors"));
      },
      NNP_INVALID_ARGUMENT, {"appears twice"});
}

TEST_F(Files, CorruptFilesAreRefusedAndTheModuleIsUnchanged) {
  auto model = nn::make<TwoLayer>(2, 1);
  std::vector<float> weight = model->w.to_vector<float>(), bias = model->b.to_vector<float>();
  const std::string good_entry = R"("bias":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  const std::string four = floats_bytes({9});
  struct Bad {
    const char* name;
    std::string header;
    std::string data;
    int64_t claimed;
    const char* reason;
  };
  const std::vector<Bad> cases = {
      {"short", "", "", -2, "shorter than the 8-byte length"},
      {"huge header", "{}", "", 200'000'000, "more than the limit"},
      {"header past the end", "{}", "", 1000, "the file holds only"},
      {"not json", "{\"bias\": nope}", "", -1, "not valid JSON"},
      {"not an object", "[1, 2]", "", -1, "does not start with '{'"},
      {"duplicate key", "{" + good_entry + "," + good_entry + "}", four, -1, "names 'bias' twice"},
      {"unknown dtype", R"({"bias":{"dtype":"C64","shape":[1],"data_offsets":[0,4]}})", four, -1, "\"C64\""},
      {"missing field", R"({"bias":{"dtype":"F32","data_offsets":[0,4]}})", four, -1, "needs \"dtype\""},
      {"negative size", R"({"bias":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", four, -1, "shape entry"},
      {"size mismatch", R"({"bias":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", four, -1, "needs 8"},
      {"past the data", R"({"bias":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", four, -1, "past the data"},
      {"reversed offsets", R"({"bias":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", four, -1, "ends before"},
      {"overlap",
       R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"bias":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       four, -1, "overlaps"},
      {"gap", R"({"bias":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", four + four, -1, "gap before"},
      {"trailing bytes", "{" + good_entry + "}", four + "xx", -1, "2 bytes follow the last tensor"},
      {"metadata not strings", R"({"__metadata__":{"format":1},)" + good_entry + "}", four, -1, "is not a string"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.name);
    std::string file;
    if (bad.claimed == -2) {
      file = path("short.safetensors");
      std::ofstream(file) << "abc";
    } else {
      file = write_raw(std::string(bad.name) + ".safetensors", bad.header, bad.data, bad.claimed);
    }
    expect_error([&] { model->load(file, false); }, NNP_CORRUPT_DATA, {file, bad.reason});
    EXPECT_EQ(model->w.to_vector<float>(), weight);
    EXPECT_EQ(model->b.to_vector<float>(), bias);
  }
  expect_error([&] { model->load(path("absent.safetensors")); }, NNP_IO_ERROR, {"cannot open"});
}

TEST_F(Files, MismatchedCheckpointsChangeNothing) {
  auto model = nn::make<TwoLayer>(2, 1);
  std::vector<float> weight = model->w.to_vector<float>();
  nn::make<TwoLayer>(3, 1)->save(path("wider.safetensors"));
  expect_error([&] { model->load(path("wider.safetensors")); }, NNP_SHAPE_MISMATCH, {"size mismatch for weight"});
  EXPECT_EQ(model->w.to_vector<float>(), weight);
  save_safetensors({{"weight", ones({1, 2})}}, path("partial.safetensors"));
  expect_error([&] { model->load(path("partial.safetensors")); }, NNP_NOT_FOUND,
               {"missing key(s): \"bias\", \"steps\""});
  EXPECT_EQ(model->w.to_vector<float>(), weight);
  nn::IncompatibleKeys keys = model->load(path("partial.safetensors"), false);
  EXPECT_EQ(keys.missing_keys, (std::vector<std::string>{"bias", "steps"}));
  EXPECT_EQ(model->w.to_vector<float>(), (std::vector<float>{1, 1}));
  // An f64 checkpoint converts into the f32 model, as PyTorch's copy_; an
  // integer weight is refused.
  save_safetensors({{"weight", full({1, 2}, 2.0, Dtype::f64)}, {"bias", ones({1})}, {"steps", zeros({}, Dtype::i64)}},
                   path("f64.safetensors"));
  model->load(path("f64.safetensors"));
  EXPECT_EQ(model->w.to_vector<float>(), (std::vector<float>{2, 2}));
  save_safetensors({{"weight", ones({1, 2}, Dtype::i64)}, {"bias", ones({1})}, {"steps", zeros({}, Dtype::i64)}},
                   path("i64.safetensors"));
  expect_error([&] { model->load(path("i64.safetensors")); }, NNP_DTYPE_MISMATCH, {"weight", "i64"});
  EXPECT_EQ(model->w.to_vector<float>(), (std::vector<float>{2, 2}));
}
