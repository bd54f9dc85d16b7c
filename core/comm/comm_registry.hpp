// The communication backends that plugins registered (nnp_comm, plugin.h):
// the third plugin kind, beside device backends and layer types. Records
// are never removed, so pointers to them live until process exit.
#pragma once

#include <nnp/plugin.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace nnp::core::comm {

struct CommRecord {
  nnp_comm table;
  std::string name, backends, plugin_path;
  std::vector<std::string> backend_names;  // backends split at ','

  bool serves(const std::string& backend) const;
  // The plugin's reason it cannot form groups here, or nullptr.
  const char* unavailable_reason() const;
  // asked: whether to ask the plugin if it can work here (which may open its
  // runtime); without, unavailable_reason is NULL (comm_summary).
  nnp_comm_info info(bool asked = true) const {
    return nnp_comm_info{sizeof(nnp_comm_info), name.c_str(), plugin_path.c_str(), backends.c_str(),
                         asked ? unavailable_reason() : nullptr};
  }
};

// Checks a plugin's table (struct_size, name, the backends list, required
// slots) and copies it at the size this core knows. Throws naming the slot.
nnp_comm validated_comm(const nnp_comm& table);

class CommRegistry {
 public:
  static CommRegistry& instance();
  const CommRecord* find(const std::string& name) const;
  int32_t count() const;
  const CommRecord& at(int32_t i) const;  // throws NNP_NOT_FOUND past the end
  // Called when a plugin's registrations are committed (nothing can fail).
  void add(const nnp_comm& table, const std::string& plugin_path);

 private:
  mutable std::mutex mutex_;
  std::deque<CommRecord> records_;
};

}  // namespace nnp::core::comm
