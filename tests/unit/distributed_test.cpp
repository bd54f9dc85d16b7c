// Collectives through the gloo communication backend: ranks as threads of
// this process, meeting through a file store (or the TCP store), on
// loopback. Values are checked exactly against what each rank contributed.
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <nnp/distributed.hpp>
#include <thread>

#include "collective_values.hpp"
#include "rank_threads.hpp"
#include "store_client.hpp"

using namespace nnp;
namespace dist = nnp::distributed;
using nnp::test::Distributed;
using nnp::test::expect_error;
using nnp::test::contribution;
using nnp::test::floating;
using nnp::test::kAllDtypes;
using nnp::test::tensor_of;
using nnp::test::values;
using std::chrono::milliseconds;

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

// A port nothing listens on now: bound to 0, read back, closed.
int free_port() {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof address;
  if (::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("no free loopback port");
  ::close(probe);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_F(Distributed, AllReduceEveryDtypeAndOpOnTwoAndFourRanks) {
  for (int world : {2, 4}) {
    const int64_t n = 1001;  // not a multiple of the ranks: Gloo's chunks are uneven
    run_ranks(world, [&](dist::ProcessGroup& g, int rank) {
      EXPECT_EQ(g.rank(), rank);
      EXPECT_EQ(g.size(), world);
      for (Dtype d : kAllDtypes)
        for (dist::ReduceOp op : {dist::ReduceOp::SUM, dist::ReduceOp::MAX, dist::ReduceOp::MIN, dist::ReduceOp::AVG}) {
          if (op == dist::ReduceOp::AVG && !floating(d)) continue;
          Tensor t = tensor_of(contribution(rank, n, d), d);
          g.all_reduce(t, op);
          std::vector<double> want(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) {
            double acc = contribution(0, n, d)[static_cast<size_t>(i)];
            for (int r = 1; r < world; ++r) {
              const double x = contribution(r, n, d)[static_cast<size_t>(i)];
              if (op == dist::ReduceOp::MAX)
                acc = std::max(acc, x);
              else if (op == dist::ReduceOp::MIN)
                acc = std::min(acc, x);
              else
                acc += x;
            }
            if (d == Dtype::boolean && op == dist::ReduceOp::SUM) acc = acc > 0;  // logical or
            if (op == dist::ReduceOp::AVG) acc /= world;
            want[static_cast<size_t>(i)] = acc;
          }
          const std::vector<double> got = values(t);
          const double tolerance = d == Dtype::bf16 ? 0.02 : d == Dtype::f16 ? 0.002 : 0;
          for (int64_t i = 0; i < n; ++i)
            ASSERT_NEAR(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)],
                        tolerance * std::fabs(want[static_cast<size_t>(i)]))
                << dtype_name(d) << " op " << static_cast<int>(op) << " element " << i << " world " << world;
        }
    });
  }
}

TEST_F(Distributed, BroadcastAllGatherReduceScatterEveryDtype) {
  const int world = 3;
  run_ranks(world, [&](dist::ProcessGroup& g, int rank) {
    for (Dtype d : kAllDtypes) {
      const int64_t n = 17;
      Tensor mine = tensor_of(contribution(rank, n, d), d);
      Tensor b = mine.clone();
      g.broadcast(b, 1);
      EXPECT_EQ(values(b), values(tensor_of(contribution(1, n, d), d))) << dtype_name(d);

      Tensor gathered = zeros({world * n}, d);
      g.all_gather(gathered, mine);
      for (int r = 0; r < world; ++r)
        EXPECT_EQ(values(gathered.slice(0, r * n, (r + 1) * n)), values(tensor_of(contribution(r, n, d), d)))
            << dtype_name(d) << " from rank " << r;

      if (d == Dtype::boolean) continue;
      // Rank r's input: world chunks; its output: the sum of everyone's chunk r.
      Tensor whole = tensor_of(contribution(rank, world * n, d), d);
      Tensor share = zeros({n}, d);
      g.reduce_scatter(share, whole, dist::ReduceOp::SUM);
      std::vector<double> want(static_cast<size_t>(n), 0);
      for (int r = 0; r < world; ++r) {
        const std::vector<double> theirs = contribution(r, world * n, d);
        for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] += theirs[static_cast<size_t>(rank * n + i)];
      }
      EXPECT_EQ(values(share), values(tensor_of(want, d))) << dtype_name(d);
    }
    g.barrier();
  });
}

