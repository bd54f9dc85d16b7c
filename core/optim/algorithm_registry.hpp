// The optimizer algorithms: every update rule by kind ("SGD", "acme.Lion"),
// the built-in library's or a plugin's, registered through the table
// (nnp_api.register_optimizer). optimizer_create looks kinds up here.
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <vector>

#include "../named_registry.hpp"

namespace nnp::core::optim {

struct Algorithm {
  std::string name;  // the kind: "SGD", "acme.Lion"
  std::string doc;
  std::vector<std::string> option_names;
  std::vector<double> option_defaults;
  std::vector<std::string> host_state;
  decltype(nnp_optimizer_algorithm::check_options) check_options = nullptr;
  decltype(nnp_optimizer_algorithm::update) update = nullptr;
  void* user_data = nullptr;
  std::string origin;  // "core", "the application" or the plugin's path (for messages)
  // The C view optimizer_kind_info hands out (pointers into the above).
  std::vector<const char*> c_names;
  std::vector<const char*> c_host_state;  // NULL-terminated
  nnp_optimizer_algorithm c_algorithm{};

  // The index of option `name`, or -1.
  int32_t option_index(const std::string& name) const;
  bool is_host_state(const std::string& name) const;
  void bind_c_view();
};

// Checks an algorithm given through the C API and copies it (strings too).
// reserved_kinds: whether plain names ("SGD") may be taken - the built-in
// library's; others must be "<vendor>.<Name>".
Algorithm validate_algorithm(const nnp_optimizer_algorithm& algorithm, const std::string& origin, bool reserved_kinds);

// Every kind optimizer_create knows; the built-in library's are registered
// when it is first used.
NamedRegistry<Algorithm>& algorithms();
// The algorithm of `kind`, failing with NNP_NOT_FOUND and the known kinds.
const Algorithm& algorithm(const std::string& kind);

}  // namespace nnp::core::optim
