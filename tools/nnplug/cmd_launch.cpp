// nnplug launch: starts the ranks of a data-parallel job on this machine as
// torchrun does. Each rank is PROGRAM ARGS with RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and NNP_JOB_TOKEN
// (the job's secret, which every store connection proves) set; its output
// lines come out prefixed "[rank R]"; the first rank to fail stops the
// others (SIGTERM, then SIGKILL after a grace period) and its status is the
// launch's.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "options.hpp"
#include "terminal_text.hpp"

namespace nnplug {
namespace {

using Clock = std::chrono::steady_clock;

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  int out = -1;  // the read ends of its stdout and stderr
  int err = -1;
  std::string pending_out, pending_err;  // a line not yet ended
  bool running = false;
  int status = 0;
};

// A port nothing listens on now, for a one-machine job's store.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = 29500;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

// A fresh job secret: 32 bytes from the kernel's generator, as hex.
std::string new_job_token() {
  unsigned char bytes[32];
  size_t have = 0;
  while (have < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + have, sizeof bytes - have, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw nnp::Error(NNP_INTERNAL, std::string("launch: no random bytes for the job's secret: ") +
                                                  std::strerror(errno));
    have += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) token += {kHex[b >> 4], kHex[b & 15]};
  return token;
}

volatile sig_atomic_t g_stop_signal = 0;
void on_signal(int signal) { g_stop_signal = signal; }

// Starts one rank; throws nothing: a rank that cannot start is reported as
// failed by the caller.
bool start(Rank& r, const std::vector<std::string>& command,
           const std::vector<std::pair<std::string, std::string>>& env, std::string& error) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    error = std::strerror(errno);
    return false;
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: stopping a rank stops what it started
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "nnplug launch: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  r.pid = pid;
  r.out = out[0];
  r.err = err[0];
  r.running = true;
  return true;
}

// Prints whole lines of what fd gave, prefixed; false at its end.
bool pump(int fd, std::string& pending, int rank, std::ostream& to) {
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n <= 0) {
    if (!pending.empty()) to << "[rank " << rank << "] " << printable(pending, 1 << 16) << "\n" << std::flush;
    pending.clear();
    return false;
  }
  pending.append(buffer, static_cast<size_t>(n));
  for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
    to << "[rank " << rank << "] " << printable(pending.substr(0, end), 1 << 16) << "\n";
    pending.erase(0, end + 1);
  }
  to << std::flush;
  return true;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + ::strsignal(WTERMSIG(status));
  return "ended";
}

}  // namespace

