// Writing a file so that a reader sees the old one or the whole new one,
// never a part: a temporary file beside it, flushed and synced, renamed over
// it, and the folder synced so that the rename survives a power cut.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace nnp::core::io {

// write(file) writes the body and returns false where a write failed (or
// throws); then nothing replaces path and NNP_IO_ERROR names it.
void write_atomically(const std::string& path, const std::function<bool(std::FILE*)>& write);

}  // namespace nnp::core::io
