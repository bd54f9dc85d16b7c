#include "npy.hpp"

#include <algorithm>
#include <cstring>
#include <nnp/detail/printable.hpp>
#include <string_view>
#include <vector>

#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "atomic_file.hpp"
#include "regular_file.hpp"

namespace nnp::core::io {

namespace {

using nnp::detail::printable;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct NpyDescr {
  const char* text;  // as numpy writes it
  nnp_dtype dtype;
};
constexpr NpyDescr kNpyDescrs[] = {{"<f4", NNP_F32}, {"<f8", NNP_F64}, {"<f2", NNP_F16}, {"<i8", NNP_I64},
                                   {"<i4", NNP_I32}, {"<i2", NNP_I16}, {"|i1", NNP_I8},  {"|u1", NNP_U8},
                                   {"<u2", NNP_U16}, {"<u4", NNP_U32}, {"<u8", NNP_U64}, {"|b1", NNP_BOOL}};

// The header's dict, read in one pass over its text.
struct NpyHeader {
  nnp_dtype dtype = -1;
  bool fortran_order = false;
  Dims shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    skip_spaces();
    expect('{');
    for (;;) {
      skip_spaces();
      if (peek() == '}') break;
      const std::string key = quoted();
      skip_spaces();
      expect(':');
      skip_spaces();
      if (key == "descr") {
        once(h.has_descr, key);
        h.dtype = descr(quoted());
      } else if (key == "fortran_order") {
        once(h.has_order, key);
        h.fortran_order = boolean();
      } else if (key == "shape") {
        once(h.has_shape, key);
        h.shape = shape();
      } else {
        bad("has a key '" + printable(key, 40) + "' that is not descr, fortran_order or shape");
      }
      skip_spaces();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != '}') bad("has no ',' or '}' after the value of '" + key + "'");
    }
    ++at_;
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) ++at_;
    if (at_ != text_.size()) bad("has text after its '}'");
    if (!h.has_descr || !h.has_order || !h.has_shape) bad("lacks one of descr, fortran_order and shape");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    fail(NNP_INVALID_ARGUMENT, "load_npy ", printable(path_), ": the header ", why,
         " (save the array again with numpy.save)");
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip_spaces() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  void expect(char c) {
    if (peek() != c) bad(std::string("has no '") + c + "' where one belongs");
    ++at_;
  }
  void once(bool& seen, const std::string& key) {
    if (seen) bad("names '" + key + "' twice");
    seen = true;
  }
  std::string quoted() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("has a key or value that is not a quoted string");
    const size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos || end - at_ > 64) bad("has an unterminated or overlong string");
    std::string out(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return out;
  }
  bool boolean() {
    for (const char* word : {"True", "False"})
      if (text_.substr(at_, std::strlen(word)) == word) {
        at_ += std::strlen(word);
        return word[0] == 'T';
      }
    bad("has a fortran_order that is not True or False");
  }
  nnp_dtype descr(const std::string& text) const {
    std::string normal = text;
    // '=' is the machine's order (little-endian wherever nnplug runs); one
    // byte has no order, which numpy writes as '|' and some writers as '<'.
    if (normal.size() == 3 && normal[0] == '=') normal[0] = '<';
    if (normal.size() == 3 && normal[2] == '1' && normal[0] == '<') normal[0] = '|';
    for (const NpyDescr& d : kNpyDescrs)
      if (normal == d.text) return d.dtype;
    if (!text.empty() && text[0] == '>')
      fail(NNP_INVALID_ARGUMENT, "load_npy ", printable(path_), ": the array is big-endian ('", printable(text, 20),
           "'); save it little-endian (array.astype('<", printable(text.substr(1), 10), "'))");
    fail(NNP_INVALID_ARGUMENT, "load_npy ", printable(path_), ": dtype '", printable(text, 20),
         "' is not one nnplug holds (f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8, b1; bf16 has no numpy dtype)");
  }
  Dims shape() {
    Dims dims;
    expect('(');
    for (;;) {
      skip_spaces();
      if (peek() == ')') break;
      if (dims.ndim >= NNP_MAX_DIMS) bad("has a shape of more than " + std::to_string(NNP_MAX_DIMS) + " dimensions");
      int64_t value = 0;
      const size_t start = at_;
      while (peek() >= '0' && peek() <= '9') {
        if (value > (INT64_MAX - 9) / 10) bad("has a dimension too large to hold");
        value = value * 10 + (text_[at_++] - '0');
      }
      if (at_ == start) bad("has a shape that is not a tuple of non-negative integers");
      if (peek() == 'L') ++at_;  // Python 2's long
      dims.d[dims.ndim++] = value;
      skip_spaces();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != ')') bad("has a shape that is not a tuple of non-negative integers");
    }
    ++at_;
    return dims;
  }

  std::string_view text_;
  const std::string& path_;
  size_t at_ = 0;
};

uint64_t read_le(const unsigned char* bytes, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | bytes[i];
  return v;
}

const char* descr_of(nnp_dtype dtype) {
  for (const NpyDescr& d : kNpyDescrs)
    if (d.dtype == dtype) return d.text;
  return nullptr;
}

}  // namespace

