#include "gloo_store.hpp"

#include <stdexcept>

namespace nnp::gloo_comm {

void StoreAdapter::failed(const std::string& what, nnp_status status) const {
  const char* message = api_->last_status() == status ? api_->last_error() : "";
  throw std::runtime_error(what + ": " + (message && *message ? message : api_->status_name(status)));
}

void StoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  const nnp_status status = store_->set(store_->state, key.c_str(), data.data(), data.size());
  if (status != NNP_OK) failed("rendezvous: setting '" + key + "'", status);
}

std::vector<char> StoreAdapter::get(const std::string& key) {
  size_t size = 0;
  nnp_status status = store_->get(store_->state, key.c_str(), nullptr, 0, &size, timeout_ms_);
  if (status != NNP_OK) failed("rendezvous: waiting for '" + key + "'", status);
  std::vector<char> value(size);
  status = store_->get(store_->state, key.c_str(), value.data(), value.size(), &size, timeout_ms_);
  if (status != NNP_OK) failed("rendezvous: reading '" + key + "'", status);
  value.resize(std::min(size, value.size()));
  return value;
}

void StoreAdapter::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const std::string& key : keys) {
    size_t size = 0;
    const nnp_status status = store_->get(store_->state, key.c_str(), nullptr, 0, &size, timeout.count());
    if (status != NNP_OK) failed("rendezvous: waiting for '" + key + "'", status);
  }
}

}  // namespace nnp::gloo_comm
