#include "plugin_registry.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#define BOOST_DLL_USE_STD_FS
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include "api_table.hpp"
#include "comm/comm_registry.hpp"
#include "error.hpp"
#include "kernel_fallback.hpp"
#include "native_libraries.hpp"
#include "nn/layer_registry.hpp"
#include "optim/algorithm_registry.hpp"
#include "plugin_file.hpp"

namespace fs = std::filesystem;

// The registration state handed to a plugin's init.
struct nnp_plugin_host {
  const std::string* path = nullptr;
  const std::string* name = nullptr;  // the plugin's, from its descriptor
  bool active = false;
  // The file ships with nnplug (it lies in the plugin folder beside libnnp):
  // only such a file may take a reserved name.
  bool ships_with_nnplug = false;
  std::vector<std::pair<nnp_backend, nnp_kernels>> staged;
  std::vector<nnp::core::nn::LayerType> staged_layers;
  std::vector<nnp::core::optim::Algorithm> staged_algorithms;
  std::vector<nnp::core::onnx::GraphOp> staged_graph_ops;
  std::vector<nnp_comm> staged_comms;
  nnp_status failure = NNP_OK;
  std::string failure_reason;
};

namespace nnp::core {
namespace {

constexpr int32_t kMaxBackends = 64;

// Set while this thread runs a plugin's init: discovery is then skipped (the
// plugin sees what is loaded so far) instead of deadlocking on itself.
thread_local bool in_plugin_init = false;

// Copies a plugin's struct at the size this core knows; fields the plugin
// does not have stay zero (NULL = not provided).
template <typename T>
T copy_struct(const T& from) {
  T to{};
  std::memcpy(&to, &from, std::min(from.struct_size, sizeof(T)));
  to.struct_size = sizeof(T);
  return to;
}

// Backend names and layer namespaces that belong to what ships with nnplug:
// a plugin from anywhere else that takes one is impersonating it.
bool reserved_backend_name(const std::string& name) {
  return name == "cpu" || name == "reference" || name == "cuda" || name == "rocm";
}
bool reserved_layer_name(const std::string& name) { return name.rfind("nn.", 0) == 0 || name.rfind("core.", 0) == 0; }
bool reserved_plugin_name(const std::string& name) { return name.rfind("nnplug.", 0) == 0; }
bool reserved_comm_name(const std::string& name) { return name == "gloo" || name == "nccl" || name == "mpi"; }

// <prefix>/lib/nnplug/plugins beside libnnp.so (the build tree mirrors it),
// found once: libnnp does not move.
const fs::path& shipped_plugin_folder() {
  static const fs::path folder = [] {
    std::error_code ec;
    fs::path self = boost::dll::this_line_location(ec);
    if (ec) return fs::path();
    fs::path plugins = (self.parent_path() / "nnplug" / "plugins").lexically_normal();
    fs::path canonical = fs::weakly_canonical(plugins, ec);
    return ec ? plugins : canonical;
  }();
  return folder;
}

// path is canonical already (the loader indexes records by canonical path).
bool ships_with_nnplug(const std::string& path) {
  return !shipped_plugin_folder().empty() && fs::path(path).parent_path() == shipped_plugin_folder();
}

bool valid_backend_name(const char* name) {
  if (name == nullptr || *name == '\0') return false;
  for (const char* c = name; *c; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
  return true;
}

// The name of the first NULL required slot (plugin.h's lists), or nullptr.
#define NNP_NULL_SLOT(slot) \
  if (!table.slot) return #slot;
const char* missing_backend_slot(const nnp_backend& table) {
  NNP_BACKEND_REQUIRED_SLOTS(NNP_NULL_SLOT)
  return nullptr;
}
#undef NNP_NULL_SLOT
// The same for the kernel table, less the slots the backend declared it
// lacks (nnp_backend.missing_kernels: bit i is the list's i-th slot).
#define NNP_NULL_KERNEL(slot)                              \
  if (!table.slot && !(lacks >> index & 1u)) return #slot; \
  ++index;
const char* missing_kernel_slot(const nnp_kernels& table, uint32_t lacks) {
  int index = 0;
  NNP_KERNELS_REQUIRED_SLOTS(NNP_NULL_KERNEL)
  return nullptr;
}
#undef NNP_NULL_KERNEL

bool looks_like_shared_library(const fs::path& path) {
  std::string name = path.filename().string();
  return (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) || name.find(".so.") != std::string::npos;
}

}  // namespace

struct PluginRegistry::Impl {
  std::recursive_mutex mutex;
  std::deque<PluginRecord> plugins;
  std::deque<std::shared_ptr<boost::dll::shared_library>> libraries;  // kept open until exit
  std::map<std::string, size_t> by_path;                              // canonical path -> plugin index
  std::set<std::string> loaded_names;
  std::array<std::unique_ptr<BackendRecord>, kMaxBackends> backends;
  std::atomic<int32_t> backend_count{0};
  std::once_flag discovered;
  std::deque<nnp_plugin_host> hosts;  // every init's, never freed
  std::set<const nnp_plugin_host*> known_hosts;

