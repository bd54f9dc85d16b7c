// "tcp://host:port": rank 0 serves a key-value store on the port, bound to
// host's address only (loopback for a one-machine job), and every rank (rank
// 0 too) is a client. The protocol, its handshake included, is
// store_protocol.hpp's; this file is its sockets. A connection that does not
// prove the job's secret within kProofWindow is closed and logged on rank 0
// with its address, before any request of it is read.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "../error.hpp"
#include "store.hpp"
#include "store_protocol.hpp"

namespace nnp::core::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxClients = 1024;
// Connections still to prove the secret: past this, the oldest is closed, so
// strangers cannot crowd out the ranks.
constexpr size_t kMaxUnproven = 64;
constexpr auto kProofWindow = std::chrono::seconds(10);
// Refusals logged one line each; past this they are counted.
constexpr int kMaxLoggedRefusals = 32;

int64_t ms_left(Clock::time_point deadline) {
  return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

// Sends all of data or returns false.
bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Receives exactly size bytes by the deadline: 1 done, 0 timed out, -1 the
// peer closed or failed.
int recv_all(int fd, void* data, size_t size, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd waiting{fd, POLLIN, 0};
    const int ready = ::poll(&waiting, 1, static_cast<int>(std::min<int64_t>(ms_left(deadline), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return 0;
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 1;
}

// "10.0.0.2:51234", "[::1]:51234".
std::string address_text(const sockaddr_storage& address, bool with_port) {
  char text[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
    return with_port ? std::string(text) + ":" + std::to_string(port) : text;
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
    return with_port ? "[" + std::string(text) + "]:" + std::to_string(port) : text;
  }
  return text;
}

// Listens on host's own address (never every interface): the first of its
// addresses this machine has.
int listen_on(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(port);
  if (const int resolved = ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found); resolved != 0)
    fail(NNP_IO_ERROR, "tcp store: rank 0 cannot resolve MASTER_ADDR '", host, "' (", ::gai_strerror(resolved),
         ") to listen there");
  int error = EADDRNOTAVAIL;
  std::string tried;
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    error = errno;
    sockaddr_storage address{};
    std::memcpy(&address, a->ai_addr, std::min<size_t>(a->ai_addrlen, sizeof address));
    tried += (tried.empty() ? "" : ", ") + address_text(address, false);
    ::close(fd);
    if (error == EADDRINUSE) break;
  }
  ::freeaddrinfo(found);
  if (error == EADDRINUSE)
    fail(NNP_IO_ERROR, "tcp store: port ", port,
         " is in use (another run, or another program): pick a free MASTER_PORT");
  if (error == EADDRNOTAVAIL)
    fail(NNP_IO_ERROR, "tcp store: rank 0 cannot listen on MASTER_ADDR '", host, "' (", tried,
         "): no interface of this machine has that address; rank 0 must run on the machine MASTER_ADDR names");
  fail(NNP_IO_ERROR, "tcp store: cannot listen on ", host, ":", port, ": ", std::strerror(error));
}

// Rank 0's server: one thread polling the listening socket and its clients.
class Server : public wire::Outbox {
 public:
  Server(const std::string& host, int port, const std::string& secret)
      : where_(host + ":" + std::to_string(port)), state_(secret, *this) {
    listener_ = listen_on(host, port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) {
      ::close(listener_);
      fail(NNP_IO_ERROR, "tcp store: cannot make a pipe: ", std::strerror(errno));
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~Server() override {
    stop_ = true;
    const char byte = 0;
    (void)!::write(wake_[1], &byte, 1);
    thread_.join();
    for (auto& [fd, peer] : peers_) ::close(fd);
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
    if (refusals_ > kMaxLoggedRefusals)
      std::fprintf(stderr, "nnplug: tcp store on %s refused %d connections in all\n", where_.c_str(), refusals_);
  }

  bool send(int fd, const void* data, size_t size) override { return send_all(fd, data, size); }

 private:
  struct Peer {
    std::string address;
    Clock::time_point proof_due;
  };

  void serve() {
    std::vector<pollfd> fds;
    while (!stop_) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listener_, POLLIN, 0});
      for (auto& [fd, peer] : peers_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), next_due_ms()) < 0) continue;
      if (fds[1].revents & POLLIN) accept_peer();
      for (size_t i = 2; i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_peer(fds[i].fd);
      close_overdue();
    }
  }

  // Milliseconds until the first unproven connection's proof is due; -1 when none waits.
  int next_due_ms() const {
    int64_t due = -1;
    for (const auto& [fd, peer] : peers_)
      if (!state_.proven(fd)) {
        const int64_t left = ms_left(peer.proof_due);
        due = due < 0 ? left : std::min(due, left);
      }
    return static_cast<int>(std::min<int64_t>(due, 1 << 30));
  }

  void accept_peer() {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int fd = ::accept4(listener_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC);
    if (fd < 0) return;
    if (peers_.size() >= kMaxClients) {
      ::close(fd);
      return;
    }
    size_t unproven = 0;
    int oldest = -1;
    for (const auto& [other, peer] : peers_)
      if (!state_.proven(other)) {
        ++unproven;
        if (oldest < 0 || peer.proof_due < peers_[oldest].proof_due) oldest = other;
      }
    if (unproven >= kMaxUnproven) refuse(oldest, "crowded out before proving the job's secret");
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    peers_[fd] = Peer{address_text(address, true), Clock::now() + kProofWindow};
    if (!state_.open(fd)) drop(fd);
  }

  void drop(int fd) {
    state_.close(fd);
    peers_.erase(fd);
    ::close(fd);
  }

  // Closes a connection that did not prove the secret, saying so on rank 0.
  void refuse(int fd, const char* why) {
    if (++refusals_ <= kMaxLoggedRefusals)
      std::fprintf(stderr, "nnplug: tcp store on %s refused a connection from %s: %s%s\n", where_.c_str(),
                   peers_[fd].address.c_str(), why,
                   refusals_ == kMaxLoggedRefusals ? " (further refusals are counted, not logged)" : "");
    drop(fd);
  }

  void close_overdue() {
    std::vector<int> overdue;
    const auto now = Clock::now();
    for (const auto& [fd, peer] : peers_)
      if (!state_.proven(fd) && peer.proof_due <= now) overdue.push_back(fd);
    for (int fd : overdue) refuse(fd, "it sent no proof of the job's secret within 10 s");
  }

  void read_peer(int fd) {
    if (peers_.count(fd) == 0) return;  // dropped earlier in this round
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (!state_.proven(fd)) return refuse(fd, "it closed without proving the job's secret");
      return drop(fd);
    }
    switch (state_.receive(fd, buffer, static_cast<size_t>(n))) {
      case wire::ServerState::Verdict::ok:
        break;
      case wire::ServerState::Verdict::refused:
        refuse(fd, "it did not prove the job's secret (a stranger, or a rank with another NNP_JOB_TOKEN)");
        break;
      case wire::ServerState::Verdict::malformed:
        drop(fd);
        break;
    }
    for (int broken : state_.take_broken())
      if (peers_.count(broken)) drop(broken);
  }

  std::string where_;
  wire::ServerState state_;
  int listener_ = -1;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::map<int, Peer> peers_;
  int refusals_ = 0;
  std::thread thread_;
};

