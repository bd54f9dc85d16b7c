#include "store.hpp"

#include <cstring>

#include "../error.hpp"

namespace nnp::core::comm {

std::unique_ptr<Store> open_tcp_store(const std::string& host, int port, bool serve, int64_t timeout_ms,
                                      const std::string& secret);

std::unique_ptr<Store> open_store(const std::string& init_method, int32_t rank, int64_t timeout_ms,
                                  const std::string& secret) {
  const std::string file = "file://", tcp = "tcp://";
  if (init_method.compare(0, file.size(), file) == 0) return open_file_store(init_method.substr(file.size()));
  if (init_method.compare(0, tcp.size(), tcp) == 0) {
    const std::string rest = init_method.substr(tcp.size());
    const size_t colon = rest.rfind(':');
    std::string host = colon == std::string::npos ? "" : rest.substr(0, colon);
    const std::string port_text = colon == std::string::npos ? "" : rest.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    int port = 0;
    bool digits = !port_text.empty() && port_text.size() <= 5;
    for (char c : port_text) digits = digits && c >= '0' && c <= '9';
    if (digits) port = std::stoi(port_text);
    if (host.empty() || !digits || port < 1 || port > 65535)
      fail(NNP_INVALID_ARGUMENT, "init_method '", init_method,
           "' is not tcp://HOST:PORT with a port from 1 to 65535 (torchrun's MASTER_ADDR and MASTER_PORT)");
    if (secret.empty())
      fail(NNP_INVALID_ARGUMENT, "init_method '", init_method,
           "': a tcp store needs the job's secret: set NNP_JOB_TOKEN to the same secret on every rank "
           "(`nnplug launch` makes one; by hand: export NNP_JOB_TOKEN=$(openssl rand -hex 32)), or pass job_token");
    return open_tcp_store(host, port, rank == 0, timeout_ms, secret);
  }
  fail(NNP_INVALID_ARGUMENT, "init_method '", init_method,
       "' is neither file:///a/folder nor tcp://host:port: say where the ranks meet");
}

PrefixedStore::PrefixedStore(Store& store, std::string prefix)
    : store_(store), prefix_(std::move(prefix)), local_address_(store.local_address()) {
  table_ = nnp_comm_store{sizeof(nnp_comm_store), this, &PrefixedStore::set, &PrefixedStore::get,
                          local_address_.empty() ? nullptr : local_address_.c_str()};
}

nnp_status PrefixedStore::set(void* state, const char* key, const void* value, size_t size) {
  return guard([&] {
    auto& self = *static_cast<PrefixedStore*>(state);
    if (key == nullptr || (value == nullptr && size > 0))
      fail(NNP_INVALID_ARGUMENT, "comm store set: key or value is NULL");
    const char* bytes = static_cast<const char*>(value);
    self.store_.set(self.prefix_ + key, std::vector<char>(bytes, bytes + size));
  });
}

nnp_status PrefixedStore::get(void* state, const char* key, void* value, size_t capacity, size_t* size,
                              int64_t timeout_ms) {
  return guard([&] {
    auto& self = *static_cast<PrefixedStore*>(state);
    if (key == nullptr || size == nullptr || (value == nullptr && capacity > 0))
      fail(NNP_INVALID_ARGUMENT, "comm store get: key, value or size is NULL");
    const std::vector<char> got = self.store_.get(self.prefix_ + key, timeout_ms < 0 ? 0 : timeout_ms);
    *size = got.size();
    if (capacity > 0) std::memcpy(value, got.data(), std::min(capacity, got.size()));
  });
}

}  // namespace nnp::core::comm