TensorRef load_npy(const std::string& path, nnp_device device) {
  RegularFile file(path, "load_npy");
  auto refuse = [&](const std::string& why) { fail(NNP_INVALID_ARGUMENT, "load_npy ", printable(path), ": ", why); };
  unsigned char prefix[12];
  if (file.size() < 10) refuse("too short for a .npy file (" + std::to_string(file.size()) + " bytes)");
  file.read_at(0, prefix, 10);
  if (std::memcmp(prefix, kMagic, kMagicSize) != 0) refuse("not a .npy file (no \\x93NUMPY at its start)");
  const int major = prefix[6];
  if (major < 1 || major > 3)
    refuse("format version " + std::to_string(major) + "." + std::to_string(prefix[7]) +
           " is not one of 1.0 to 3.0 (numpy.save writes those)");
  uint64_t header_size = read_le(prefix + 8, 2), offset = 10;
  if (major > 1) {
    if (file.size() < 12) refuse("too short for its version's header length");
    file.read_at(10, prefix + 10, 2);
    header_size = read_le(prefix + 8, 4);
    offset = 12;
  }
  if (header_size > kMaxNpyHeader)
    refuse("a header of " + std::to_string(header_size) + " bytes, more than the limit of " +
           std::to_string(kMaxNpyHeader));
  if (header_size > file.size() - offset) refuse("the header runs past the end of the file");
  std::string text(static_cast<size_t>(header_size), '\0');
  file.read_at(offset, text.data(), header_size);
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 ? c != '\n' : static_cast<unsigned char>(c) > 0x7e)
      refuse("the header holds a byte that is not printable ASCII");
  if (text.empty() || text.back() != '\n') refuse("the header does not end with a newline");
  const NpyHeader h = HeaderParser(text, path).parse();
  offset += header_size;
  uint64_t numel = 1;
  for (int32_t i = 0; i < h.shape.ndim; ++i) {
    const uint64_t d = static_cast<uint64_t>(h.shape.d[i]);
    if (d != 0 && numel > (uint64_t{1} << 62) / d) refuse("a shape whose element count overflows");
    numel *= d;
  }
  const uint64_t item = dtype_size(h.dtype);
  if (numel > (uint64_t{1} << 62) / item) refuse("a shape whose byte count overflows");
  const uint64_t bytes = numel * item;
  if (file.size() - offset != bytes)
    refuse("the header says " + std::to_string(bytes) + " bytes of data, the file holds " +
           std::to_string(file.size() - offset));
  std::vector<unsigned char> data(static_cast<size_t>(bytes));
  if (bytes > 0) file.read_at(offset, data.data(), bytes);
  if (h.dtype == NNP_BOOL)
    for (unsigned char& b : data)
      if (b > 1) refuse("a bool array holds a byte other than 0 and 1");
  if (!h.fortran_order) return from_host(data.empty() ? nullptr : data.data(), h.shape, h.dtype, device);
  // Fortran order: the bytes are the transpose's in C order.
  Dims reversed = h.shape;
  int32_t perm[NNP_MAX_DIMS];
  for (int32_t i = 0; i < h.shape.ndim; ++i) {
    reversed.d[i] = h.shape.d[h.shape.ndim - 1 - i];
    perm[i] = h.shape.ndim - 1 - i;
  }
  TensorRef transposed = from_host(data.empty() ? nullptr : data.data(), reversed, h.dtype, parse_device("cpu"));
  TensorRef ordered = contiguous(*permute(*transposed, perm, h.shape.ndim));
  return to(*ordered, device, h.dtype);
}

void save_npy(const Tensor& t, const std::string& path) {
  const char* descr = descr_of(t.dtype);
  if (!descr)
    fail(NNP_DTYPE_MISMATCH, "save_npy ", printable(path), ": ", dtype_name(t.dtype),
         " has no numpy dtype; convert it first (to f32)");
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  for (int32_t i = 0; i < t.shape.ndim; ++i)
    header += std::to_string(t.shape.d[i]) + (t.shape.ndim == 1 ? "," : (i + 1 < t.shape.ndim ? ", " : ""));
  header += "), }";
  // As numpy.save: room for the first dimension to grow to 21 digits (so
  // that a header can be rewritten in place), then spaces and a newline to
  // a multiple of 64 bytes with the magic, version and length, so that the
  // data starts aligned.
  if (t.shape.ndim > 0) header.append(21 - std::min<size_t>(21, std::to_string(t.shape.d[0]).size()), ' ');
  const bool wide = header.size() + 1 + 10 > 65535;
  const size_t prefix = wide ? 12 : 10;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<unsigned char> data(static_cast<size_t>(t.numel) * dtype_size(t.dtype));
  copy_to_host(t, data.data(), data.size());
  write_atomically(path, [&](std::FILE* file) {
    unsigned char head[12];
    std::memcpy(head, kMagic, kMagicSize);
    head[6] = wide ? 2 : 1;
    head[7] = 0;
    for (size_t i = 0; i < prefix - 8; ++i) head[8 + i] = static_cast<unsigned char>(header.size() >> (8 * i));
    bool ok = std::fwrite(head, 1, prefix, file) == prefix;
    ok = ok && std::fwrite(header.data(), 1, header.size(), file) == header.size();
    return ok && std::fwrite(data.data(), 1, data.size(), file) == data.size();
  });
}

}  // namespace nnp::core::io