class TcpStore : public Store {
 public:
  TcpStore(std::string host, int port, bool serve, int64_t timeout_ms, std::string secret)
      : host_(std::move(host)), port_(port), secret_(std::move(secret)) {
    wire::check_secret(secret_);
    if (serve) server_ = std::make_unique<Server>(host_, port, secret_);
    connect(Clock::now() + std::chrono::milliseconds(timeout_ms));
  }
  ~TcpStore() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void set(const std::string& key, const std::vector<char>& value) override {
    check_sizes(key, value.size());
    std::lock_guard<std::mutex> lock(mutex_);
    const uint32_t key_length = static_cast<uint32_t>(key.size());
    const uint64_t value_length = value.size();
    char ack = 0;
    if (!(send_all(fd_, "S", 1) && send_all(fd_, &key_length, 4) && send_all(fd_, key.data(), key.size()) &&
          send_all(fd_, &value_length, 8) && send_all(fd_, value.data(), value.size())) ||
        recv_all(fd_, &ack, 1, Clock::now() + std::chrono::seconds(60)) != 1 || ack != 'A')
      lost("setting key '" + key + "'");
  }

  std::vector<char> get(const std::string& key, int64_t timeout_ms) override {
    check_sizes(key, 0);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    const uint32_t key_length = static_cast<uint32_t>(key.size());
    if (!(send_all(fd_, "G", 1) && send_all(fd_, &key_length, 4) && send_all(fd_, key.data(), key.size())))
      lost("asking for key '" + key + "'");
    uint64_t length = 0;
    const int got = recv_all(fd_, &length, 8, deadline);
    if (got == 0) {
      // The answer may still come: this connection is out of step now.
      ::close(fd_);
      fd_ = -1;
      connect(Clock::now() + std::chrono::seconds(5));
      fail(NNP_TIMEOUT, describe(), ": key '", key, "' did not appear within ", timeout_ms,
           " ms (the rank that writes it has not come, or stalled)");
    }
    if (got < 0 || length > kMaxStoreValue) lost("reading key '" + key + "'");
    std::vector<char> value(static_cast<size_t>(length));
    if (length > 0 && recv_all(fd_, value.data(), value.size(), Clock::now() + std::chrono::seconds(60)) != 1)
      lost("reading key '" + key + "'");
    return value;
  }

  std::string describe() const override {
    return "tcp store " + host_ + ":" + std::to_string(port_) + (server_ ? " (served by this rank)" : "");
  }