  // A host pointer from a plugin: one nnplug handed to an init that is
  // still running. Checked before anything reads through it.
  void check_host(const nnp_plugin_host* host, const char* entry) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (known_hosts.count(host) == 0)
      fail(NNP_INVALID_ARGUMENT, entry, ": the host pointer is not one nnplug passed to a plugin's init");
    if (!host->active)
      fail(NNP_INVALID_ARGUMENT, entry,
           ": called after its plugin's init returned (the host pointer is valid only during init)");
  }

  const BackendRecord* find(const std::string& name) const {
    int32_t count = backend_count.load(std::memory_order_acquire);
    for (int32_t i = 0; i < count; ++i)
      if (backends[i]->name() == name) return backends[i].get();
    return nullptr;
  }

  // Loads and records one file; returns its record.
  const PluginRecord& load(const std::string& requested) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    // Before canonicalising, which would resolve a relative path against
    // whatever the working directory happens to be.
    if (!fs::path(requested).is_absolute())
      fail(NNP_INVALID_ARGUMENT, "load_plugin: plugin path '", requested,
           "' is not absolute (a relative path is never resolved against the working directory); pass an "
           "absolute path");
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(fs::path(requested), ec);
    std::string key = ec ? requested : canonical.string();
    if (auto it = by_path.find(key); it != by_path.end()) return plugins[it->second];
    return record(key, [this](PluginRecord& r) { load_into(r); });
  }

