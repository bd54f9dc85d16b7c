// The safetensors format (https://github.com/huggingface/safetensors):
// 8 bytes little-endian header length N, N bytes of JSON header, then the
// tensor bytes. The reader enforces the reference implementation's checks;
// the writer is atomic (temporary file, flush, fsync, rename).
#pragma once

#include <map>
#include <string>

#include "../nn/named_list.hpp"

namespace nnp::core::io {

using Metadata = std::map<std::string, std::string>;

// The largest header the reference implementation accepts.
constexpr uint64_t kMaxHeaderSize = 100'000'000;

void save_safetensors(const nnp_list& tensors, const std::string& path, const Metadata& metadata);
// Tensors in file order of their offsets, on `device`; fills metadata if given.
void load_safetensors(const std::string& path, nnp_device device, nnp_list& out, Metadata* metadata);

// The __metadata__ of a file, checking its header (in O(n log n) for n
// entries) but reading no tensor data: what a program checks first.
Metadata read_safetensors_metadata(const std::string& path);

// "F32" ... "BOOL": PyTorch's safetensors dtype names.
const char* safetensors_dtype(nnp_dtype dtype);

}  // namespace nnp::core::io
