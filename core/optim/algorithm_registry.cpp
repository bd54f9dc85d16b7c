#include "algorithm_registry.hpp"

#include <cctype>
#include <cmath>
#include <mutex>

#include "../builtin_library.hpp"
#include "../error.hpp"

namespace nnp::core::optim {
namespace {

std::mutex& registry_mutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

bool valid_name(const std::string& name, bool dotted) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  if (!dotted) return name.find('.') == std::string::npos || valid_name(name, true);
  const size_t dot = name.find('.');
  return dot != std::string::npos && dot != 0 && name.back() != '.';
}

constexpr int32_t kMaxOptions = 64;

}  // namespace

int32_t Algorithm::option_index(const std::string& name) const {
  for (size_t i = 0; i < option_names.size(); ++i)
    if (option_names[i] == name) return static_cast<int32_t>(i);
  return -1;
}

bool Algorithm::is_host_state(const std::string& name) const {
  for (const std::string& s : host_state)
    if (s == name) return true;
  return false;
}

Algorithm validate_algorithm(const nnp_optimizer_algorithm& c, const std::string& origin, bool reserved_kinds) {
  if (c.struct_size < NNP_OPTIMIZER_ALGORITHM_SIZE_1_15)
    fail(NNP_ABI_MISMATCH, "register_optimizer: struct_size ", c.struct_size,
         " is smaller than the first released layout (", NNP_OPTIMIZER_ALGORITHM_SIZE_1_15,
         " bytes); set it to sizeof(nnp_optimizer_algorithm)");
  Algorithm a;
  a.kind = c.kind ? c.kind : "";
  if (!valid_name(a.kind, !reserved_kinds))
    fail(NNP_INVALID_ARGUMENT, "register_optimizer: '", a.kind, "' is not a valid optimizer kind; use ",
         reserved_kinds ? "letters, digits and '_'" : "'<vendor>.<Name>' (letters, digits, '_')",
         reserved_kinds ? "" : ": plain names are nnplug's");
  if (!c.update) fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, " has no update function");
  if (c.option_count < 0 || c.option_count > kMaxOptions)
    fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, ": option_count ", c.option_count,
         " is out of range (0 to ", kMaxOptions, ")");
  if (c.option_count > 0 && (!c.option_names || !c.option_defaults))
    fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, " declares options but gives no names or defaults");
  a.doc = c.doc ? c.doc : "";
  a.check_options = c.check_options;
  a.update = c.update;
  a.user_data = c.user_data;
  a.origin = origin;
  for (int32_t i = 0; i < c.option_count; ++i) {
    const std::string name = c.option_names[i] ? c.option_names[i] : "";
    if (!valid_name(name, false) || name.find('.') != std::string::npos)
      fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, ": option ", i, " ('", name,
           "') is not a valid name (letters, digits, '_')");
    if (a.option_index(name) >= 0)
      fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, " declares option '", name, "' twice");
    if (!std::isfinite(c.option_defaults[i]))
      fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, ": option '", name, "' has a default that is not finite");
    a.option_names.push_back(name);
    a.option_defaults.push_back(c.option_defaults[i]);
  }
  if (c.host_state)
    for (int32_t i = 0; c.host_state[i]; ++i) {
      if (i >= kMaxOptions)
        fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.kind, ": host_state has more than ", kMaxOptions,
             " names (is it NULL-terminated?)");
      a.host_state.emplace_back(c.host_state[i]);
    }
  return a;
}

AlgorithmRegistry& AlgorithmRegistry::instance() {
  static AlgorithmRegistry* registry = [] {
    auto* r = new AlgorithmRegistry();
    for (const Algorithm& a : builtin_library().algorithms) r->add(a);
    return r;
  }();
  return *registry;
}

void AlgorithmRegistry::add(Algorithm algorithm) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const Algorithm& existing : algorithms_)
    if (existing.kind == algorithm.kind)
      fail(NNP_INVALID_ARGUMENT, "optimizer '", algorithm.kind, "' is already registered (by ", existing.origin, ")");
  algorithms_.push_back(std::move(algorithm));
  Algorithm& a = algorithms_.back();
  for (const std::string& name : a.option_names) a.c_names.push_back(name.c_str());
  for (const std::string& name : a.host_state) a.c_host_state.push_back(name.c_str());
  a.c_host_state.push_back(nullptr);
  a.c_algorithm = nnp_optimizer_algorithm{sizeof(nnp_optimizer_algorithm),
                                          a.kind.c_str(),
                                          a.doc.c_str(),
                                          a.c_names.data(),
                                          a.option_defaults.data(),
                                          static_cast<int32_t>(a.option_names.size()),
                                          a.c_host_state.data(),
                                          a.check_options,
                                          a.update,
                                          a.user_data};
}

const Algorithm* AlgorithmRegistry::find(const std::string& kind) const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const Algorithm& a : algorithms_)
    if (a.kind == kind) return &a;
  return nullptr;
}

const Algorithm& AlgorithmRegistry::get(const std::string& kind) const {
  if (const Algorithm* a = find(kind)) return *a;
  std::string known;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (const Algorithm& a : algorithms_) known += (known.empty() ? "" : ", ") + a.kind;
  }
  fail(NNP_NOT_FOUND, "unknown optimizer '", kind, "' (", known, ")");
}

int32_t AlgorithmRegistry::count() const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return static_cast<int32_t>(algorithms_.size());
}

const Algorithm& AlgorithmRegistry::at(int32_t i) const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (i < 0 || i >= static_cast<int32_t>(algorithms_.size()))
    fail(NNP_NOT_FOUND, "optimizer kind index ", i, " is out of range (", algorithms_.size(), " kinds)");
  return algorithms_[static_cast<size_t>(i)];
}

}  // namespace nnp::core::optim
