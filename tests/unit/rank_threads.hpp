// Ranks as threads of the test process: each joins a gloo group through a
// fresh file store on loopback, so collectives and what is built on them
// (DistributedDataParallel) are tested without spawning processes.
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <nnp/distributed.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace nnp::test {

inline bool gloo_loaded() {
  for (int32_t i = 0; i < api().comm_count(); ++i) {
    nnp_comm_info info{};
    info.struct_size = sizeof info;
    if (api().comm_info(i, &info) == NNP_OK && std::string(info.name) == "gloo") return true;
  }
  return false;
}

// Skips when the gloo plugin is not built.
class Distributed : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!gloo_loaded()) GTEST_SKIP() << "the gloo communication backend is not built (Debian: libgloo-dev)";
    ::setenv("GLOO_SOCKET_IFNAME", "lo", 1);  // loopback: nothing leaves this machine
  }

  // Each group of ranks meets in a fresh folder: a folder's keys are one run's.
  nnp::distributed::ProcessGroupOptions options(int rank, int world,
                                                std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) {
    nnp::distributed::ProcessGroupOptions o;
    o.rank = rank;
    o.world_size = world;
    o.init_method = "file://" + (dir_ / ("store" + std::to_string(run_))).string();
    o.timeout = timeout;
    return o;
  }

  // Runs body(group, rank) on `world` threads, one rank each; a rank's
  // exception fails the test naming it.
  void run_ranks(int world, const std::function<void(nnp::distributed::ProcessGroup&, int)>& body) {
    ++run_;
    std::vector<std::string> failures(static_cast<size_t>(world));
    std::vector<std::thread> ranks;
    for (int r = 0; r < world; ++r)
      ranks.emplace_back([&, r] {
        try {
          nnp::distributed::ProcessGroup group("gloo", options(r, world));
          body(group, r);
        } catch (const std::exception& e) {
          failures[static_cast<size_t>(r)] = e.what();
        }
      });
    for (std::thread& t : ranks) t.join();
    for (int r = 0; r < world; ++r) EXPECT_EQ(failures[static_cast<size_t>(r)], "") << "rank " << r;
  }
  int run_ = 0;
};

}  // namespace nnp::test
