// Files from strangers are opened only if they are regular files, and read
// only through checked reads: a FIFO named like a checkpoint would block
// forever, a directory reads as an error nobody looked at, and a short read
// must never leave part of a buffer uninitialised.
#pragma once

#include <cstdint>
#include <string>

namespace nnp::core::io {

class RegularFile {
 public:
  // Opens path for reading (without blocking on a FIFO) and refuses anything
  // but a regular file with NNP_IO_ERROR, "<what> <path>: is a directory" and
  // the like. `what` names the file for the user ("load", "model spec").
  RegularFile(const std::string& path, std::string what);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }
  // Exactly `bytes` bytes at `offset`, or NNP_IO_ERROR naming the file (a
  // file that shrank under us reads short).
  void read_at(uint64_t offset, void* out, uint64_t bytes) const;
  // The whole file, refused past max_bytes with NNP_INVALID_ARGUMENT
  // ("<what> <path>: N bytes, more than the limit of M") before reading.
  std::string read_all(uint64_t max_bytes) const;

 private:
  std::string path_, what_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace nnp::core::io
