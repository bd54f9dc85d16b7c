#include "algorithm_registry.hpp"

#include <cctype>
#include <cmath>

#include "../builtin_library.hpp"
#include "../error.hpp"
#include "../plugin_registry.hpp"

namespace nnp::core::optim {
namespace {

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
  check_registered_size("register_optimizer", c.struct_size, NNP_OPTIMIZER_ALGORITHM_SIZE_1_15,
                        "nnp_optimizer_algorithm");
  Algorithm a;
  a.name = c.kind ? c.kind : "";
  if (!valid_name(a.name, !reserved_kinds))
    fail(NNP_INVALID_ARGUMENT, "register_optimizer: '", a.name, "' is not a valid optimizer kind; use ",
         reserved_kinds ? "letters, digits and '_'" : "'<vendor>.<Name>' (letters, digits, '_')",
         reserved_kinds ? "" : ": plain names are nnplug's");
  if (!c.update) fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, " has no update function");
  if (c.option_count < 0 || c.option_count > kMaxOptions)
    fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, ": option_count ", c.option_count,
         " is out of range (0 to ", kMaxOptions, ")");
  if (c.option_count > 0 && (!c.option_names || !c.option_defaults))
    fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, " declares options but gives no names or defaults");
  a.doc = c.doc ? c.doc : "";
  a.check_options = c.check_options;
  a.update = c.update;
  a.user_data = c.user_data;
  a.origin = origin;
  for (int32_t i = 0; i < c.option_count; ++i) {
    const std::string name = c.option_names[i] ? c.option_names[i] : "";
    if (!valid_name(name, false) || name.find('.') != std::string::npos)
      fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, ": option ", i, " ('", name,
           "') is not a valid name (letters, digits, '_')");
    if (a.option_index(name) >= 0)
      fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, " declares option '", name, "' twice");
    if (!std::isfinite(c.option_defaults[i]))
      fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, ": option '", name, "' has a default that is not finite");
    a.option_names.push_back(name);
    a.option_defaults.push_back(c.option_defaults[i]);
  }
  if (c.host_state)
    for (int32_t i = 0; c.host_state[i]; ++i) {
      if (i >= kMaxOptions)
        fail(NNP_INVALID_ARGUMENT, "register_optimizer: ", a.name, ": host_state has more than ", kMaxOptions,
             " names (is it NULL-terminated?)");
      a.host_state.emplace_back(c.host_state[i]);
    }
  return a;
}

void Algorithm::bind_c_view() {
  c_names.clear();
  for (const std::string& option : option_names) c_names.push_back(option.c_str());
  c_host_state.clear();
  for (const std::string& state : host_state) c_host_state.push_back(state.c_str());
  c_host_state.push_back(nullptr);
  c_algorithm = nnp_optimizer_algorithm{sizeof(nnp_optimizer_algorithm),
                                        name.c_str(),
                                        doc.c_str(),
                                        c_names.data(),
                                        option_defaults.data(),
                                        static_cast<int32_t>(option_names.size()),
                                        c_host_state.data(),
                                        check_options,
                                        update,
                                        user_data};
}

NamedRegistry<Algorithm>& algorithms() {
  static auto* registry = new NamedRegistry<Algorithm>("optimizer", builtin_library().algorithms);  // never destroyed
  return *registry;
}

const Algorithm& algorithm(const std::string& kind) {
  PluginRegistry::instance().discover();  // plugins' kinds count too
  if (const Algorithm* a = algorithms().find(kind)) return *a;
  fail(NNP_NOT_FOUND, "unknown optimizer '", kind, "' (", algorithms().names(), ")");
}

}  // namespace nnp::core::optim
