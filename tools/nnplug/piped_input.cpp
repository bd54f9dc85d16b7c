#include "piped_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnplug {
namespace {

// The copies, removed when the process ends normally.
struct Copies {
  std::vector<std::string> paths;
  ~Copies() {
    for (const std::string& path : paths) ::unlink(path.c_str());
  }
};
Copies& copies() {
  static Copies all;
  return all;
}

[[noreturn]] void fail(const std::string& option, const std::string& path, const std::string& what) {
  throw nnp::Error(NNP_IO_ERROR, "--" + option + " " + path + ": " + what);
}

// The extension of path's file name (".gz", ".onnx"), or "".
std::string extension(const std::string& path) {
  const size_t slash = path.rfind('/'), dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || path.size() - dot > 16) return "";
  return path.substr(dot);
}

std::string copy_pipe(const std::string& option, const std::string& path) {
  // O_NONBLOCK: a FIFO no one writes to must not block the open; reads then
  // block (until its writer ends), and one with no writer reads as empty.
  const int in = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (in < 0) fail(option, path, std::string("cannot open the pipe (") + std::strerror(errno) + ")");
  ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) & ~O_NONBLOCK);
  const char* folder = std::getenv("TMPDIR");
  const std::string suffix = "-" + option + extension(path);
  std::string name = std::string(folder && *folder ? folder : "/tmp") + "/nnplug-pipe-XXXXXX" + suffix;
  const int out = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
  if (out < 0) {
    ::close(in);
    fail(option, path, "cannot make a temporary file for the pipe's contents in " + name.substr(0, name.rfind('/')) +
                           " (" + std::strerror(errno) + "); set TMPDIR to a folder with room");
  }
  copies().paths.push_back(name);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(in, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(in), ::close(out);
      fail(option, path, std::string("reading the pipe failed (") + std::strerror(error) + ")");
    }
    if (got == 0) break;
    for (ssize_t written = 0; written < got;) {
      const ssize_t put = ::write(out, buffer + written, static_cast<size_t>(got - written));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) {
        const int error = errno;
        ::close(in), ::close(out);
        fail(option, path, "copying the pipe to " + name + " failed (" + std::strerror(error) + ")");
      }
      written += put;
    }
  }
  ::close(in);
  ::close(out);
  return name;
}

}  // namespace

void copy_piped_inputs(boost::program_options::variables_map& vm) {
  for (const char* option : {"model", "data", "checkpoint", "resume"}) {
    auto found = vm.find(option);
    if (found == vm.end() || found->second.empty() || found->second.defaulted()) continue;
    std::string* path = boost::any_cast<std::string>(&found->second.value());
    struct stat info {};
    if (path == nullptr || ::stat(path->c_str(), &info) != 0 || !S_ISFIFO(info.st_mode)) continue;
    *path = copy_pipe(option, *path);
  }
}

}  // namespace nnplug