int run_launch(const Args& all_args) {
  namespace po = boost::program_options;
  // Everything after "--" is the program and its arguments.
  Args args, command;
  bool after = false;
  for (const std::string& a : all_args) {
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? command : args).push_back(a);
  }
  int nproc = 1, nnodes = 1, node_rank = 0, master_port = 0;
  std::string master_addr;
  double grace = 5;
  po::options_description options("options");
  options.add_options()("nproc", po::value(&nproc)->default_value(1), "ranks to start on this machine")(
      "nnodes", po::value(&nnodes)->default_value(1), "machines in the job")(
      "node-rank", po::value(&node_rank)->default_value(0), "this machine's index (0 to nnodes-1)")(
      "master-addr", po::value(&master_addr), "where rank 0's store is (default 127.0.0.1 for one machine)")(
      "master-port", po::value(&master_port), "its port (default: a free one for one machine, else 29500)")(
      "grace", po::value(&grace)->default_value(5), "seconds between SIGTERM and SIGKILL when stopping ranks");
  po::variables_map vm;
  if (auto stop = parse_options("launch",
                                "Starts --nproc ranks of PROGRAM (nnplug launch [OPTIONS] -- PROGRAM ARGS...) with "
                                "torchrun's environment; prefixes their output with the rank; the first rank to fail "
                                "stops the others.",
                                options, args, vm))
    return *stop;
  if (command.empty()) {
    std::cerr << "nnplug launch: no program: nnplug launch --nproc 2 -- PROGRAM ARGS...\n";
    return 2;
  }
  if (nproc < 1 || nproc > 1024 || nnodes < 1 || nnodes > 65536 || node_rank < 0 || node_rank >= nnodes ||
      static_cast<int64_t>(nproc) * nnodes > 65536) {
    std::cerr << "nnplug launch: --nproc must be 1 to 1024, --nnodes 1 to 65536 (at most 65536 ranks in all), "
                 "and --node-rank from 0 to nnodes-1\n";
    return 2;
  }
  if (nnodes > 1 && master_addr.empty()) {
    std::cerr << "nnplug launch: with --nnodes " << nnodes << ", say where rank 0 runs (--master-addr)\n";
    return 2;
  }
  // The job's secret: the user's for several machines (every machine's
  // launch must pass the same), a fresh one for one machine.
  const char* given_token = std::getenv("NNP_JOB_TOKEN");
  std::string job_token = given_token ? given_token : "";
  if (job_token.empty() && nnodes > 1) {
    std::cerr << "nnplug launch: with --nnodes " << nnodes
              << ", set NNP_JOB_TOKEN to one secret on every machine (e.g. `export NNP_JOB_TOKEN=$(openssl rand "
                 "-hex 32)`, shared as you share keys): the ranks prove it to rank 0's store\n";
    return 2;
  }
  if (job_token.empty()) job_token = new_job_token();
  if (master_addr.empty()) master_addr = "127.0.0.1";
  if (master_port == 0) master_port = nnodes == 1 ? free_port() : 29500;
  if (master_port < 1 || master_port > 65535) {
    std::cerr << "nnplug launch: --master-port must be 1 to 65535\n";
    return 2;
  }

  ::signal(SIGINT, on_signal);
  ::signal(SIGTERM, on_signal);
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<Rank> ranks(static_cast<size_t>(nproc));
  std::optional<int> failure;  // the launch's status once a rank failed
  for (int local = 0; local < nproc; ++local) {
    Rank& r = ranks[static_cast<size_t>(local)];
    r.rank = node_rank * nproc + local;
    std::vector<std::pair<std::string, std::string>> env = {{"RANK", std::to_string(r.rank)},
                                                            {"LOCAL_RANK", std::to_string(local)},
                                                            {"WORLD_SIZE", std::to_string(nproc * nnodes)},
                                                            {"LOCAL_WORLD_SIZE", std::to_string(nproc)},
                                                            {"GROUP_RANK", std::to_string(node_rank)},
                                                            {"MASTER_ADDR", master_addr},
                                                            {"MASTER_PORT", std::to_string(master_port)},
                                                            {"NNP_JOB_TOKEN", job_token}};
    // One machine: Gloo on loopback unless the user chose an interface.
    if (nnodes == 1 && std::getenv("GLOO_SOCKET_IFNAME") == nullptr) env.emplace_back("GLOO_SOCKET_IFNAME", "lo");
    std::string error;
    if (!start(r, command, env, error)) {
      std::cerr << "nnplug launch: cannot start rank " << r.rank << ": " << error << "\n";
      failure = 1;
      break;
    }
  }

  std::optional<Clock::time_point> kill_at;
  auto stop_all = [&](int signal) {
    for (Rank& r : ranks)
      if (r.running) ::kill(-r.pid, signal);
  };
  if (failure) {
    stop_all(SIGTERM);
    kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace));
  }
  for (;;) {
    // Output first, so nothing a rank said before it ended is lost.
    std::vector<pollfd> fds;
    std::vector<std::pair<Rank*, bool>> sources;  // rank, is stderr
    for (Rank& r : ranks) {
      if (r.out >= 0) fds.push_back({r.out, POLLIN, 0}), sources.push_back({&r, false});
      if (r.err >= 0) fds.push_back({r.err, POLLIN, 0}), sources.push_back({&r, true});
    }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 100) > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Rank& r = *sources[i].first;
        const bool is_err = sources[i].second;
        int& fd = is_err ? r.err : r.out;
        if (!pump(fd, is_err ? r.pending_err : r.pending_out, r.rank, is_err ? std::cerr : std::cout)) {
          ::close(fd);
          fd = -1;
        }
      }
    } else if (fds.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Every rank that failed since the last look is named: a rank killed
    // and the peer whose collective failed because of it end together.
    bool any_running = false;
    std::string failed;
    std::optional<int> first_status;
    for (Rank& r : ranks) {
      if (!r.running) continue;
      int status = 0;
      if (::waitpid(r.pid, &status, WNOHANG) == r.pid) {
        r.running = false;
        r.status = status;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && !failure) {
          failed += (failed.empty() ? "rank " : ", rank ") + std::to_string(r.rank) + " " + describe(status);
          if (!first_status) first_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
      }
      any_running = any_running || r.running;
    }
    if (first_status) {
      std::cerr << "nnplug launch: " << failed << "; stopping the others\n";
      failure = first_status;
      stop_all(SIGTERM);
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace));
    }
    if (g_stop_signal != 0 && !failure) {
      std::cerr << "nnplug launch: stopped by signal " << ::strsignal(g_stop_signal) << "; stopping the ranks\n";
      failure = 128 + g_stop_signal;
      stop_all(SIGTERM);
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace));
    }
    if (kill_at && Clock::now() >= *kill_at) {
      stop_all(SIGKILL);
      kill_at.reset();
    }
    bool any_output = false;
    for (const Rank& r : ranks) any_output = any_output || r.out >= 0 || r.err >= 0;
    if (!any_running && !any_output) break;
  }
  return failure.value_or(0);
}

}  // namespace nnplug
