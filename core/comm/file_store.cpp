#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "../error.hpp"
#include "store.hpp"

namespace nnp::core::comm {
namespace {

namespace fs = std::filesystem;

std::string hex(const std::string& key) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(key.size() * 2);
  for (unsigned char c : key) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

class FileStore : public Store {
 public:
  explicit FileStore(fs::path folder) : folder_(std::move(folder)) {
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (!fs::is_directory(folder_))
      fail(NNP_IO_ERROR, describe(), ": cannot make the folder (", ec ? ec.message() : "not a folder",
           "); give init_method a folder every rank can write");
  }

  void set(const std::string& key, const std::vector<char>& value) override {
    if (key.size() > 100)  // two hex digits a byte: file names stay under 255 bytes
      fail(NNP_INVALID_ARGUMENT, describe(), ": key of ", key.size(), " bytes is longer than 100");
    if (value.size() > kMaxStoreValue)
      fail(NNP_INVALID_ARGUMENT, describe(), ": value of ", value.size(), " bytes for key '", key, "' exceeds ",
           kMaxStoreValue);
    const fs::path target = folder_ / hex(key);
    const fs::path temporary = folder_ / (".tmp." + std::to_string(::getpid()) + "." + std::to_string(nonce()));
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) fail(NNP_IO_ERROR, describe(), ": cannot write key '", key, "': ", std::strerror(errno));
    size_t written = 0;
    while (written < value.size()) {
      const ssize_t n = ::write(fd, value.data() + written, value.size() - written);
      if (n <= 0) {
        const int error = errno;
        ::close(fd);
        ::unlink(temporary.c_str());
        fail(NNP_IO_ERROR, describe(), ": cannot write key '", key, "': ", std::strerror(error));
      }
      written += static_cast<size_t>(n);
    }
    ::close(fd);
    if (::rename(temporary.c_str(), target.c_str()) != 0) {
      const int error = errno;
      ::unlink(temporary.c_str());
      fail(NNP_IO_ERROR, describe(), ": cannot write key '", key, "': ", std::strerror(error));
    }
  }

  std::vector<char> get(const std::string& key, int64_t timeout_ms) override {
    const fs::path path = folder_ / hex(key);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    auto pause = std::chrono::microseconds(200);
    for (;;) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd >= 0) return read_value(fd, key);
      if (errno != ENOENT) fail(NNP_IO_ERROR, describe(), ": cannot read key '", key, "': ", std::strerror(errno));
      if (std::chrono::steady_clock::now() >= deadline)
        fail(NNP_TIMEOUT, describe(), ": key '", key, "' did not appear within ", timeout_ms,
             " ms (the rank that writes it has not come, or uses another folder)");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
  }

  std::string describe() const override { return "file store " + folder_.string(); }
  bool may_hold_earlier_runs() const override { return true; }

  // Each rank marks that it left, then looks for every mark: the last to
  // mark sees them all (two that finish together may both delete).
  void leave(const std::string& prefix, int32_t rank, int32_t size) override {
    try {
      set(prefix + "left/" + std::to_string(rank), {});
    } catch (const Error&) {
      return;  // the folder is gone or read-only: nothing to clean
    }
    std::error_code ec;
    for (int32_t r = 0; r < size; ++r)
      if (!fs::exists(folder_ / hex(prefix + "left/" + std::to_string(r)), ec)) return;
    const std::string head = hex(prefix);
    for (fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().compare(0, head.size(), head) == 0) fs::remove(it->path(), ec);
  }

 private:
  std::vector<char> read_value(int fd, const std::string& key) {
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || static_cast<uint64_t>(info.st_size) > kMaxStoreValue) {
      ::close(fd);
      fail(NNP_CORRUPT_DATA, describe(), ": key '", key, "' is not a regular file of at most ", kMaxStoreValue,
           " bytes");
    }
    std::vector<char> value(static_cast<size_t>(info.st_size));
    size_t got = 0;
    while (got < value.size()) {
      const ssize_t n = ::read(fd, value.data() + got, value.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
    value.resize(got);
    return value;
  }

  static uint64_t nonce() {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return engine();
  }

  fs::path folder_;
};

}  // namespace

std::unique_ptr<Store> open_file_store(const std::string& folder) {
  if (folder.empty()) fail(NNP_INVALID_ARGUMENT, "file store: init_method 'file://' names no folder");
  return std::make_unique<FileStore>(folder);
}

}  // namespace nnp::core::comm
