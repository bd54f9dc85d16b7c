#include "comm_registry.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "../error.hpp"

namespace nnp::core::comm {
namespace {

bool valid_name(const char* name) {
  if (name == nullptr || *name == '\0' || std::strlen(name) > 64) return false;
  for (const char* c = name; *c; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
  return true;
}

std::vector<std::string> split_backends(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  return names;
}

#define NNP_NULL_SLOT(slot) \
  if (!table.slot) return #slot;
const char* missing_slot(const nnp_comm& table) {
  NNP_COMM_REQUIRED_SLOTS(NNP_NULL_SLOT)
  return nullptr;
}
#undef NNP_NULL_SLOT

}  // namespace

bool CommRecord::serves(const std::string& backend) const {
  return std::find(backend_names.begin(), backend_names.end(), backend) != backend_names.end();
}

const char* CommRecord::unavailable_reason() const {
  if (table.unavailable_reason == nullptr) return nullptr;
  const char* reason = table.unavailable_reason(table.state);
  return reason != nullptr && *reason != '\0' ? reason : nullptr;
}

nnp_comm validated_comm(const nnp_comm& given) {
  if (given.struct_size < NNP_COMM_SIZE_1_10)
    fail(NNP_ABI_MISMATCH, "nnp_comm struct_size ", given.struct_size, " is smaller than the first released layout (",
         NNP_COMM_SIZE_1_10, " bytes)");
  nnp_comm table{};
  std::memcpy(&table, &given, std::min(given.struct_size, sizeof(nnp_comm)));
  table.struct_size = sizeof(nnp_comm);
  if (!valid_name(table.name))
    fail(NNP_INVALID_ARGUMENT, "communication backend name '", table.name ? table.name : "(null)",
         "' is not valid: use 1 to 64 lower-case letters, digits and '_'");
  const std::string name = table.name;
  if (table.backends == nullptr || *table.backends == '\0' || std::strlen(table.backends) > 1024)
    fail(NNP_INVALID_ARGUMENT, "communication backend '", name,
         "': backends must list the device backends it serves, comma-separated (\"cpu,reference\")");
  for (const std::string& backend : split_backends(table.backends))
    if (!valid_name(backend.c_str()))
      fail(NNP_INVALID_ARGUMENT, "communication backend '", name, "': backends lists '", backend,
           "', which is not a backend name (lower-case letters, digits and '_', comma-separated)");
  if (const char* slot = missing_slot(table))
    fail(NNP_INVALID_ARGUMENT, "communication backend '", name, "': required slot '", slot, "' is NULL");
  return table;
}

CommRegistry& CommRegistry::instance() {
  static CommRegistry* registry = new CommRegistry();  // plugins stay loaded: so do their tables
  return *registry;
}

const CommRecord* CommRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const CommRecord& r : records_)
    if (r.name == name) return &r;
  return nullptr;
}

int32_t CommRegistry::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int32_t>(records_.size());
}

const CommRecord& CommRegistry::at(int32_t i) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (i < 0 || i >= static_cast<int32_t>(records_.size()))
    fail(NNP_NOT_FOUND, "comm_info: no communication backend ", i, " (there are ", records_.size(), ")");
  return records_[static_cast<size_t>(i)];
}

void CommRegistry::add(const nnp_comm& table, const std::string& plugin_path) {
  std::lock_guard<std::mutex> lock(mutex_);
  CommRecord r{table, table.name, table.backends, plugin_path, split_backends(table.backends)};
  records_.push_back(std::move(r));
}

}  // namespace nnp::core::comm
