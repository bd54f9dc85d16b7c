// A raw client of rank 0's tcp store, written from the protocol as
// core/comm/store_protocol.hpp documents it (an independent reading, with
// OpenSSL's HMAC): the tests play a rank, a stranger and a rank with the
// wrong secret against the real server.
#pragma once

#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace nnp::test {

using StoreNonce = std::array<unsigned char, 32>;

// HMAC-SHA256(secret, "nnplug store " role server_nonce client_nonce).
inline std::array<unsigned char, 32> store_proof(const std::string& secret, char role, const StoreNonce& server,
                                                 const StoreNonce& client) {
  std::string message = "nnplug store ";
  message += role;
  message.append(reinterpret_cast<const char*>(server.data()), server.size());
  message.append(reinterpret_cast<const char*>(client.data()), client.size());
  std::array<unsigned char, 32> proof{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), proof.data(), &length);
  return proof;
}

// Connects to address:port (retrying for up to 2 s while nothing listens);
// -1 when it could not. Reads time out after 3 s.
inline int connect_to(uint32_t address, int port) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(address);
    to.sin_port = htons(static_cast<uint16_t>(port));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
      timeval wait{3, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
      return fd;
    }
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

inline bool read_exactly(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads the server's hello ("NNPS", version 1, nonce); false if it is not one.
inline bool read_hello(int fd, StoreNonce& nonce) {
  char hello[37];
  if (!read_exactly(fd, hello, sizeof hello) || std::memcmp(hello, "NNPS\x01", 5) != 0) return false;
  std::memcpy(nonce.data(), hello + 5, nonce.size());
  return true;
}

// Whether the server closed the connection without another byte (within 3 s).
inline bool closed_by_server(int fd) {
  char byte = 0;
  return ::recv(fd, &byte, 1, 0) == 0;
}

inline bool send_bytes(int fd, const void* data, size_t size) {
  return ::send(fd, data, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// Answers the hello with a proof under `secret`; true when the server proved
// the same secret back (the connection may then send requests).
inline bool prove_secret(int fd, const std::string& secret) {
  StoreNonce server{}, client{};
  if (!read_hello(fd, server)) return false;
  for (size_t i = 0; i < client.size(); ++i) client[i] = static_cast<unsigned char>(i * 7 + 1);
  const auto mine = store_proof(secret, 'c', server, client);
  if (!send_bytes(fd, client.data(), client.size()) || !send_bytes(fd, mine.data(), mine.size())) return false;
  std::array<unsigned char, 32> theirs{};
  return read_exactly(fd, theirs.data(), theirs.size()) && theirs == store_proof(secret, 's', server, client);
}

// A 'S' request: key to value.
inline std::string set_request(const std::string& key, const std::string& value) {
  std::string bytes = "S";
  const uint32_t key_length = static_cast<uint32_t>(key.size());
  const uint64_t value_length = value.size();
  bytes.append(reinterpret_cast<const char*>(&key_length), 4).append(key);
  bytes.append(reinterpret_cast<const char*>(&value_length), 8).append(value);
  return bytes;
}

inline std::string get_request(const std::string& key) {
  std::string bytes = "G";
  const uint32_t key_length = static_cast<uint32_t>(key.size());
  return bytes.append(reinterpret_cast<const char*>(&key_length), 4).append(key);
}

}  // namespace nnp::test
