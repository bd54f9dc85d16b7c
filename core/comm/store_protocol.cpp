#include "store_protocol.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "../error.hpp"
#include "store.hpp"

namespace nnp::core::comm::wire {

Nonce random_nonce() {
  Nonce nonce;
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    fail(NNP_INTERNAL, "tcp store: OpenSSL's random generator gave no bytes for the handshake");
  return nonce;
}

Proof prove(const std::string& secret, Role role, const Nonce& server_nonce, const Nonce& client_nonce) {
  static constexpr char kTag[] = "nnplug store ";
  unsigned char message[sizeof kTag - 1 + 1 + 2 * kNonceBytes];
  unsigned char* at = message;
  at = std::copy(kTag, kTag + sizeof kTag - 1, at);
  *at++ = static_cast<unsigned char>(role);
  at = std::copy(server_nonce.begin(), server_nonce.end(), at);
  std::copy(client_nonce.begin(), client_nonce.end(), at);
  Proof proof;
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), message, sizeof message, proof.data(),
           &length) == nullptr ||
      length != proof.size())
    fail(NNP_INTERNAL, "tcp store: OpenSSL could not compute the handshake's HMAC-SHA256");
  return proof;
}

bool same_proof(const unsigned char* given, const Proof& expected) {
  return CRYPTO_memcmp(given, expected.data(), expected.size()) == 0;
}

void check_secret(const std::string& secret) {
  if (secret.size() < kMinSecret || secret.size() > kMaxSecret)
    fail(NNP_INVALID_ARGUMENT, "tcp store: the job's secret (NNP_JOB_TOKEN) is ", secret.size(),
         " bytes; it must be ", kMinSecret, " to ", kMaxSecret,
         " (the same on every rank; `openssl rand -hex 32` makes a good one)");
}

Hello make_hello(const Nonce& server_nonce) {
  Hello hello;
  char* at = std::copy(std::begin(kMagic), std::end(kMagic), hello.data());
  *at++ = static_cast<char>(kVersion);
  std::copy(server_nonce.begin(), server_nonce.end(), reinterpret_cast<unsigned char*>(at));
  return hello;
}

ServerState::ServerState(std::string secret, Outbox& outbox) : secret_(std::move(secret)), outbox_(outbox) {
  check_secret(secret_);
}

bool ServerState::open(int id) {
  Connection& connection = connections_[id];
  connection = Connection{};
  connection.nonce = random_nonce();
  const Hello hello = make_hello(connection.nonce);
  return outbox_.send(id, hello.data(), hello.size());
}

bool ServerState::proven(int id) const {
  auto found = connections_.find(id);
  return found != connections_.end() && found->second.proven;
}

void ServerState::close(int id) {
  connections_.erase(id);
  for (auto& [key, readers] : waiting_) readers.erase(std::remove(readers.begin(), readers.end(), id), readers.end());
}

std::vector<int> ServerState::take_broken() { return std::exchange(broken_, {}); }

ServerState::Verdict ServerState::prove_or_refuse(int id, Connection& connection, size_t& consumed) {
  const std::vector<char>& in = connection.unread;
  if (in.size() < kAnswerBytes) return Verdict::ok;  // the rest of the answer is still coming
  Nonce client_nonce;
  std::memcpy(client_nonce.data(), in.data(), kNonceBytes);
  const auto* given = reinterpret_cast<const unsigned char*>(in.data() + kNonceBytes);
  if (!same_proof(given, prove(secret_, Role::client, connection.nonce, client_nonce))) return Verdict::refused;
  const Proof mine = prove(secret_, Role::server, connection.nonce, client_nonce);
  if (!outbox_.send(id, mine.data(), mine.size())) return Verdict::malformed;
  connection.proven = true;
  consumed = kAnswerBytes;
  return Verdict::ok;
}

ServerState::Verdict ServerState::receive(int id, const char* data, size_t size) {
  auto found = connections_.find(id);
  if (found == connections_.end()) return Verdict::malformed;
  Connection& connection = found->second;
  // Before its proof is checked a connection may send only its answer (a
  // client waits for the server's proof before its first request).
  if (!connection.proven && connection.unread.size() + size > kAnswerBytes) return Verdict::refused;
  std::vector<char>& in = connection.unread;
  in.insert(in.end(), data, data + size);
  // The consumed bytes are erased once (linear in what arrived).
  size_t consumed = 0;
  if (!connection.proven) {
    const Verdict verdict = prove_or_refuse(id, connection, consumed);
    if (verdict != Verdict::ok || !connection.proven) return verdict;
  }
  for (;;) {
    const int64_t used = request(id, in.data() + consumed, in.size() - consumed);
    if (used < 0) return Verdict::malformed;
    if (used == 0) break;
    consumed += static_cast<size_t>(used);
  }
  in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(consumed));
  return Verdict::ok;
}

int64_t ServerState::request(int id, const char* in, size_t size) {
  if (size == 0) return 0;
  const char op = in[0];
  if (op != 'S' && op != 'G') return -1;
  uint32_t key_length = 0;
  if (size < 5) return 0;
  std::memcpy(&key_length, in + 1, 4);
  if (key_length == 0 || key_length > kMaxKey) return -1;
  size_t at = 5 + key_length;
  if (size < at) return 0;
  std::string key(in + 5, key_length);
  if (op == 'G') {
    auto found = values_.find(key);
    if (found != values_.end()) {
      if (!reply(id, found->second)) return -1;
    } else {
      waiting_[std::move(key)].push_back(id);
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
  if (!outbox_.send(id, "A", 1)) return -1;
  auto waiting = waiting_.find(key);
  if (waiting != waiting_.end()) {
    std::vector<int> readers = std::move(waiting->second);
    waiting_.erase(waiting);
    for (int reader : readers)
      if (!reply(reader, value)) broken_.push_back(reader);
  }
  return static_cast<int64_t>(at + value_length);
}

bool ServerState::reply(int id, const std::vector<char>& value) {
  const uint64_t length = value.size();
  return outbox_.send(id, &length, 8) && outbox_.send(id, value.data(), value.size());
}

}  // namespace nnp::core::comm::wire
