#include "thread_count.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace nnp::cpu {
namespace {

constexpr long kMaxThreads = 1024;

int cpus_this_process_may_use() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned all = std::thread::hardware_concurrency();
  return all > 0 ? static_cast<int>(all) : 1;
}

ThreadCount decide() {
  ThreadCount count;
  const int available = cpus_this_process_may_use();
  count.threads = available;
  count.source = "the " + std::to_string(available) + (available == 1 ? " CPU" : " CPUs") + " this process may use";
  const char* env = std::getenv("NNP_CPU_THREADS");
  if (env == nullptr) return count;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(env, &end, 10);
  if (*env < '0' || *env > '9' || *end != '\0' || errno == ERANGE || value < 1 || value > kMaxThreads) {
    count.error = "NNP_CPU_THREADS='" + std::string(env).substr(0, 40) +
                  "' is not a thread count: give an integer from 1 to 1024, or unset it to use the " +
                  std::to_string(available) + " CPUs this process may use";
    return count;
  }
  count.threads = static_cast<int>(value);
  count.source = "NNP_CPU_THREADS";
  return count;
}

}  // namespace

const ThreadCount& thread_count() {
  static const ThreadCount count = decide();
  return count;
}

void set_blas_threads(int threads) {
  // Looked up rather than linked: the BLAS may be one without threads.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

}  // namespace nnp::cpu
