// One rank of a launched job (nnplug launch sets its environment): joins
// the default group over gloo and all-reduces its rank + 1.
//   collective_rank sum            every rank prints the sum
//   collective_rank die TIMEOUT    rank 1 leaves abruptly after joining
//   collective_rank stall TIMEOUT  rank 1 stops answering after joining
//   collective_rank slow TIMEOUT   rank 0 waits 2 s after joining, then sums
// The others then fail within TIMEOUT ms and exit 1 with the error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nnp/distributed.hpp>
#include <nnp/nnp.hpp>
#include <string>
#include <thread>

int main(int argc, char** argv) try {
  namespace dist = nnp::distributed;
  const std::string mode = argc > 1 ? argv[1] : "sum";
  dist::ProcessGroupOptions options;
  options.timeout = std::chrono::milliseconds(argc > 2 ? std::atoi(argv[2]) : 60000);
  dist::init_process_group("gloo", options);
  const int rank = dist::get_rank();
  if (rank == 1 && mode == "die") std::_Exit(9);
  if (rank == 1 && mode == "stall") std::this_thread::sleep_for(std::chrono::hours(1));
  if (rank == 0 && mode == "slow") std::this_thread::sleep_for(std::chrono::seconds(2));
  nnp::Tensor t = nnp::full({1000}, static_cast<double>(rank + 1));
  dist::all_reduce(t);
  std::printf("rank %d of %d: sum %g\n", rank, dist::get_world_size(), t.to_vector<float>()[999]);
  dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "collective_rank: %s\n", e.what());
  return 1;
}
