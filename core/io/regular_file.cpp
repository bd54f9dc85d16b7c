#include "regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../error.hpp"

namespace nnp::core::io {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  return "is not a regular file";
}

}  // namespace

RegularFile::RegularFile(const std::string& path, std::string what) : path_(path), what_(std::move(what)) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) fail(NNP_IO_ERROR, what_, ": cannot open ", path, " (", std::strerror(errno), ")");
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    fail(NNP_IO_ERROR, what_, ": cannot read ", path, " (", std::strerror(error), ")");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    fail(NNP_IO_ERROR, what_, ": ", path, " ", kind_of(info.st_mode), "; give the path of a regular file");
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(uint64_t offset, void* out, uint64_t bytes) const {
  char* at = static_cast<char*>(out);
  while (bytes > 0) {
    const size_t chunk = bytes > (uint64_t{1} << 30) ? size_t{1} << 30 : static_cast<size_t>(bytes);
    const ssize_t got = ::pread(fd_, at, chunk, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(NNP_IO_ERROR, what_, ": reading ", path_, " failed (", std::strerror(errno), ")");
    if (got == 0)
      fail(NNP_IO_ERROR, what_, ": ", path_, " ended ", bytes, " bytes early (was it changed while being read?)");
    at += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
}

std::string RegularFile::read_all(uint64_t max_bytes) const {
  if (size_ > max_bytes)
    fail(NNP_INVALID_ARGUMENT, what_, " ", path_, ": ", size_, " bytes, more than the limit of ", max_bytes);
  std::string text(static_cast<size_t>(size_), '\0');
  read_at(0, text.data(), size_);
  return text;
}

}  // namespace nnp::core::io