  // Validates a descriptor and runs its init, with no file behind it.
  const PluginRecord& load_descriptor(const nnp_plugin_descriptor* descriptor, const std::string& origin) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    return record(origin, [&](PluginRecord& r) { register_from(r, descriptor, nullptr); });
  }

  // Runs one attempt to load and keeps its record, refused or not.
  template <typename Attempt>
  const PluginRecord& record(const std::string& origin, Attempt&& attempt) {
    PluginRecord record;
    record.path = origin;
    try {
      attempt(record);
      record.loaded = true;
    } catch (...) {  // any failure (a filesystem error, bad_alloc) is this entry's refusal
      record.status = record_current_exception();
      record.reason = last_error_message();
      set_last_error(NNP_OK, "");
    }
    // Indexed only once the record exists: a path asked for again finds it.
    plugins.push_back(std::move(record));
    by_path[origin] = plugins.size() - 1;
    if (plugins.back().loaded) loaded_names.insert(plugins.back().name);
    return plugins.back();
  }

  void load_into(PluginRecord& record) {
    const std::string& path = record.path;
    if (!fs::path(path).is_absolute())
      fail(NNP_INVALID_ARGUMENT, "plugin path '", path, "' is not absolute; pass an absolute path");
    check_plugin_file(path);

    prepare_native_libraries();
    auto library = std::make_shared<boost::dll::shared_library>();
    try {
      library->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      fail(NNP_IO_ERROR, "not a loadable shared library (", e.what(), ")");
    }
    if (!library->has("nnp_plugin_entry"))
      fail(NNP_NOT_FOUND,
           "exports no nnp_plugin_entry symbol, so it is not an nnplug plugin (define it with "
           "NNP_PLUGIN_ENTRY from nnp/plugin.h)");

    if (!is_function_symbol(dlsym(library->native(), "nnp_plugin_entry")))
      fail(NNP_INVALID_ARGUMENT,
           "its nnp_plugin_entry is data, not a function; define it with NNP_PLUGIN or NNP_PLUGIN_ENTRY from "
           "nnp/plugin.h");
    const nnp_plugin_descriptor* descriptor = nullptr;
    try {
      descriptor = library->get<const nnp_plugin_descriptor*()>("nnp_plugin_entry")();
    } catch (...) {
      fail(NNP_INVALID_ARGUMENT, "nnp_plugin_entry threw an exception; it must return a static descriptor");
    }
    register_from(record, descriptor, library);
    libraries.push_back(std::move(library));
  }

  // Checks the descriptor, runs init and commits what it registered.
  void register_from(PluginRecord& record, const nnp_plugin_descriptor* descriptor,
                     const std::shared_ptr<boost::dll::shared_library>& library) {
    if (descriptor == nullptr) fail(NNP_INVALID_ARGUMENT, "nnp_plugin_entry returned NULL instead of a descriptor");
    if (descriptor->struct_size < NNP_PLUGIN_DESCRIPTOR_SIZE_1_0)
      fail(NNP_ABI_MISMATCH, "descriptor struct_size ", descriptor->struct_size,
           " is smaller than the first released nnp_plugin_descriptor (", NNP_PLUGIN_DESCRIPTOR_SIZE_1_0, " bytes)");
    if (descriptor->abi_major != NNP_ABI_MAJOR)
      fail(NNP_ABI_MISMATCH, "built for ABI ", descriptor->abi_major, ".", descriptor->abi_minor,
           " but this nnplug implements ABI ", NNP_ABI_MAJOR, ".", NNP_ABI_MINOR,
           " (major versions differ): rebuild the plugin against nnplug's SDK ", NNP_ABI_MAJOR, ".x");
    if (descriptor->abi_minor > NNP_ABI_MINOR)
      fail(NNP_ABI_MISMATCH, "built for ABI ", descriptor->abi_major, ".", descriptor->abi_minor,
           ", newer than this nnplug's ABI ", NNP_ABI_MAJOR, ".", NNP_ABI_MINOR,
           ": upgrade nnplug or rebuild the plugin against this SDK");
    if (descriptor->name == nullptr || *descriptor->name == '\0') fail(NNP_INVALID_ARGUMENT, "descriptor has no name");
    record.name = descriptor->name;
    record.version = descriptor->version ? descriptor->version : "";
    // description arrived in 1.1: a 1.0 plugin's smaller descriptor lacks it.
    if (descriptor->struct_size >= NNP_PLUGIN_DESCRIPTOR_SIZE_1_1 && descriptor->description)
      record.description = descriptor->description;
    const bool shipped = library != nullptr && ships_with_nnplug(record.path);
    if (reserved_plugin_name(record.name) && !shipped)
      fail(NNP_INVALID_ARGUMENT, "plugin name '", record.name,
           "': names starting with 'nnplug.' are reserved for the plugins that ship with nnplug (in ",
           shipped_plugin_folder().string(), "); name yours '<vendor>.<name>'");
    if (loaded_names.count(record.name))
      for (const PluginRecord& other : plugins)
        if (other.loaded && other.name == record.name)
          fail(NNP_INVALID_ARGUMENT, "a plugin named '", record.name, "' is already loaded from ", other.path);
    if (descriptor->init == nullptr) fail(NNP_INVALID_ARGUMENT, "descriptor has no init function");

    // Kept until exit: a plugin that keeps the pointer and calls with it
    // after init is refused (check_host), never reads freed memory.
    hosts.emplace_back();
    nnp_plugin_host& host = hosts.back();
    known_hosts.insert(&host);
    host.path = &record.path;
    host.name = &record.name;
    host.active = true;
    host.ships_with_nnplug = shipped;
    nnp_status status = NNP_OK;
    struct InitScope {
      InitScope() { in_plugin_init = true; }
      ~InitScope() { in_plugin_init = false; }
    };
    try {
      InitScope scope;
      status = descriptor->init(api_table(), &host);
    } catch (const std::exception& e) {
      fail(NNP_INTERNAL, "init threw an exception (", e.what(), "); plugins must return a status instead");
    } catch (...) {
      fail(NNP_INTERNAL, "init threw an exception; plugins must return a status instead");
    }
    host.active = false;
    if (host.failure != NNP_OK) fail(host.failure, host.failure_reason);
    if (status != NNP_OK) {
      std::string message = last_error_status() == status ? last_error_message() : "";
      fail(status, "init failed with status ", status, message.empty() ? "" : ": ", message);
    }
    commit(host, record.path, library);
  }

  void commit(nnp_plugin_host& host, const std::string& path,
              const std::shared_ptr<boost::dll::shared_library>& library) {
    nn::LayerRegistry& layers = nn::LayerRegistry::instance();
    for (const nn::LayerType& t : host.staged_layers)
      if (const nn::LayerType* existing = layers.find(t.name))
        fail(NNP_INVALID_ARGUMENT, "layer type '", t.name, "' is already registered by ", existing->origin);
    auto& algorithms = optim::algorithms();
    for (const optim::Algorithm& a : host.staged_algorithms)
      if (const optim::Algorithm* existing = algorithms.find(a.name))
        fail(NNP_INVALID_ARGUMENT, "optimizer '", a.name, "' is already registered by ", existing->origin);
    auto& graph_ops = onnx::graph_ops();
    for (const onnx::GraphOp& op : host.staged_graph_ops)
      if (const onnx::GraphOp* existing = graph_ops.find(op.name))
        fail(NNP_INVALID_ARGUMENT, "graph op '", op.name, "' is already registered by ", existing->origin);
    int32_t count = backend_count.load();
    if (count + static_cast<int32_t>(host.staged.size()) > kMaxBackends)
      fail(NNP_INVALID_ARGUMENT, "too many backends (at most ", kMaxBackends, ")");
    comm::CommRegistry& comms = comm::CommRegistry::instance();
    for (const nnp_comm& c : host.staged_comms)
      if (const comm::CommRecord* existing = comms.find(c.name))
        fail(NNP_INVALID_ARGUMENT, "communication backend '", c.name, "' is already registered by ",
             existing->plugin_path);
    // Nothing can fail from here on: a refused plugin leaves nothing behind.
    for (nn::LayerType& t : host.staged_layers) layers.add(std::move(t));
    for (optim::Algorithm& a : host.staged_algorithms) algorithms.add(std::move(a));
    for (onnx::GraphOp& op : host.staged_graph_ops) graph_ops.add(std::move(op));
    for (const nnp_comm& c : host.staged_comms) comms.add(c, path);
    for (auto& [table, kernels] : host.staged) {
      backends[count] = std::make_unique<BackendRecord>(count, table, kernels, path, library);
      ++count;
      backend_count.store(count, std::memory_order_release);  // publish the complete record
    }
  }
};

