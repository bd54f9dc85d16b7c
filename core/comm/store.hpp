// The key-value stores where the ranks of a process group meet
// (rendezvous): what init_method names. A store's keys may be written by any
// rank; a get waits until its key exists.
#pragma once

#include <nnp/plugin.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nnp::core::comm {

// Values are at most this long: a rendezvous exchanges addresses, not data.
constexpr size_t kMaxStoreValue = size_t{16} << 20;

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<char>& value) = 0;
  // Waits until key exists; throws NNP_TIMEOUT naming the key after
  // timeout_ms.
  virtual std::vector<char> get(const std::string& key, int64_t timeout_ms) = 0;
  // What messages call it ("file store /tmp/run1").
  virtual std::string describe() const = 0;
  // Whether keys an earlier run wrote can still be there (a folder can; a
  // store rank 0 serves from memory cannot).
  virtual bool may_hold_earlier_runs() const { return false; }
  // The address of this rank's interface toward the store ("10.0.0.2"),
  // where a communication backend's own listeners bind; empty when the store
  // is not on the network.
  virtual std::string local_address() const { return {}; }
  // Rank `rank` of `size` leaves the group whose keys start with prefix;
  // the last to leave deletes them, so a later run may meet in the same
  // place. A store whose keys die with a process (TCP) keeps nothing.
  // Never throws: it runs as groups are released.
  virtual void leave(const std::string& prefix, int32_t rank, int32_t size) { (void)prefix, (void)rank, (void)size; }
};

// "file:///a/folder": one file a key in a folder every rank reaches (made if
// missing; a group's keys go when its last rank leaves). Keys are hex-encoded into file names,
// so no key can name a path; values are written to a temporary file and
// renamed, so a reader never sees half a value.
std::unique_ptr<Store> open_file_store(const std::string& folder);

// The store init_method names: "file:///a/folder" or "tcp://host:port"
// (rank 0 serves it on host's address, the others connect; every connection
// proves `secret`, the job's, first). Throws NNP_INVALID_ARGUMENT for
// anything else, and for a tcp store without a usable secret.
std::unique_ptr<Store> open_store(const std::string& init_method, int32_t rank, int64_t timeout_ms,
                                  const std::string& secret);

// A view of `store` under `prefix`, as nnp_comm_store hands a plugin: its
// keys cannot reach the core's own.
class PrefixedStore {
 public:
  PrefixedStore(Store& store, std::string prefix);
  const nnp_comm_store* table() const { return &table_; }

 private:
  static nnp_status set(void* state, const char* key, const void* value, size_t size);
  static nnp_status get(void* state, const char* key, void* value, size_t capacity, size_t* size, int64_t timeout_ms);
  Store& store_;
  std::string prefix_;
  std::string local_address_;
  nnp_comm_store table_;
};

}  // namespace nnp::core::comm
