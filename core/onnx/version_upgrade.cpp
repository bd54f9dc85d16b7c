#include "version_upgrade.hpp"

#include <fcntl.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace nnp::core::onnx {

namespace {

// The child's answer on the pipe: one status byte ('O': a model follows,
// 'E': the converter's message follows), the payload's length (8 bytes),
// the payload. A length lets the parent tell a whole answer from a child
// that died while writing, even where SIGCHLD is ignored and its exit
// status is lost.
constexpr char kConverted = 'O', kRefused = 'E';

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void run_child(int fd, const ::onnx::ModelProto& model, int opset) {
  // The child dies of what goes wrong, rather than running the host's or a
  // sanitizer's handlers for it.
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
  char status = kConverted;
  std::string payload;
  try {
    ::onnx::ModelProto inferred = model;
    try {
      ::onnx::shape_inference::InferShapes(inferred);
    } catch (const std::exception&) {
      inferred = model;  // converted without the shapes it could not infer
    }
    ::onnx::version_conversion::ConvertVersion(inferred, opset).SerializeToString(&payload);
  } catch (const std::exception& e) {
    status = kRefused;
    payload = e.what();
  }
  const uint64_t size = payload.size();
  const bool ok =
      write_all(fd, &status, 1) && write_all(fd, &size, sizeof size) && write_all(fd, payload.data(), payload.size());
  ::_exit(ok ? 0 : 1);  // no atexit handlers: they are the parent's
}

// How long a conversion may take: ample for a model of that size.
std::chrono::milliseconds time_allowed(size_t model_bytes) {
  return std::chrono::milliseconds(30000 + static_cast<int64_t>(model_bytes / (16 << 20)) * 1000);
}

std::string how_it_ended(pid_t pid) {
  int status = 0;
  pid_t waited;
  do waited = ::waitpid(pid, &status, 0);
  while (waited < 0 && errno == EINTR);
  if (waited < 0) return "its process ended";
  if (WIFSIGNALED(status))
    return std::string("its process was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  return "its process exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

UpgradeResult upgrade_in_child(const ::onnx::ModelProto& model, int opset, const std::string& label) {
  UpgradeResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.why = std::string("no pipe to its process: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    result.why = std::string("its process could not start: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], model, opset);
  }
  ::close(fds[1]);
  const size_t model_bytes = model.ByteSizeLong();
  // The answer may be a model a little larger than this one (the converter
  // adds shapes and nodes), never more than this.
  const size_t limit = 9 + 2 * model_bytes + (size_t{1} << 20);
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + time_allowed(model_bytes);
  bool timed_out = false, too_long = false;
  char buffer[1 << 16];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end (done, or dead)
    if (answer.size() + static_cast<size_t>(n) > limit) {
      too_long = true;
      break;
    }
    answer.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out || too_long) ::kill(pid, SIGKILL);
  const std::string ended = how_it_ended(pid);
  uint64_t size = 0;
  if (answer.size() >= 9) std::memcpy(&size, answer.data() + 1, sizeof size);
  const bool whole = answer.size() >= 9 && size == answer.size() - 9;
  if (timed_out) {
    result.why = "it ran longer than " + std::to_string(time_allowed(model_bytes).count() / 1000) + " s on " + label;
  } else if (too_long) {
    result.why = "it answered with more data than a converted " + label + " can hold";
  } else if (!whole) {
    result.why = "it failed on " + label + ": " + ended;
  } else if (answer[0] == kRefused) {
    result.why = answer.substr(9);
  } else if (answer[0] != kConverted || size > static_cast<uint64_t>(INT32_MAX) ||
             !result.model.ParseFromArray(answer.data() + 9, static_cast<int>(size))) {
    result.why = "its answer for " + label + " does not parse";
  } else {
    result.converted = true;
  }
  return result;
}

}  // namespace nnp::core::onnx