PluginRegistry& PluginRegistry::instance() {
  static PluginRegistry* registry = new PluginRegistry();  // never destroyed: plugins stay loaded
  return *registry;
}

PluginRegistry::Impl& PluginRegistry::impl() const {
  static Impl* state = new Impl();
  return *state;
}

void PluginRegistry::load(const std::string& path) {
  const PluginRecord& record = impl().load(path);
  if (!record.loaded) fail(record.status, "plugin ", record.path, ": ", record.reason);
}

void PluginRegistry::load_descriptor(const nnp_plugin_descriptor* descriptor, const std::string& origin) {
  const PluginRecord& record = impl().load_descriptor(descriptor, origin);
  if (!record.loaded) fail(record.status, "plugin ", record.path, ": ", record.reason);
}

std::vector<std::string> PluginRegistry::search_folders() const {
  std::vector<std::string> folders;
  if (const char* env = std::getenv("NNP_PLUGIN_PATH")) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) folders.push_back(fs::absolute(list.substr(start, end - start)).lexically_normal().string());
      start = end + 1;
    }
  }
  if (!shipped_plugin_folder().empty()) folders.push_back(shipped_plugin_folder().string());
  return folders;
}

void PluginRegistry::discover() {
  if (in_plugin_init) return;
  std::call_once(impl().discovered, [this] {
    for (const std::string& folder : search_folders()) {
      std::error_code ec;
      if (!fs::is_directory(folder, ec)) continue;
      std::vector<std::string> files;
      // An entry the folder cannot list ends the listing of that folder only.
      for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        if (looks_like_shared_library(it->path())) files.push_back(it->path().string());
      std::sort(files.begin(), files.end());
      for (const std::string& file : files) impl().load(file);
    }
  });
}

std::string PluginRegistry::search_path() const {
  std::string joined;
  for (const std::string& folder : search_folders()) joined += (joined.empty() ? "" : ":") + folder;
  return joined;
}

int32_t PluginRegistry::plugin_count() const {
  std::lock_guard<std::recursive_mutex> lock(impl().mutex);
  return static_cast<int32_t>(impl().plugins.size());
}

