// Gloo's rendezvous store over the core's nnp_comm_store: how the ranks of
// a group swap their addresses in connectFullMesh.
#pragma once

#include <gloo/rendezvous/store.h>
#include <nnp/plugin.h>

#include <chrono>
#include <string>
#include <vector>

namespace nnp::gloo_comm {

class StoreAdapter : public ::gloo::rendezvous::Store {
 public:
  StoreAdapter(const nnp_api* api, const nnp_comm_store* store, int64_t timeout_ms)
      : api_(api), store_(store), timeout_ms_(timeout_ms) {}
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, std::chrono::milliseconds(timeout_ms_)); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  [[noreturn]] void failed(const std::string& what, nnp_status status) const;
  const nnp_api* api_;
  const nnp_comm_store* store_;
  int64_t timeout_ms_;
};

}  // namespace nnp::gloo_comm
