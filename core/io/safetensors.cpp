#include "safetensors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <nnp/detail/printable.hpp>
#include <set>
#include <vector>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "atomic_file.hpp"
#include "regular_file.hpp"
#include "strict_json.hpp"

namespace nnp::core::io {
namespace {

using json = nlohmann::json;
using nnp::detail::printable;

struct DtypeName {
  nnp_dtype dtype;
  const char* name;
};
constexpr DtypeName kDtypes[] = {{NNP_F32, "F32"}, {NNP_F64, "F64"}, {NNP_F16, "F16"}, {NNP_BF16, "BF16"},
                                 {NNP_I64, "I64"}, {NNP_I32, "I32"}, {NNP_U8, "U8"},   {NNP_BOOL, "BOOL"},
                                 {NNP_I8, "I8"},   {NNP_I16, "I16"}, {NNP_U16, "U16"}, {NNP_U32, "U32"},
                                 {NNP_U64, "U64"}};

nnp_dtype dtype_from_name(const std::string& path, const std::string& key, const std::string& name) {
  for (const DtypeName& d : kDtypes)
    if (name == d.name) return d.dtype;
  fail(NNP_CORRUPT_DATA, path, ": tensor '", key, "' has dtype \"", name,
       "\", which nnplug does not support (F32, F64, F16, BF16, I64, I32, U8, BOOL)");
}

[[noreturn]] void safetensors_corrupt(const std::string& path, const std::string& what) {
  fail(NNP_CORRUPT_DATA, path, ": not a valid safetensors file: ", what, "; the file is left as it is");
}

// A header is an object of objects: 8 levels is far more than any writer needs.
constexpr size_t kMaxHeaderDepth = 8;

// Parses the header in linear time, refusing a name given twice (the JSON
// library would keep the last one silently) and keys no writer produces.
json parse_header(const std::string& path, const std::string& text) {
  json header = parse_strict_json(text, kMaxHeaderDepth,
                                  [&](const std::string& what) { safetensors_corrupt(path, "the header " + what); });
  if (!header.is_object()) safetensors_corrupt(path, "the header is not a JSON object");
  for (auto it = header.begin(); it != header.end(); ++it)
    if (it.key().find('\0') != std::string::npos) safetensors_corrupt(path, "a tensor name contains a NUL character");
  return header;
}

struct Entry {
  std::string name;
  nnp_dtype dtype;
  Dims shape;
  uint64_t begin, end;
};

uint64_t read_u64_le(const unsigned char* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

}  // namespace

const char* safetensors_dtype(nnp_dtype dtype) {
  for (const DtypeName& d : kDtypes)
    if (d.dtype == dtype) return d.name;
  return nullptr;
}

void save_safetensors(const nnp_list& tensors, const std::string& path, const Metadata& metadata) {
  // Larger alignments first, then by name, as the reference writer orders them.
  std::vector<const nnp_list::Entry*> order;
  std::set<std::string> names;
  for (const auto& e : tensors.entries) {
    if (!e.tensor) fail(NNP_INVALID_ARGUMENT, "save: entry '", e.name, "' holds no tensor");
    if (!names.insert(e.name).second) fail(NNP_INVALID_ARGUMENT, "save: the name '", e.name, "' appears twice");
    if (e.name == "__metadata__") fail(NNP_INVALID_ARGUMENT, "save: '__metadata__' is reserved by the format");
    order.push_back(&e);
  }
  std::stable_sort(order.begin(), order.end(), [](const nnp_list::Entry* a, const nnp_list::Entry* b) {
    size_t sa = dtype_size(a->tensor->dtype), sb = dtype_size(b->tensor->dtype);
    return sa != sb ? sa > sb : a->name < b->name;
  });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const nnp_list::Entry* e : order) {
    const Tensor& t = *e->tensor;
    uint64_t bytes = static_cast<uint64_t>(t.numel) * dtype_size(t.dtype);
    header[e->name] = {{"dtype", safetensors_dtype(t.dtype)},
                       {"shape", std::vector<int64_t>(t.shape.d, t.shape.d + t.shape.ndim)},
                       {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the reference pads to 8 bytes

  write_atomically(path, [&](std::FILE* file) {
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(static_cast<uint64_t>(text.size()) >> (8 * i));
    bool ok = std::fwrite(length, 1, 8, file) == 8;
    ok = ok && std::fwrite(text.data(), 1, text.size(), file) == text.size();
    std::vector<unsigned char> buffer;
    for (const nnp_list::Entry* e : order) {
      const Tensor& t = *e->tensor;
      buffer.resize(static_cast<size_t>(t.numel) * dtype_size(t.dtype));
      copy_to_host(t, buffer.data(), buffer.size());
      ok = ok && std::fwrite(buffer.data(), 1, buffer.size(), file) == buffer.size();
    }
    return ok;
  });
}

namespace {

// A checked header: every tensor's place in the data, in offset order, and
// the metadata. Reading it touches only the first 8 + header_size bytes.
struct Header {
  uint64_t header_size = 0;
  std::vector<Entry> entries;
  Metadata metadata;
};

// The __metadata__ object, every value a string.
Metadata metadata_of(const json& header, const std::string& path) {
  Metadata metadata;
  auto it = header.find("__metadata__");
  if (it == header.end()) return metadata;
  if (!it->is_object()) safetensors_corrupt(path, "__metadata__ is not an object of strings");
  for (auto m = it->begin(); m != it->end(); ++m) {
    if (!m.value().is_string()) safetensors_corrupt(path, "__metadata__ value '" + m.key() + "' is not a string");
    metadata[m.key()] = m.value().get<std::string>();
  }
  return metadata;
}

Header read_header(const RegularFile& file, const std::string& path) {
  const uint64_t file_size = file.size();
  if (file_size < 8)
    safetensors_corrupt(path, "it is " + std::to_string(file_size) + " bytes, shorter than the 8-byte length");
  unsigned char length[8];
  file.read_at(0, length, 8);
  const uint64_t header_size = read_u64_le(length);
  if (header_size > kMaxHeaderSize)
    safetensors_corrupt(path, "the header claims " + std::to_string(header_size) + " bytes, more than the limit of " +
                                  std::to_string(kMaxHeaderSize));
  if (header_size > file_size - 8)
    safetensors_corrupt(path, "the header claims " + std::to_string(header_size) + " bytes but the file holds only " +
                                  std::to_string(file_size - 8) + " after the length");
  std::string text(static_cast<size_t>(header_size), '\0');
  file.read_at(8, text.data(), header_size);
  if (text.empty() || text[0] != '{') safetensors_corrupt(path, "the header does not start with '{'");
  const json header = parse_header(path, text);
  const uint64_t data_size = file_size - 8 - header_size;
  Header parsed;
  parsed.header_size = header_size;
  parsed.metadata = metadata_of(header, path);
  std::vector<Entry>& entries = parsed.entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& key = it.key();
    const json& value = it.value();
    if (key == "__metadata__") continue;
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets") ||
        !value["dtype"].is_string() || !value["shape"].is_array() || !value["data_offsets"].is_array() ||
        value["data_offsets"].size() != 2)
      safetensors_corrupt(
          path, "tensor '" + key + "' needs \"dtype\" (string), \"shape\" (array) and \"data_offsets\" (two numbers)");
    Entry e;
    e.name = key;
    e.dtype = dtype_from_name(path, key, value["dtype"].get<std::string>());
    const json& shape = value["shape"];
    if (shape.size() > NNP_MAX_DIMS) safetensors_corrupt(path, "tensor '" + key + "' has more than 8 dimensions");
    e.shape.ndim = static_cast<int32_t>(shape.size());
    uint64_t nonzero_product = 1;  // the strides are products of sizes: they must fit int64 too
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!shape[i].is_number_integer())
        safetensors_corrupt(path, "tensor '" + key + "' has a shape entry that is not a size");
      if (!shape[i].is_number_unsigned()) safetensors_corrupt(path, "tensor '" + key + "' has a negative shape entry");
      const uint64_t size = shape[i].get<uint64_t>();
      if (size > static_cast<uint64_t>(INT64_MAX) ||
          (size != 0 && nonzero_product > static_cast<uint64_t>(INT64_MAX) / size))
        safetensors_corrupt(path, "tensor '" + key + "' has a shape too large for 64-bit sizes");
      if (size != 0) nonzero_product *= size;
      e.shape.d[i] = static_cast<int64_t>(size);
    }
    const json& offsets = value["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      safetensors_corrupt(path, "tensor '" + key + "' has data_offsets that are not byte positions");
    e.begin = offsets[0].get<uint64_t>();
    e.end = offsets[1].get<uint64_t>();
    if (e.end < e.begin) safetensors_corrupt(path, "tensor '" + key + "' ends before it begins");
    if (e.end > data_size)
      safetensors_corrupt(path, "tensor '" + key + "' ends at byte " + std::to_string(e.end) + ", past the data (" +
                                    std::to_string(data_size) + " bytes)");
    uint64_t expected = static_cast<uint64_t>(dtype_size(e.dtype));
    for (int32_t i = 0; i < e.shape.ndim; ++i) {
      uint64_t size = static_cast<uint64_t>(e.shape.d[i]);
      if (size != 0 && expected > UINT64_MAX / size)
        safetensors_corrupt(path, "tensor '" + key + "' has an impossibly large shape");
      expected *= size;
    }
    if (e.end - e.begin != expected)
      safetensors_corrupt(path, "tensor '" + key + "' holds " + std::to_string(e.end - e.begin) + " bytes but shape " +
                                    format_dims(e.shape) + " of " + safetensors_dtype(e.dtype) + " needs " +
                                    std::to_string(expected));
    entries.push_back(std::move(e));
  }
  // The tensors must tile the data exactly: contiguous, no overlap, nothing after.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t position = 0;
  for (const Entry& e : entries) {
    if (e.begin != position)
      safetensors_corrupt(path, e.begin < position ? "tensor '" + e.name + "' overlaps the one before it"
                                                   : "there is a gap before tensor '" + e.name + "'");
    position = e.end;
  }
  if (position != data_size)
    safetensors_corrupt(
        path, std::to_string(data_size - position) + " bytes follow the last tensor (no trailing bytes allowed)");
  return parsed;
}

}  // namespace

void load_safetensors(const std::string& path, nnp_device device, nnp_list& out, Metadata* metadata) {
  RegularFile file(path, "load");
  Header header = read_header(file, path);
  if (metadata) *metadata = header.metadata;
  std::vector<unsigned char> buffer;
  for (const Entry& e : header.entries) {
    auto what = [&] {
      return "load " + path + ": tensor '" + printable(e.name) + "' (" + format_dims(e.shape) + " " +
             dtype_name(e.dtype) + ", " + std::to_string(e.end - e.begin) + " bytes)";
    };
    making(what, [&] { buffer.resize(static_cast<size_t>(e.end - e.begin)); });
    file.read_at(8 + header.header_size + e.begin, buffer.data(), buffer.size());
    out.add(e.name, making(what, [&] {
              return from_host(buffer.empty() ? nullptr : buffer.data(), e.shape, e.dtype, device);
            }));
  }
}

Metadata read_safetensors_metadata(const std::string& path) {
  RegularFile file(path, "load");
  return read_header(file, path).metadata;
}

}  // namespace nnp::core::io