const PluginRecord& PluginRegistry::plugin(int32_t i) const {
  std::lock_guard<std::recursive_mutex> lock(impl().mutex);
  if (i < 0 || i >= static_cast<int32_t>(impl().plugins.size()))
    fail(NNP_INVALID_ARGUMENT, "plugin index ", i, " is out of range (", impl().plugins.size(), " plugins)");
  return impl().plugins[static_cast<size_t>(i)];
}

int32_t PluginRegistry::backend_count() const { return impl().backend_count.load(std::memory_order_acquire); }

const BackendRecord& PluginRegistry::backend(int32_t id) const {
  if (id < 0 || id >= backend_count())
    fail(NNP_INVALID_ARGUMENT, "backend id ", id, " is out of range (", backend_count(), " backends loaded)");
  return *impl().backends[id];
}

const BackendRecord* PluginRegistry::find_backend(const std::string& name) const { return impl().find(name); }

namespace {

// Runs a registration from a plugin's init; a refusal is also recorded on the
// host, so the plugin is refused even if its init ignores the status.
template <typename Body>
void registering(nnp_plugin_host* host, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (host->failure == NNP_OK) {
      host->failure = e.status();
      host->failure_reason = e.what();
    }
    throw;
  }
}

// The built-in library's host: no plugin file; active only while its init runs.
nnp_plugin_host& library_host() {
  static const std::string origin = "core";
  static nnp_plugin_host host = [] {
    nnp_plugin_host h;
    h.path = &origin;
    h.name = &origin;
    h.ships_with_nnplug = true;
    return h;
  }();
  return host;
}

}  // namespace

BuiltinLibrary PluginRegistry::run_builtin_library(LibraryInit init) {
  nnp_plugin_host& host = library_host();
  host.active = true;
  const nnp_status status = init(api_table(), &host);
  host.active = false;
  if (host.failure != NNP_OK) fail(host.failure, "the built-in library: ", host.failure_reason);
  if (status != NNP_OK) fail(status, "the built-in library's init failed: ", last_error_message());
  return BuiltinLibrary{std::move(host.staged_layers), std::move(host.staged_algorithms),
                        std::move(host.staged_graph_ops)};
}

nnp_status PluginRegistry::register_layer_type(nnp_plugin_host* host, const nnp_layer_type* type) {
  return guard([&] {
    if (type == nullptr) fail(NNP_INVALID_ARGUMENT, "register_layer_type: type is NULL");
    if (host == &library_host()) {  // while the layer registry is being made: staged for it
      if (!host->active) fail(NNP_INVALID_ARGUMENT, "register_layer_type: the built-in library's init has returned");
      nn::LayerType t = nn::validate_layer_type(*type, *host->path, *host->name);
      for (const nn::LayerType& staged : host->staged_layers)
        if (staged.name == t.name) fail(NNP_INVALID_ARGUMENT, "layer type '", t.name, "' is registered twice");
      host->staged_layers.push_back(std::move(t));
      return;
    }
    auto refuse_reserved = [](const nn::LayerType& t) {
      if (reserved_layer_name(t.name))
        fail(NNP_INVALID_ARGUMENT, "layer type '", t.name,
             "': the nn. and core. namespaces are reserved for nnplug's built-in layers; name it "
             "'<vendor>.<Layer>'");
    };
    if (host == nullptr) {  // an application, at any time
      nn::LayerType t = nn::validate_layer_type(*type, "the application", "application");
      refuse_reserved(t);
      nn::LayerRegistry::instance().add(std::move(t));
      return;
    }
    instance().impl().check_host(host, "register_layer_type");
    registering(host, [&] {
      nn::LayerType t = nn::validate_layer_type(*type, *host->path, *host->name);
      if (!host->ships_with_nnplug) refuse_reserved(t);
      if (const nn::LayerType* existing = nn::LayerRegistry::instance().find(t.name))
        fail(NNP_INVALID_ARGUMENT, "layer type '", t.name, "' is already registered by ", existing->origin);
      for (const nn::LayerType& staged : host->staged_layers)
        if (staged.name == t.name) fail(NNP_INVALID_ARGUMENT, "layer type '", t.name, "' is registered twice");
      host->staged_layers.push_back(std::move(t));
    });
  });
}

