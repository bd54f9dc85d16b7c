// The TCP store's wire protocol, apart from its sockets so that it can be
// tested and fuzzed on bytes alone.
//
// A connection opens with a handshake. The server sends its hello: "NNPS",
// the protocol version (1 byte) and a fresh 32-byte nonce. The client
// answers with its own nonce and its proof, HMAC-SHA256 under the job's
// secret of a role tag and both nonces; the server checks the proof in
// constant time and answers with its own (another role tag), so each side
// knows the other holds the secret before one request is read. A stranger
// learns nothing from the hello and can replay nothing (the nonces are
// fresh). Then requests, one at a time:
//   'S' u32 key-length key u64 value-length value   answered 'A'
//   'G' u32 key-length key                          answered u64 length, value
//                                                   once the key exists
// Numbers are little-endian, as every rank's host is. Lengths are bounded
// before anything is allocated; anything else closes the connection.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nnp::core::comm::wire {

constexpr size_t kNonceBytes = 32;
constexpr size_t kProofBytes = 32;
constexpr char kMagic[4] = {'N', 'N', 'P', 'S'};
constexpr uint8_t kVersion = 1;
constexpr size_t kHelloBytes = sizeof kMagic + 1 + kNonceBytes;
constexpr size_t kAnswerBytes = kNonceBytes + kProofBytes;  // the client's nonce and proof
constexpr size_t kMaxKey = 4096;
constexpr size_t kMinSecret = 16;
constexpr size_t kMaxSecret = 4096;

using Nonce = std::array<unsigned char, kNonceBytes>;
using Proof = std::array<unsigned char, kProofBytes>;
using Hello = std::array<char, kHelloBytes>;

enum class Role : char { client = 'c', server = 's' };

// A nonce from OpenSSL's generator; throws NNP_INTERNAL if it has none.
Nonce random_nonce();
// HMAC-SHA256(secret, "nnplug store " role server_nonce client_nonce).
Proof prove(const std::string& secret, Role role, const Nonce& server_nonce, const Nonce& client_nonce);
// Whether `given` (kProofBytes) is `expected`, in time independent of where they differ.
bool same_proof(const unsigned char* given, const Proof& expected);
// Throws NNP_INVALID_ARGUMENT naming the fix when a job secret is unusable.
void check_secret(const std::string& secret);
Hello make_hello(const Nonce& server_nonce);

// Where the server's answers go: a socket, or a buffer in tests.
class Outbox {
 public:
  virtual ~Outbox() = default;
  // Sends all of data to the connection, or returns false.
  virtual bool send(int connection, const void* data, size_t size) = 0;
};

// The server's side: the keys, who waits for which, and each connection's
// handshake and unread bytes. Connections are named by an int (a socket).
class ServerState {
 public:
  enum class Verdict {
    ok,         // go on reading
    refused,    // the connection did not prove the secret: close and log it
    malformed,  // a proven connection broke the protocol, or could not be answered: close it
  };
  ServerState(std::string secret, Outbox& outbox);

  // A new connection: sends its hello; false if that failed (close it).
  bool open(int connection);
  // What the connection sent: handles every whole request in it.
  Verdict receive(int connection, const char* data, size_t size);
  // Forgets the connection (it closed, or was closed).
  void close(int connection);
  bool proven(int connection) const;
  size_t connections() const { return connections_.size(); }
  // Connections whose answer could not be sent while another's request was
  // handled (a reader of a key just set): the caller closes them.
  std::vector<int> take_broken();

 private:
  struct Connection {
    Nonce nonce{};
    bool proven = false;
    std::vector<char> unread;
  };
  Verdict prove_or_refuse(int id, Connection& connection, size_t& consumed);
  // The request at the front of the bytes: its length, 0 if incomplete, -1 if malformed.
  int64_t request(int id, const char* in, size_t size);
  bool reply(int id, const std::vector<char>& value);

  std::string secret_;
  Outbox& outbox_;
  std::map<int, Connection> connections_;
  std::map<std::string, std::vector<char>> values_;
  std::map<std::string, std::vector<int>> waiting_;
  std::vector<int> broken_;
};

}  // namespace nnp::core::comm::wire