TEST_F(Distributed, AsyncWorkCompletesAndIsWaitedFor) {
  run_ranks(2, [&](dist::ProcessGroup& g, int rank) {
    Tensor a = full({1 << 16}, static_cast<double>(rank + 1));
    Tensor b = full({8}, static_cast<double>(10 * (rank + 1)));
    dist::Work first = g.all_reduce(a, dist::ReduceOp::SUM, true);
    dist::Work second = g.all_reduce(b, dist::ReduceOp::MAX, true);
    second.wait();
    EXPECT_TRUE(first.is_completed());  // run in the order started
    first.wait();
    EXPECT_EQ(a.to_vector<float>()[12345], 3.0f);
    EXPECT_EQ(b.to_vector<float>()[0], 20.0f);
  });
}

// The gradient of a mean loss over the concatenated batch is the average of
// the ranks' gradients over their shards: what data parallel rests on.
TEST_F(Distributed, AveragedShardGradientsEqualTheWholeBatchGradient) {
  for (int world : {2, 4}) {
    manual_seed(7);
    const Tensor x = randn({8 * world, 6}), y = randn({8 * world, 3});
    const std::string spec = R"({"type": "nn.Sequential", "children": [
        {"type": "nn.Linear", "in_features": 6, "out_features": 5}, {"type": "nn.Tanh"},
        {"type": "nn.Linear", "in_features": 5, "out_features": 3}]})";
    nn::ModuleHandle whole = nn::model_from_spec(spec);
    const auto initial = whole.state_dict();
    (whole(x) - y).pow(2).mean().backward();
    std::vector<std::vector<float>> want;
    for (const Tensor& p : whole.parameters()) want.push_back(p.grad().to_vector<float>());

    run_ranks(world, [&](dist::ProcessGroup& g, int rank) {
      nn::ModuleHandle replica = nn::model_from_spec(spec);
      replica.load_state_dict(initial);
      const Tensor xs = x.slice(0, rank * 8, (rank + 1) * 8), ys = y.slice(0, rank * 8, (rank + 1) * 8);
      (replica(xs) - ys).pow(2).mean().backward();
      std::vector<Tensor> params = replica.parameters();
      for (size_t i = 0; i < params.size(); ++i) {
        Tensor grad = params[i].grad();
        g.all_reduce(grad, dist::ReduceOp::AVG);
        const std::vector<float> got = grad.to_vector<float>();
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_NEAR(got[j], want[i][j], 1e-6 * (1 + std::fabs(want[i][j])))
              << "parameter " << i << " world " << world;
      }
    });
  }
}

TEST_F(Distributed, BadArgumentsAreRefusedNamingTheGroup) {
  run_ranks(2, [&](dist::ProcessGroup& g, int) {
    Tensor ints = arange(0, 4, 1, Dtype::i64);
    expect_error([&] { g.all_reduce(ints, dist::ReduceOp::AVG); }, NNP_DTYPE_MISMATCH,
                 {"process group 'gloo'", "AVG of i64"});
    Tensor m = zeros({3, 4});
    Tensor strided = m.t();
    expect_error([&] { g.all_reduce(strided); }, NNP_INVALID_ARGUMENT, {"not contiguous"});
    Tensor small = zeros({5});
    expect_error([&] { g.all_gather(small, zeros({3})); }, NNP_SHAPE_MISMATCH, {"2 x 3"});
    Tensor b = zeros({2});
    expect_error([&] { g.broadcast(b, 2); }, NNP_INVALID_ARGUMENT, {"root 2 is not a rank"});
    g.barrier();  // both ranks still agree on the order after the refusals
  });
  expect_error([&] { dist::ProcessGroup("gloo", options(2, 2)); }, NNP_INVALID_ARGUMENT, {"rank 2 is not from 0 to 1"});
  expect_error([&] { dist::ProcessGroup("carrier_pigeon", options(0, 1)); }, NNP_NOT_FOUND,
               {"no communication backend 'carrier_pigeon'", "gloo"});
  dist::ProcessGroupOptions bad = options(0, 1);
  bad.init_method = "http://example";
  expect_error([&] { dist::ProcessGroup("gloo", bad); }, NNP_INVALID_ARGUMENT, {"neither file://"});
}

