// libFuzzer target: rank 0's tcp store (its handshake and requests, the
// server side of core/comm/store_protocol.hpp) on bytes from four
// connections at once, as strangers and ranks would send them. The input is
// a script: which connection, then open it, close it, complete its handshake
// with the job's secret (so requests behind the handshake are reached; the
// fuzzer cannot forge the HMAC), feed it raw bytes, or make its next sends
// fail. Checked: nothing a connection sends before proving the secret is
// answered but the hello, and every answer to a proven one is framed as the
// protocol says.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../core/comm/store_protocol.hpp"
#include "../../core/error.hpp"

namespace {

namespace wire = nnp::core::comm::wire;
const std::string kSecret = "the fuzzed job's secret, 32 bytes";

class Recorder : public wire::Outbox {
 public:
  bool send(int connection, const void* data, size_t size) override {
    if (failing[connection]) return false;
    const char* bytes = static_cast<const char*>(data);
    sent[connection].insert(sent[connection].end(), bytes, bytes + size);
    return true;
  }
  std::map<int, std::vector<char>> sent;
  std::map<int, bool> failing;
};

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  bool empty() const { return at_ >= size_; }
  std::vector<char> take(size_t n) {
    n = std::min(n, size_ - at_);
    std::vector<char> out(data_ + at_, data_ + at_ + n);
    at_ += n;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

void check(bool ok, const char* what) {
  if (!ok) throw std::logic_error(what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Recorder outbox;
  wire::ServerState server(kSecret, outbox);
  std::map<int, bool> open;
  Bytes in(data, size);
  while (!in.empty()) {
    const int id = in.next() % 4;
    const uint8_t action = in.next();
    if (action % 8 == 0) {
      outbox.sent[id].clear();
      open[id] = server.open(id);
      if (open[id]) check(outbox.sent[id].size() == wire::kHelloBytes, "the hello is all a new connection gets");
      continue;
    }
    if (!open[id]) continue;
    if (action % 8 == 1) {
      server.close(id);
      open[id] = false;
    } else if (action % 8 == 2 && !server.proven(id)) {
      // A rank's answer to the hello this connection got.
      const std::vector<char>& hello = outbox.sent[id];
      if (hello.size() < wire::kHelloBytes) continue;
      wire::Nonce server_nonce, client_nonce;
      std::memcpy(server_nonce.data(), hello.data() + sizeof wire::kMagic + 1, server_nonce.size());
      client_nonce.fill(in.next());
      const wire::Proof proof = wire::prove(kSecret, wire::Role::client, server_nonce, client_nonce);
      std::vector<char> answer(client_nonce.begin(), client_nonce.end());
      answer.insert(answer.end(), proof.begin(), proof.end());
      const size_t before = outbox.sent[id].size();
      const auto verdict = server.receive(id, answer.data(), answer.size());
      if (verdict != wire::ServerState::Verdict::ok) {
        server.close(id);
        open[id] = false;
        continue;
      }
      check(server.proven(id), "a right proof proves the connection");
      check(outbox.sent[id].size() == before + wire::kProofBytes, "the server answers a proof with its own");
    } else if (action % 8 == 3) {
      outbox.failing[id] = !outbox.failing[id];
    } else {
      const bool proven = server.proven(id);
      const size_t before = outbox.sent[id].size();
      const std::vector<char> chunk = in.take(in.next() + (action & 0x80 ? 256u : 0u));
      const auto verdict = server.receive(id, chunk.data(), chunk.size());
      if (!proven) check(outbox.sent[id].size() == before || server.proven(id), "a stranger got an answer");
      if (verdict != wire::ServerState::Verdict::ok) {
        server.close(id);
        open[id] = false;
      }
    }
    for (int broken : server.take_broken()) {
      server.close(broken);
      open[broken] = false;
    }
  }
  return 0;
}
