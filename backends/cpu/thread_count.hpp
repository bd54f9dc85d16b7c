// How many threads the cpu backend uses, decided once: NNP_CPU_THREADS when
// set (an integer from 1 to 1024, validated), else the number of CPUs this
// process may run on (its affinity mask: taskset and cgroup cpusets are
// respected, not every CPU of the machine). OpenBLAS is given the same count,
// so its threads and the pool's do not oversubscribe the CPUs.
#pragma once

#include <string>

namespace nnp::cpu {

struct ThreadCount {
  int threads = 1;
  std::string error;   // set when NNP_CPU_THREADS is not a valid count
  std::string source;  // "NNP_CPU_THREADS" or "the N CPUs this process may use"
};

const ThreadCount& thread_count();

// Tells OpenBLAS (when it is the BLAS loaded) to use thread_count() threads.
void set_blas_threads(int threads);

}  // namespace nnp::cpu