TEST_F(Distributed, RanksThatDisagreeOnTheWorldSizeAreRefusedAtStart) {
  std::string errors[2];
  std::thread ranks[2];
  for (int r = 0; r < 2; ++r)
    ranks[r] = std::thread([&, r] {
      try {
        dist::ProcessGroup("gloo", options(r, r == 0 ? 2 : 3, milliseconds(10000)));
      } catch (const Error& e) {
        errors[r] = e.what();
        EXPECT_EQ(e.status(), NNP_COMM_ERROR) << e.what();
      }
    });
  for (std::thread& t : ranks) t.join();
  for (const std::string& e : errors) EXPECT_NE(e.find("every rank needs the same world size"), std::string::npos) << e;
}

// A run that ends cleanly leaves nothing in its folder. One that crashed
// leaves its keys: the next run there still forms when its rank 0 comes
// after the others (every rank waits for a verdict naming its own join); when
// rank 0 comes first and reads a dead rank's join, the live rank is told the
// folder holds an earlier run's keys, within its timeout.
TEST_F(Distributed, AReusedFolderServesTheNextRunOrSaysItHoldsAnEarlierOne) {
  namespace fs = std::filesystem;
  const fs::path clean = dir_ / "clean", crashed = dir_ / "crashed", again = dir_ / "again";
  auto in = [&](const fs::path& folder, int rank, int64_t timeout_ms) {
    dist::ProcessGroupOptions o;
    o.rank = rank;
    o.world_size = 2;
    o.init_method = "file://" + folder.string();
    o.timeout = milliseconds(timeout_ms);
    return o;
  };
  std::string errors[2];
  auto run = [&](const fs::path& folder, int64_t timeout_ms, int late_rank,
                 const std::function<void(dist::ProcessGroup&, int)>& body) {
    errors[0] = errors[1] = "";
    std::thread ranks[2];
    for (int r = 0; r < 2; ++r)
      ranks[r] = std::thread([&, r] {
        if (r == late_rank) std::this_thread::sleep_for(milliseconds(400));
        try {
          dist::ProcessGroup g("gloo", in(folder, r, timeout_ms));
          body(g, r);
        } catch (const Error& e) {
          errors[r] = e.what();
        }
      });
    for (std::thread& t : ranks) t.join();
  };
  auto sum_is_3 = [](dist::ProcessGroup& g, int r) {
    Tensor t = full({8}, r + 1.0);
    g.all_reduce(t);
    EXPECT_EQ(t.to_vector<float>()[7], 3.0f);
  };
  // A clean run; its keys copied while it ran stand for a crashed one's.
  run(clean, 20000, -1, [&](dist::ProcessGroup& g, int r) {
    sum_is_3(g, r);
    g.barrier();
    if (r == 0) {
      fs::copy(clean, crashed);
      fs::copy(clean, again);
    }
    g.barrier();
  });
  EXPECT_EQ(errors[0] + errors[1], "");
  EXPECT_TRUE(fs::is_empty(clean)) << "the last rank to leave deletes the group's keys";
  ASSERT_FALSE(fs::is_empty(crashed));
  run(crashed, 20000, 0, sum_is_3);  // rank 0 last: it reads the live joins
  EXPECT_EQ(errors[0] + errors[1], "");
  run(again, 2000, 1, sum_is_3);  // rank 0 first: it reads the dead rank 1's join
  EXPECT_NE(errors[1].find("holds an earlier run's keys (give each run a fresh folder, or empty it)"),
            std::string::npos)
      << errors[1];
  EXPECT_NE(errors[0], "") << "rank 0 waits for a rank 1 that never joins its group";
  EXPECT_TRUE(fs::is_empty(again)) << "ranks that gave up leave the folder clean too";
}