nnp_status PluginRegistry::register_optimizer(nnp_plugin_host* host, const nnp_optimizer_algorithm* algorithm) {
  return guard([&] {
    if (algorithm == nullptr) fail(NNP_INVALID_ARGUMENT, "register_optimizer: algorithm is NULL");
    if (host == &library_host()) {  // while the built-in library starts: staged for the registries
      if (!host->active) fail(NNP_INVALID_ARGUMENT, "register_optimizer: the built-in library's init has returned");
      optim::Algorithm a = optim::validate_algorithm(*algorithm, *host->path, true);
      for (const optim::Algorithm& staged : host->staged_algorithms)
        if (staged.name == a.name) fail(NNP_INVALID_ARGUMENT, "optimizer '", a.name, "' is registered twice");
      host->staged_algorithms.push_back(std::move(a));
      return;
    }
    if (host == nullptr) {  // an application, at any time
      optim::algorithms().add(optim::validate_algorithm(*algorithm, "the application", false));
      return;
    }
    instance().impl().check_host(host, "register_optimizer");
    registering(host, [&] {
      optim::Algorithm a = optim::validate_algorithm(*algorithm, *host->path, host->ships_with_nnplug);
      if (const optim::Algorithm* existing = optim::algorithms().find(a.name))
        fail(NNP_INVALID_ARGUMENT, "optimizer '", a.name, "' is already registered by ", existing->origin);
      for (const optim::Algorithm& staged : host->staged_algorithms)
        if (staged.name == a.name) fail(NNP_INVALID_ARGUMENT, "optimizer '", a.name, "' is registered twice");
      host->staged_algorithms.push_back(std::move(a));
    });
  });
}

nnp_status PluginRegistry::register_graph_op(nnp_plugin_host* host, const nnp_graph_op* op) {
  return guard([&] {
    if (op == nullptr) fail(NNP_INVALID_ARGUMENT, "register_graph_op: op is NULL");
    if (host == nullptr) {  // an application, at any time
      onnx::graph_ops().add(onnx::validate_graph_op(*op, "the application"));
      return;
    }
    if (host != &library_host())
      instance().impl().check_host(host, "register_graph_op");
    else if (!host->active)
      fail(NNP_INVALID_ARGUMENT, "register_graph_op: the built-in library's init has returned");
    registering(host, [&] {
      onnx::GraphOp g = onnx::validate_graph_op(*op, *host->path);
      // The built-in library's are staged while the registry is being made.
      if (host != &library_host())
        if (const onnx::GraphOp* existing = onnx::graph_ops().find(g.name))
          fail(NNP_INVALID_ARGUMENT, "graph op '", g.name, "' is already registered by ", existing->origin);
      for (const onnx::GraphOp& staged : host->staged_graph_ops)
        if (staged.name == g.name) fail(NNP_INVALID_ARGUMENT, "graph op '", g.name, "' is registered twice");
      host->staged_graph_ops.push_back(std::move(g));
    });
  });
}

