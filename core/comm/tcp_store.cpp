// "tcp://host:port": rank 0 serves a key-value store on the port (every
// interface), every rank (rank 0 too) is a client. One request at a time a
// connection: 'S' u32 key-length key u64 value-length value, answered 'A';
// 'G' u32 key-length key, answered u64 value-length value once the key
// exists. The server reads strangers' bytes: lengths are bounded before
// anything is allocated, and a malformed request closes its connection.
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
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "../error.hpp"
#include "store.hpp"

namespace nnp::core::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxKey = 4096;
constexpr size_t kMaxClients = 1024;

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

// Rank 0's server: one thread polling the listening socket and its clients.
class Server {
 public:
  Server(int port) : port_(port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0) fail(NNP_IO_ERROR, "tcp store: cannot make a socket: ", std::strerror(errno));
    const int on = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 128) != 0) {
      const int error = errno;
      ::close(listener_);
      if (error == EADDRINUSE)
        fail(NNP_IO_ERROR, "tcp store: port ", port,
             " is in use (another run, or another program): pick a free MASTER_PORT");
      fail(NNP_IO_ERROR, "tcp store: cannot listen on port ", port, ": ", std::strerror(error));
    }
    if (::pipe2(wake_, O_CLOEXEC) != 0) {
      ::close(listener_);
      fail(NNP_IO_ERROR, "tcp store: cannot make a pipe: ", std::strerror(errno));
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~Server() {
    stop_ = true;
    const char byte = 0;
    (void)!::write(wake_[1], &byte, 1);
    thread_.join();
    for (auto& [fd, client] : clients_) ::close(fd);
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

 private:
  struct Client {
    std::vector<char> in;
  };

  void serve() {
    std::vector<pollfd> fds;
    while (!stop_) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listener_, POLLIN, 0});
      for (auto& [fd, client] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) continue;
      if (fds[1].revents & POLLIN) accept_client();
      for (size_t i = 2; i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_client(fds[i].fd);
    }
  }

  void accept_client() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    if (clients_.size() >= kMaxClients) {
      ::close(fd);
      return;
    }
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    clients_[fd] = Client{};
  }

  void drop(int fd) {
    ::close(fd);
    clients_.erase(fd);
    for (auto& [key, waiting] : waiting_) waiting.erase(std::remove(waiting.begin(), waiting.end(), fd), waiting.end());
  }

  void read_client(int fd) {
    auto client = clients_.find(fd);
    if (client == clients_.end()) return;  // dropped earlier in this round
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      drop(fd);
      return;
    }
    std::vector<char>& in = client->second.in;
    in.insert(in.end(), buffer, buffer + n);
    // Whole requests off the front, the consumed bytes erased once (linear
    // in what arrived); a malformed request drops the client.
    size_t consumed = 0;
    for (;;) {
      const int64_t used = parse(fd, in.data() + consumed, in.size() - consumed);
      if (used < 0) return drop(fd);
      if (used == 0) break;
      consumed += static_cast<size_t>(used);
      if (clients_.count(fd) == 0) return;
    }
    in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(consumed));
  }

  // Handles the request at the front of the bytes: its length, 0 when
  // incomplete, -1 when malformed.
  int64_t parse(int fd, const char* in, size_t size) {
    if (size == 0) return 0;
    const char op = in[0];
    if (op != 'S' && op != 'G') return -1;
    uint32_t key_length = 0;
    if (size < 5) return 0;
    std::memcpy(&key_length, in + 1, 4);
    if (key_length == 0 || key_length > kMaxKey) return -1;
    size_t at = 5 + key_length;
    if (size < at) return 0;
    const std::string key(in + 5, key_length);
    if (op == 'G') {
      auto found = values_.find(key);
      if (found != values_.end()) {
        if (!reply(fd, found->second)) return -1;
      } else {
        waiting_[key].push_back(fd);
      }
      return static_cast<int64_t>(at);
    }
    uint64_t value_length = 0;
    if (size < at + 8) return 0;
    std::memcpy(&value_length, in + at, 8);
    if (value_length > kMaxStoreValue) return -1;
    at += 8;
    if (size < at + value_length) return 0;
    std::vector<char>& value = values_[key];
    value.assign(in + at, in + at + value_length);
    if (!send_all(fd, "A", 1)) return -1;
    auto waiting = waiting_.find(key);
    if (waiting != waiting_.end()) {
      std::vector<int> readers = std::move(waiting->second);
      waiting_.erase(waiting);
      for (int reader : readers)
        if (!reply(reader, value)) drop(reader);
    }
    return static_cast<int64_t>(at + value_length);
  }

  static bool reply(int fd, const std::vector<char>& value) {
    const uint64_t length = value.size();
    return send_all(fd, &length, 8) && send_all(fd, value.data(), value.size());
  }

  int port_;
  int listener_ = -1;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::map<int, Client> clients_;
  std::map<std::string, std::vector<char>> values_;
  std::map<std::string, std::vector<int>> waiting_;
  std::thread thread_;
};

class TcpStore : public Store {
 public:
  TcpStore(std::string host, int port, bool serve, int64_t timeout_ms) : host_(std::move(host)), port_(port) {
    if (serve) server_ = std::make_unique<Server>(port);
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

 private:
  void check_sizes(const std::string& key, size_t value_size) const {
    if (key.empty() || key.size() > kMaxKey || value_size > kMaxStoreValue)
      fail(NNP_INVALID_ARGUMENT, describe(), ": key of ", key.size(), " bytes or value of ", value_size,
           " bytes is out of bounds");
  }

  [[noreturn]] void lost(const std::string& what) const {
    fail(NNP_COMM_ERROR, describe(), ": the connection to rank 0's store broke while ", what,
         " (rank 0 ended or failed)");
  }

  // Connects, retrying while rank 0 is not listening yet.
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
      if (resolved != 0) {
        last_error = ::gai_strerror(resolved);
      } else {
        for (addrinfo* a = found; a; a = a->ai_next) {
          const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            const int on = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
            ::freeaddrinfo(found);
            fd_ = fd;
            return;
          }
          last_error = std::strerror(errno);
          ::close(fd);
        }
        ::freeaddrinfo(found);
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
  std::unique_ptr<Server> server_;
  std::mutex mutex_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Store> open_tcp_store(const std::string& host, int port, bool serve, int64_t timeout_ms) {
  return std::make_unique<TcpStore>(host, port, serve, timeout_ms);
}

}  // namespace nnp::core::comm
