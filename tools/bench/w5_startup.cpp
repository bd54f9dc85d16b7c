// W5 (docs/benchmarks.md, Workloads): start-up cost. Runs `nnplug plugins` as a
// whole process, again and again, and reports the median wall time and the
// median peak resident set of the child (from wait4's rusage), with the
// plugin files the run saw. Every plugin is discovered and loaded; no device
// is initialised.
//   nnp_w5 NNPLUG [RUNS]      (RUNS >= 10; default 21)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Sample {
  double ms;
  double rss_mb;
};

// One `nnplug plugins`, its output thrown away.
bool run_once(const char* nnplug, Sample* out) {
  const auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);  // or the child would print what is still buffered
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) _exit(127);
    execl(nnplug, nnplug, "plugins", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) != child) return false;
  const auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  out->ms = std::chrono::duration<double, std::milli>(end - start).count();
  out->rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KB
  return true;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nnp_w5 NNPLUG [RUNS >= 10]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::atoi(argv[2]) : 21;
  if (runs < 10) {
    std::fprintf(stderr, "nnp_w5: RUNS must be at least 10 (the median of fewer is noise)\n");
    return 2;
  }
  // What the process will discover: the folder beside libnnp (build tree and
  // install tree alike: bin/nnplug, lib/nnplug/plugins).
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(argv[1]).parent_path() / ".." / "lib" / "nnplug" / "plugins";
  std::string present;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) present += " " + entry.path().filename().string();
  std::printf("W5   plugin folder %s:%s\n", folder.lexically_normal().c_str(), present.c_str());
  Sample warm{};
  if (!run_once(argv[1], &warm)) {  // page cache warm, as a user's second run
    std::fprintf(stderr, "nnp_w5: '%s plugins' failed\n", argv[1]);
    return 1;
  }
  std::vector<double> ms, rss;
  for (int i = 0; i < runs; ++i) {
    Sample s{};
    if (!run_once(argv[1], &s)) {
      std::fprintf(stderr, "nnp_w5: '%s plugins' failed\n", argv[1]);
      return 1;
    }
    ms.push_back(s.ms);
    rss.push_back(s.rss_mb);
  }
  std::printf(
      "W5   nnplug plugins, median of %d processes: %.1f ms wall (target <= 30), %.1f MB peak RSS (target <= 30)\n",
      runs, median(ms), median(rss));
  return 0;
}