nnp_status PluginRegistry::register_backend(nnp_plugin_host* host, const nnp_backend* backend) {
  return guard([&] {
    if (host == nullptr) fail(NNP_INVALID_ARGUMENT, "register_backend: called outside a plugin's init (host is NULL)");
    instance().impl().check_host(host, "register_backend");
    registering(host, [&] {
      if (backend == nullptr) fail(NNP_INVALID_ARGUMENT, "register_backend: backend is NULL");
      if (backend->struct_size < NNP_BACKEND_SIZE_1_0)
        fail(NNP_ABI_MISMATCH, "nnp_backend struct_size ", backend->struct_size,
             " is smaller than the first released layout (", NNP_BACKEND_SIZE_1_0, " bytes)");
      if (!valid_backend_name(backend->name))
        fail(NNP_INVALID_ARGUMENT, "backend name '", backend->name ? backend->name : "(null)",
             "' is not valid: use lower-case letters, digits and '_'");
      nnp_backend table = copy_struct(*backend);
      // Kept: the size the backend was built with says whether it declared its dtypes.
      table.struct_size = std::min(backend->struct_size, sizeof(nnp_backend));
      std::string name = table.name;
      constexpr uint32_t kNeeded = NNP_DTYPE_BIT(NNP_F32) | NNP_DTYPE_BIT(NNP_I64) | NNP_DTYPE_BIT(NNP_BOOL);
      if (table.dtypes != 0 && (table.dtypes & kNeeded) != kNeeded)
        fail(NNP_INVALID_ARGUMENT, "backend '", name, "': its dtypes (", dtype_set_text(table.dtypes),
             ") must include f32, i64 and bool, which indices, comparisons and masks need");
      if (const char* slot = missing_backend_slot(table))
        fail(NNP_INVALID_ARGUMENT, "backend '", name, "': required slot '", slot, "' is NULL");
      const int timing_slots =
          (table.event_record != nullptr) + (table.event_elapsed_us != nullptr) + (table.event_release != nullptr);
      const int compile_slots = table.struct_size < NNP_BACKEND_SIZE_1_24
                                    ? 0
                                    : (table.capability != nullptr) + (table.compile != nullptr) +
                                          (table.execute != nullptr) + (table.release != nullptr);
      if (compile_slots != 0 && compile_slots != 4)
        fail(NNP_INVALID_ARGUMENT, "backend '", name,
             "': capability, compile, execute and release go together (set all four or none)");
      if (timing_slots != 0 && timing_slots != 3)
        fail(NNP_INVALID_ARGUMENT, "backend '", name,
             "': event_record, event_elapsed_us and event_release go together (set all three or none)");
      if (table.kernels->struct_size < NNP_KERNELS_SIZE_1_0)
        fail(NNP_ABI_MISMATCH, "backend '", name, "': nnp_kernels struct_size ", table.kernels->struct_size,
             " is smaller than the first released layout (", NNP_KERNELS_SIZE_1_0, " bytes)");
      nnp_kernels kernels = copy_struct(*table.kernels);
      // Kept: the size the backend was built with says which dtypes and ops it knows.
      kernels.struct_size = std::min(table.kernels->struct_size, sizeof(nnp_kernels));
      const uint32_t lacks = table.struct_size >= NNP_BACKEND_SIZE_1_24 ? table.missing_kernels : 0;
      if (const char* slot = missing_kernel_slot(kernels, lacks))
        fail(NNP_INVALID_ARGUMENT, "backend '", name, "': required kernel slot '", slot,
             "' is NULL; a backend without it says so in nnp_backend.missing_kernels (ABI 1.24) and the core runs "
             "its ops on the cpu backend");
      if (lacks != 0 && reserved_backend_name(name))
        fail(NNP_INVALID_ARGUMENT, "backend '", name, "' is a fallback for the others and may not lack kernels (",
             kernel_slot_text(lacks), ")");
      if (reserved_backend_name(name) && !host->ships_with_nnplug)
        fail(NNP_INVALID_ARGUMENT, "backend name '", name, "' is reserved for the backend that ships with nnplug (in ",
             shipped_plugin_folder().string(), "); name yours differently");
      if (const BackendRecord* existing = instance().find_backend(name))
        fail(NNP_INVALID_ARGUMENT, "backend name '", name, "' is already registered by ", existing->plugin_path());
      for (const auto& staged : host->staged)
        if (name == staged.first.name) fail(NNP_INVALID_ARGUMENT, "backend name '", name, "' is registered twice");
      host->staged.emplace_back(table, kernels);
    });
  });
}

nnp_status PluginRegistry::register_comm(nnp_plugin_host* host, const nnp_comm* comm) {
  return guard([&] {
    if (host == nullptr) fail(NNP_INVALID_ARGUMENT, "register_comm: called outside a plugin's init (host is NULL)");
    instance().impl().check_host(host, "register_comm");
    registering(host, [&] {
      if (comm == nullptr) fail(NNP_INVALID_ARGUMENT, "register_comm: comm is NULL");
      const nnp_comm table = comm::validated_comm(*comm);
      const std::string name = table.name;
      if (reserved_comm_name(name) && !host->ships_with_nnplug)
        fail(NNP_INVALID_ARGUMENT, "communication backend name '", name,
             "' is reserved for the one that ships with nnplug (in ", shipped_plugin_folder().string(),
             "); name yours differently");
      if (const comm::CommRecord* existing = comm::CommRegistry::instance().find(name))
        fail(NNP_INVALID_ARGUMENT, "communication backend '", name, "' is already registered by ",
             existing->plugin_path);
      for (const nnp_comm& staged : host->staged_comms)
        if (name == staged.name) fail(NNP_INVALID_ARGUMENT, "communication backend '", name, "' is registered twice");
      host->staged_comms.push_back(table);
    });
  });
}

}  // namespace nnp::core
