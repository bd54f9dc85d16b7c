#include "atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "../error.hpp"

namespace nnp::core::io {

void write_atomically(const std::string& path, const std::function<bool(std::FILE*)>& write) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) fail(NNP_IO_ERROR, "save: cannot create ", temporary, " (", std::strerror(errno), ")");
  bool ok = true;
  try {
    ok = write(file);
  } catch (...) {
    std::fclose(file);
    std::remove(temporary.c_str());
    throw;
  }
  ok = ok && std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    fail(NNP_IO_ERROR, "save: writing ", path, " failed (", reason, "); any previous file is unchanged");
  }
  // The rename itself reaches the disk only with its folder: sync that too,
  // so a power cut after save returns finds the new file, not the old one.
  std::string folder = std::filesystem::path(path).parent_path().string();
  int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace nnp::core::io
