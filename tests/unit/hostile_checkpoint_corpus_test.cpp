// Issue 14, class 3: checkpoints from strangers, as a corpus. Each row is one
// crafted file; each must be refused with its status and a message naming
// the problem (or, where marked, read whole), without blocking, crashing or
// reading uninitialised memory. The counts per class are in tests/README.md.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "test_support.hpp"

using namespace nnp;

namespace {

struct FileCase {
  const char* label;
  std::string header;  // the JSON header, written after its 8-byte length
  std::string data;
  nnp_status status;  // NNP_OK: valid, read whole
  const char* fragment;
};

const char* kU8 = R"("dtype":"U8","shape":[1],"data_offsets":[0,1])";

std::string one(const std::string& name, const std::string& fields) { return "{\"" + name + "\":{" + fields + "}}"; }

std::vector<FileCase> header_cases() {
  const std::string big = "18446744073709551615", i64max = "9223372036854775807", over = "9223372036854775808";
  return {
      {"a tensor name with NUL", one("a\\u0000b", kU8), "x", NNP_CORRUPT_DATA, "NUL"},
      {"invalid UTF-8 in a name", one("\xff\xfe", kU8), "x", NNP_CORRUPT_DATA, "not valid JSON"},
      {"overlong UTF-8 in a name", one("\xc0\xaf", kU8), "x", NNP_CORRUPT_DATA, "not valid JSON"},
      {"a UTF-16 surrogate escape alone", one("\\ud800", kU8), "x", NNP_CORRUPT_DATA, "not valid JSON"},
      {"UTF-8 encoding a surrogate", one("\xed\xa0\x80", kU8), "x", NNP_CORRUPT_DATA, "not valid JSON"},
      {"a name given twice", "{\"w\":{" + std::string(kU8) + "},\"w\":{" + kU8 + "}}", "x", NNP_CORRUPT_DATA, "twice"},
      {"a byte-order mark before the header", "\xef\xbb\xbf" + one("w", kU8), "x", NNP_CORRUPT_DATA,
       "does not start with '{'"},
      {"text after the header's object", one("w", kU8) + "]", "x", NNP_CORRUPT_DATA, "not valid JSON"},
      {"the header an array", "[1]", "", NNP_CORRUPT_DATA, "does not start with '{'"},
      {"the header empty braces and padding (valid)", "{}      ", "", NNP_OK, ""},
      {"a shape entry 2^64-1", one("w", R"("dtype":"U8","shape":[)" + big + R"(],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "too large"},
      {"a shape entry 2^63", one("w", R"("dtype":"U8","shape":[)" + over + R"(],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "too large"},
      {"a shape entry INT64_MAX", one("w", R"("dtype":"U8","shape":[)" + i64max + R"(],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "bytes but shape"},
      {"sizes multiplying past int64 beside a zero",
       one("w", R"("dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0])"), "",
       NNP_CORRUPT_DATA, "too large"},
      {"sizes multiplying past uint64",
       one("w", R"("dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8])"), "12345678", NNP_CORRUPT_DATA,
       "too large"},
      {"a negative shape entry", one("w", R"("dtype":"U8","shape":[-1],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "negative shape entry"},
      {"a fractional shape entry", one("w", R"("dtype":"U8","shape":[1.5],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "not a size"},
      {"a shape entry as a string", one("w", R"("dtype":"U8","shape":["1"],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "not a size"},
      {"a shape entry true", one("w", R"("dtype":"U8","shape":[true],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "not a size"},
      {"a shape entry null", one("w", R"("dtype":"U8","shape":[null],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "not a size"},
      {"nine dimensions", one("w", R"("dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "more than 8 dimensions"},
      {"the shape an object", one("w", R"("dtype":"U8","shape":{},"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "needs"},
      {"offsets 2^64-1", one("w", R"("dtype":"U8","shape":[1],"data_offsets":[)" + big + "," + big + "]"), "x",
       NNP_CORRUPT_DATA, "past the data"},
      {"an end offset 2^64-1", one("w", R"("dtype":"U8","shape":[1],"data_offsets":[0,)" + big + "]"), "x",
       NNP_CORRUPT_DATA, "past the data"},
      {"a negative offset", one("w", R"("dtype":"U8","shape":[1],"data_offsets":[-1,0])"), "x", NNP_CORRUPT_DATA,
       "not byte positions"},
      {"a fractional offset", one("w", R"("dtype":"U8","shape":[1],"data_offsets":[0,0.5])"), "x", NNP_CORRUPT_DATA,
       "not byte positions"},
      {"three offsets", one("w", R"("dtype":"U8","shape":[1],"data_offsets":[0,1,2])"), "x", NNP_CORRUPT_DATA,
       "two numbers"},
      {"offsets reversed", one("w", R"("dtype":"U8","shape":[1],"data_offsets":[1,0])"), "x", NNP_CORRUPT_DATA,
       "ends before it begins"},
      {"a size not shape times itemsize", one("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,1])"), "x",
       NNP_CORRUPT_DATA, "needs 4"},
      {"an unknown dtype", one("w", R"("dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "does not support"},
      {"an empty dtype", one("w", R"("dtype":"","shape":[1],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "does not support"},
      {"a dtype as a number", one("w", R"("dtype":5,"shape":[1],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA,
       "needs"},
      {"a lower-case dtype", one("w", R"("dtype":"f32","shape":[1],"data_offsets":[0,4])"), "abcd", NNP_CORRUPT_DATA,
       "does not support"},
      {"no dtype", one("w", R"("shape":[1],"data_offsets":[0,1])"), "x", NNP_CORRUPT_DATA, "needs"},
      {"a tensor entry that is a number", R"({"w":1})", "", NNP_CORRUPT_DATA, "needs"},
      {"two tensors overlapping",
       R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
       "xyz", NNP_CORRUPT_DATA, "overlaps"},
      {"a gap between tensors",
       R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
       "xyz", NNP_CORRUPT_DATA, "gap"},
      {"bytes after the last tensor", one("w", kU8), "xy", NNP_CORRUPT_DATA, "follow the last tensor"},
      {"metadata values not strings", R"({"__metadata__":{"epoch":3}})", "", NNP_CORRUPT_DATA, "is not a string"},
      {"metadata an array", R"({"__metadata__":["a"]})", "", NNP_CORRUPT_DATA, "not an object"},
      {"metadata nested", R"({"__metadata__":{"a":{"b":"c"}}})", "", NNP_CORRUPT_DATA, "is not a string"},
      {"nested 10,000 deep", R"({"__metadata__":)" + std::string(10000, '[') + std::string(10000, ']') + "}", "",
       NNP_CORRUPT_DATA, "nests deeper"},
      {"a zero-element tensor at the end (valid)",
       R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"z":{"dtype":"F32","shape":[0,3],"data_offsets":[1,1]}})",
       "x", NNP_OK, ""},
  };
}

class HostileCheckpoints : public test::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& bytes) {
    std::string file = path(name);
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
  }
  std::string safetensors(const std::string& name, const std::string& header, const std::string& data) {
    std::string length;
    for (int i = 0; i < 8; ++i) length += static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
    return write(name, length + header + data);
  }
  int cases = 0;
  void refused(const std::string& label, const std::string& file, nnp_status status, const std::string& fragment) {
    SCOPED_TRACE(label);
    ++cases;
    test::expect_error([&] { load_safetensors(file); }, status, {fragment});
    test::expect_error([&] { safetensors_metadata(file, "epoch"); }, status, {fragment});
  }
};

}  // namespace

TEST_F(HostileCheckpoints, CraftedHeadersAreRefusedNamingTheProblem) {
  int n = 0;
  for (const FileCase& c : header_cases()) {
    std::string file = safetensors("case" + std::to_string(n++) + ".safetensors", c.header, c.data);
    if (c.status == NNP_OK) {
      SCOPED_TRACE(c.label);
      ++cases;
      EXPECT_NO_THROW(load_safetensors(file));
      continue;
    }
    refused(c.label, file, c.status, c.fragment);
  }
  std::cout << "class 3, crafted headers: " << cases << " cases\n";
}

// Lengths and sizes that lie: each of the first 8 bytes, and the file cut.
TEST_F(HostileCheckpoints, LengthsThatLieAreRefused) {
  const std::string header = one("w", kU8);
  auto with_length = [&](uint64_t length, const std::string& rest) {
    std::string bytes;
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>(length >> (8 * i));
    return bytes + rest;
  };
  refused("empty", write("empty", ""), NNP_CORRUPT_DATA, "shorter than the 8-byte length");
  refused("7 bytes", write("seven", std::string(7, '\x01')), NNP_CORRUPT_DATA, "shorter than the 8-byte length");
  refused("length 2^64-1", write("max", with_length(UINT64_MAX, header + "x")), NNP_CORRUPT_DATA,
          "more than the limit");
  refused("length 2^63", write("half", with_length(uint64_t{1} << 63, header + "x")), NNP_CORRUPT_DATA,
          "more than the limit");
  refused("length one past the file", write("past", with_length(header.size() + 2, header + "x")), NNP_CORRUPT_DATA,
          "the file holds only");
  refused("length 0", write("zero", with_length(0, header + "x")), NNP_CORRUPT_DATA, "does not start with '{'");
  refused("length one short", write("short", with_length(header.size() - 1, header + "x")), NNP_CORRUPT_DATA,
          "not valid JSON");
  refused("all 0xff", write("ff", std::string(64, '\xff')), NNP_CORRUPT_DATA, "more than the limit");
  std::cout << "class 3, lengths: " << cases << " cases\n";
}

// Only regular files are read: a FIFO blocked the reader forever, a
// directory read an uninitialised length.
TEST_F(HostileCheckpoints, OnlyRegularFilesAreOpened) {
  const std::string fifo = path("fifo.safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  refused("a FIFO", fifo, NNP_IO_ERROR, "is a FIFO");
  const std::string dir = path("dir.safetensors");
  std::filesystem::create_directory(dir);
  refused("a directory", dir, NNP_IO_ERROR, "is a directory");
  refused("a character device", "/dev/null", NNP_IO_ERROR, "is a character device");
  const std::string socket_path = path("sock.safetensors");
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  if (sock >= 0 && socket_path.size() < sizeof address.sun_path &&
      ::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
    refused("a socket", socket_path, NNP_IO_ERROR, "cannot open");  // open() of a socket fails: ENXIO
  if (sock >= 0) ::close(sock);
  const std::string loop = path("loop.safetensors");
  std::filesystem::create_symlink(loop, loop);
  refused("a symlink to itself", loop, NNP_IO_ERROR, "cannot open");
  std::filesystem::create_symlink(dir, path("link_to_dir.safetensors"));
  refused("a symlink to a directory", path("link_to_dir.safetensors"), NNP_IO_ERROR, "is a directory");
  std::filesystem::create_symlink(path("nowhere"), path("dangling.safetensors"));
  refused("a dangling symlink", path("dangling.safetensors"), NNP_IO_ERROR, "cannot open");
  refused("a name too long", path(std::string(300, 'n')), NNP_IO_ERROR, "cannot open");
  refused("a missing file", path("missing.safetensors"), NNP_IO_ERROR, "cannot open");
  refused("a path through a file", path("empty/inside"), NNP_IO_ERROR, "cannot open");
  std::cout << "class 3, file kinds: " << cases << " cases\n";
}

// The model spec reader takes the same care.
TEST_F(HostileCheckpoints, ModelSpecFilesMustBeRegularAndBounded) {
  const std::string fifo = path("fifo.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test::expect_error([&] { nn::model_from_spec_file(fifo); }, NNP_IO_ERROR, {"model spec", "is a FIFO"});
  test::expect_error([&] { nn::model_from_spec_file(dir_.string()); }, NNP_IO_ERROR, {"is a directory"});
  // 17 MB of holes: refused by its size, before a byte is read.
  const std::string big = path("big.json");
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, 17u << 20);
  test::expect_error([&] { nn::model_from_spec_file(big); }, NNP_INVALID_ARGUMENT, {"more than the limit"});
}