  std::string local_address() const override { return local_address_; }

 private:
  void check_sizes(const std::string& key, size_t value_size) const {
    if (key.empty() || key.size() > wire::kMaxKey || value_size > kMaxStoreValue)
      fail(NNP_INVALID_ARGUMENT, describe(), ": key of ", key.size(), " bytes or value of ", value_size,
           " bytes is out of bounds");
  }

  [[noreturn]] void lost(const std::string& what) const {
    fail(NNP_COMM_ERROR, describe(), ": the connection to rank 0's store broke while ", what,
         " (rank 0 ended or failed)");
  }

  // Proves the job's secret to the server and checks its proof, on a fresh
  // connection; throws (closing fd) when either side's proof fails.
  void handshake(int fd, Clock::time_point deadline) {
    auto refuse = [&](nnp_status status, const std::string& why) {
      ::close(fd);
      fail(status, describe(), ": ", why);
    };
    wire::Hello hello{};
    const int got = recv_all(fd, hello.data(), hello.size(), deadline);
    if (got != 1)
      refuse(got == 0 ? NNP_TIMEOUT : NNP_COMM_ERROR,
             "rank 0's store sent no greeting (it closed the connection, or is not an nnplug store)");
    if (std::memcmp(hello.data(), wire::kMagic, sizeof wire::kMagic) != 0)
      refuse(NNP_COMM_ERROR, "the port answers, but not as an nnplug store (is MASTER_PORT another program's?)");
    if (static_cast<uint8_t>(hello[sizeof wire::kMagic]) != wire::kVersion)
      refuse(NNP_ABI_MISMATCH, "rank 0's store speaks protocol version " +
                                   std::to_string(static_cast<uint8_t>(hello[sizeof wire::kMagic])) +
                                   ", this rank version " + std::to_string(wire::kVersion) +
                                   ": run the same nnplug on every rank");
    wire::Nonce server_nonce, client_nonce = wire::random_nonce();
    std::memcpy(server_nonce.data(), hello.data() + sizeof wire::kMagic + 1, server_nonce.size());
    const wire::Proof mine = wire::prove(secret_, wire::Role::client, server_nonce, client_nonce);
    if (!send_all(fd, client_nonce.data(), client_nonce.size()) || !send_all(fd, mine.data(), mine.size()))
      refuse(NNP_COMM_ERROR, "the connection broke during the handshake");
    wire::Proof theirs{};
    if (recv_all(fd, theirs.data(), theirs.size(), deadline) != 1)
      refuse(NNP_COMM_ERROR,
             "rank 0's store refused this rank: its job secret differs (NNP_JOB_TOKEN must be the same on every rank)");
    if (!wire::same_proof(theirs.data(), wire::prove(secret_, wire::Role::server, server_nonce, client_nonce)))
      refuse(NNP_COMM_ERROR,
             "what answers at this address does not hold the job's secret: it is not this job's rank 0 (or "
             "NNP_JOB_TOKEN differs between ranks)");
  }

  // Connects, retrying while rank 0 is not listening yet, and proves the secret.
  void connect(Clock::time_point deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const std::string port = std::to_string(port_);
    std::string last_error = "no address";
    auto pause = std::chrono::milliseconds(10);
    for (;;) {
      addrinfo* found = nullptr;
      const int resolved = ::getaddrinfo(host_.c_str(), port.c_str(), &hints, &found);
      int connected = -1;
      if (resolved != 0) {
        last_error = ::gai_strerror(resolved);
      } else {
        for (addrinfo* a = found; a && connected < 0; a = a->ai_next) {
          const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            connected = fd;
          } else {
            last_error = std::strerror(errno);
            ::close(fd);
          }
        }
        ::freeaddrinfo(found);
      }
      if (connected >= 0) {
        const int on = 1;
        ::setsockopt(connected, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        handshake(connected, std::max(deadline, Clock::now() + std::chrono::seconds(5)));
        sockaddr_storage local{};
        socklen_t length = sizeof local;
        if (::getsockname(connected, reinterpret_cast<sockaddr*>(&local), &length) == 0)
          local_address_ = address_text(local, false);
        fd_ = connected;
        return;
      }
      if (Clock::now() >= deadline)
        fail(NNP_TIMEOUT, describe(), ": cannot reach rank 0's store (", last_error,
             "); is rank 0 running, and MASTER_ADDR/MASTER_PORT the same on every rank?");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(500));
    }
  }

  std::string host_;
  int port_;
  std::string secret_;
  std::unique_ptr<Server> server_;
  std::mutex mutex_;
  int fd_ = -1;
  std::string local_address_;
};

}  // namespace

std::unique_ptr<Store> open_tcp_store(const std::string& host, int port, bool serve, int64_t timeout_ms,
                                      const std::string& secret) {
  return std::make_unique<TcpStore>(host, port, serve, timeout_ms, secret);
}

}  // namespace nnp::core::comm