TEST_F(Distributed, ARankThatNeverComesIsATimeoutNotAHang) {
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { dist::ProcessGroup("gloo", options(0, 2, milliseconds(1500))); }, NNP_TIMEOUT,
               {"did not appear within 1500 ms"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(Distributed, APeerThatLeavesFailsTheOthersCollectiveWithinTheTimeout) {
  std::string error;
  std::thread ranks[2];
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 2; ++r)
    ranks[r] = std::thread([&, r] {
      try {
        dist::ProcessGroup g("gloo", options(r, 2, milliseconds(3000)));
        g.barrier();         // both connected: what fails next is the collective
        if (r == 1) return;  // leaves: its connections close
        std::this_thread::sleep_for(milliseconds(200));
        Tensor t = ones({1024});
        g.all_reduce(t);
      } catch (const Error& e) {
        if (r == 0) error = e.what();
      }
    });
  for (std::thread& t : ranks) t.join();
  EXPECT_NE(error.find("all_reduce failed"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

namespace {

constexpr char kJobSecret[] = "this-job's-secret-0123456789";

// Options for rank r of a job meeting at rank 0's tcp store on loopback.
dist::ProcessGroupOptions tcp_options(const dist::ProcessGroupOptions& base, int port,
                                      const std::string& secret = kJobSecret) {
  dist::ProcessGroupOptions o = base;
  o.init_method = "tcp://127.0.0.1:" + std::to_string(port);
  o.job_token = secret;
  return o;
}

// Rank o.rank of two, on a thread: joins, all-reduces rank + 1 and checks the
// sum; what it threw goes to failure.
std::thread summing_rank(dist::ProcessGroupOptions o, std::string& failure) {
  return std::thread([o, &failure] {
    try {
      dist::ProcessGroup g("gloo", o);
      Tensor t = full({2}, static_cast<double>(o.rank + 1));
      g.all_reduce(t);
      EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{3, 3}));
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
}

}  // namespace

TEST_F(Distributed, TheTcpStoreServesTheRendezvousAndAPortInUseIsNamed) {
  const int port = free_port();

  std::string failures[2];
  std::thread ranks[2];
  for (int r = 0; r < 2; ++r)
    ranks[r] = std::thread([&, r] {
      try {
        dist::ProcessGroup g("gloo", tcp_options(options(r, 2), port));
        Tensor t = full({3}, static_cast<double>(r + 1));
        g.all_reduce(t);
        EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{3, 3, 3}));
      } catch (const std::exception& e) {
        failures[r] = e.what();
      }
    });
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");

  // The port held by someone else: rank 0 cannot serve the store there.
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  expect_error([&] { dist::ProcessGroup("gloo", tcp_options(options(0, 2, milliseconds(2000)), ntohs(address.sin_port))); },
               NNP_IO_ERROR, {"is in use", "MASTER_PORT"});
  ::close(holder);
}

// A tcp store without the job's secret is refused before anything listens,
// and a secret too short to be one is named.
TEST_F(Distributed, ATcpStoreNeedsTheJobsSecret) {
  ::unsetenv("NNP_JOB_TOKEN");
  expect_error([&] { dist::ProcessGroup("gloo", tcp_options(options(0, 1), free_port(), "")); },
               NNP_INVALID_ARGUMENT, {"NNP_JOB_TOKEN", "same secret on every rank", "nnplug launch"});
  expect_error([&] { dist::ProcessGroup("gloo", tcp_options(options(0, 1), free_port(), "short")); },
               NNP_INVALID_ARGUMENT, {"NNP_JOB_TOKEN", "5 bytes", "16 to 4096"});
  // The environment's secret, when the options give none (torchrun-style starts).
  ::setenv("NNP_JOB_TOKEN", kJobSecret, 1);
  EXPECT_NO_THROW(dist::ProcessGroup("gloo", tcp_options(options(0, 1), free_port(), "")));
  ::unsetenv("NNP_JOB_TOKEN");
}

// Rank 0 serves the address the ranks use (here loopback's 127.0.0.1), not
// every interface: the same port on another address answers nothing.
TEST_F(Distributed, TheTcpStoreListensOnlyWhereTheRanksMeet) {
  const int port = free_port();
  dist::ProcessGroup g("gloo", tcp_options(options(0, 1), port));
  const int here = test::connect_to(INADDR_LOOPBACK, port);
  ASSERT_GE(here, 0);
  test::StoreNonce nonce{};
  EXPECT_TRUE(test::read_hello(here, nonce));
  ::close(here);
  sockaddr_in elsewhere = loopback(port);
  elsewhere.sin_addr.s_addr = htonl(0x7f000002);  // 127.0.0.2: this machine, another address
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&elsewhere), sizeof elsewhere), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  ::close(fd);
}

// Strangers reach rank 0's port: one answers the hello with noise, one with
// a proof under another secret, one sends a request at once to plant a key.
// Each is closed before any request is read, without the server's proof, and
// logged on rank 0 with its address; no key they sent exists, and the ranks
// meet and compute as if nobody had come.
TEST_F(Distributed, TheTcpStoreRefusesStrangersLogsThemAndKeepsItsKeys) {
  const int port = free_port();
  std::string failures[2];
  testing::internal::CaptureStderr();
  std::thread rank0 = summing_rank(tcp_options(options(0, 2, milliseconds(20000)), port), failures[0]);
  {  // noise for a proof
    const int fd = test::connect_to(INADDR_LOOPBACK, port);
    ASSERT_GE(fd, 0);
    test::StoreNonce server{};
    EXPECT_TRUE(test::read_hello(fd, server));
    const std::string noise(64, 'x');
    EXPECT_TRUE(test::send_bytes(fd, noise.data(), noise.size()));
    EXPECT_TRUE(test::closed_by_server(fd)) << "noise for a proof";
    ::close(fd);
  }
  {  // a proof under another secret
    const int fd = test::connect_to(INADDR_LOOPBACK, port);
    ASSERT_GE(fd, 0);
    EXPECT_FALSE(test::prove_secret(fd, "another job's secret, 0123456789"));
    EXPECT_TRUE(test::closed_by_server(fd));
    ::close(fd);
  }
  const std::string planted = "planted/by/a/stranger";
  {  // a request with no handshake
    const int fd = test::connect_to(INADDR_LOOPBACK, port);
    ASSERT_GE(fd, 0);
    const std::string request = test::set_request(planted, std::string(100, 'v'));
    test::send_bytes(fd, request.data(), request.size());
    test::StoreNonce server{};
    EXPECT_TRUE(test::read_hello(fd, server));
    EXPECT_TRUE(test::closed_by_server(fd)) << "a request before the handshake";
    ::close(fd);
  }
  {  // a rank's own connection finds no planted key (no answer within the 3 s read timeout)
    const int fd = test::connect_to(INADDR_LOOPBACK, port);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(test::prove_secret(fd, kJobSecret));
    const std::string request = test::get_request(planted);
    EXPECT_TRUE(test::send_bytes(fd, request.data(), request.size()));
    char length[8];
    EXPECT_LT(::recv(fd, length, sizeof length, 0), 0) << "the stranger's key exists";
    ::close(fd);
  }
  std::thread rank1 = summing_rank(tcp_options(options(1, 2, milliseconds(20000)), port), failures[1]);
  rank0.join();
  rank1.join();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  size_t refusals = 0;
  for (size_t at = 0; (at = log.find("refused a connection from 127.0.0.1:", at)) != std::string::npos; ++at)
    ++refusals;
  EXPECT_EQ(refusals, 3u) << log;
  EXPECT_NE(log.find("did not prove the job's secret"), std::string::npos) << log;
}

// A rank started with another secret is refused by rank 0 and told which
// variable differs; it does not wait out the timeout.
TEST_F(Distributed, ARankWithAnotherSecretIsRefusedNamingTheVariable) {
  const int port = free_port();
  testing::internal::CaptureStderr();
  std::thread rank0([&] {
    try {
      dist::ProcessGroup g("gloo", tcp_options(options(0, 2, milliseconds(3000)), port));
    } catch (const std::exception&) {
      // rank 1 never joins: rank 0 times out
    }
  });
  const auto start = std::chrono::steady_clock::now();
  expect_error(
      [&] { dist::ProcessGroup("gloo", tcp_options(options(1, 2, milliseconds(3000)), port, "not this job's secret!")); },
      NNP_COMM_ERROR, {"refused this rank", "NNP_JOB_TOKEN must be the same on every rank"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
  rank0.join();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("refused a connection from 127.0.0.1:"), std::string::npos) << log;
}

// A rank's requests that break the protocol, after its handshake (an unknown
// op, a key or value length past the bounds), close that connection before
// anything is allocated, and the store goes on serving the ranks.
TEST_F(Distributed, TheTcpStoreDropsMalformedRequestsAndServesOn) {
  const int port = free_port();
  std::string failures[2];
  std::thread rank0 = summing_rank(tcp_options(options(0, 2, milliseconds(20000)), port), failures[0]);
  auto closed_after = [&](const std::string& bytes) {
    const int fd = test::connect_to(INADDR_LOOPBACK, port);
    if (fd < 0 || !test::prove_secret(fd, kJobSecret)) return false;
    EXPECT_TRUE(test::send_bytes(fd, bytes.data(), bytes.size()));
    const bool closed = test::closed_by_server(fd);
    ::close(fd);
    return closed;
  };
  EXPECT_TRUE(closed_after(std::string("X\x01\0\0\0k", 6))) << "an unknown op";
  EXPECT_TRUE(closed_after(std::string("G\xff\xff\xff\xff", 5))) << "a 4 GB key";
  EXPECT_TRUE(closed_after(std::string("S\x01\0\0\0k\0\0\0\0\0\x01\0\0", 14))) << "a 2^40-byte value";
  std::thread rank1 = summing_rank(tcp_options(options(1, 2, milliseconds(20000)), port), failures[1]);
  rank0.join();
  rank1.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

