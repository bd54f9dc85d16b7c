// Finds, validates and loads plugins (DESIGN.md §2 rules 6-9) and owns the
// backends they register. Plugins are never unloaded: the registry lives
// until process exit and keeps every shared library open.
#pragma once

#include <nnp/plugin.h>

#include <string>
#include <vector>

#include "backend_record.hpp"
#include "nn/layer_registry.hpp"
#include "onnx/graph_ops.hpp"
#include "optim/algorithm_registry.hpp"

namespace nnp::core {

// What the built-in library (library/library.hpp) registered when it started.
struct BuiltinLibrary {
  std::vector<nn::LayerType> layers;
  std::vector<optim::Algorithm> algorithms;
  std::vector<onnx::GraphOp> graph_ops;
};

struct PluginRecord {
  std::string path;
  std::string name;
  std::string version;
  std::string description;
  bool loaded = false;
  nnp_status status = NNP_OK;
  std::string reason;

  // What plugin_info answers; its strings live as long as the record.
  nnp_plugin_info info() const {
    return nnp_plugin_info{sizeof(nnp_plugin_info), path.c_str(), name.c_str(),   version.c_str(),
                           loaded ? 1 : 0,          status,       reason.c_str(), description.c_str()};
  }
};

class PluginRegistry {
 public:
  static PluginRegistry& instance();

  // Loads one plugin file now. Refusals are recorded and thrown.
  void load(const std::string& path);
  // What load does once it has a file's descriptor: validate it, run init,
  // commit what init registered. origin stands for the path in the record and
  // messages. For plugins linked into a program, and the descriptor fuzz target.
  void load_descriptor(const nnp_plugin_descriptor* descriptor, const std::string& origin);
  // Loads every plugin of the search folders, once per process.
  void discover();
  std::vector<std::string> search_folders() const;
  // The folders joined with ':', as plugin_search_path answers.
  std::string search_path() const;

  int32_t plugin_count() const;
  // A snapshot of record i; the strings of the returned pointer live until
  // process exit (records are never removed or changed once complete).
  const PluginRecord& plugin(int32_t i) const;

  int32_t backend_count() const;
  const BackendRecord& backend(int32_t id) const;
  const BackendRecord* find_backend(const std::string& name) const;

  // Called from a plugin's init through the API table.
  static nnp_status register_backend(nnp_plugin_host* host, const nnp_backend* backend);
  static nnp_status register_layer_type(nnp_plugin_host* host, const nnp_layer_type* type);
  static nnp_status register_optimizer(nnp_plugin_host* host, const nnp_optimizer_algorithm* algorithm);
  static nnp_status register_graph_op(nnp_plugin_host* host, const nnp_graph_op* op);
  // Runs the built-in library's init (library/library.hpp) with a host of
  // its own, as a plugin's runs, whose registrations may take the reserved
  // names and are staged, not committed: builtin_library.hpp runs it once and
  // hands each registry its part when that registry is made.
  using LibraryInit = nnp_status (*)(const nnp_api* api, nnp_plugin_host* host);
  static BuiltinLibrary run_builtin_library(LibraryInit init);
  static nnp_status register_comm(nnp_plugin_host* host, const nnp_comm* comm);

 private:
  PluginRegistry() = default;
  struct Impl;
  Impl& impl() const;
};

}  // namespace nnp::core
