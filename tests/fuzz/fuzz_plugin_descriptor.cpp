// libFuzzer target: the plugin checks on arbitrary descriptors, backends,
// kernel tables and layer types. The input builds a descriptor (struct_size,
// ABI version, name, init) and a script its init runs: register backends with
// fuzzed sizes, names and NULL slots, register layer types, call back into the
// API, fail or throw. The core is linked in directly (its objects, not
// libnnp.so) to reach the step after dlopen. A refusal must say why and leave
// no backend or layer type behind; whatever is accepted must be usable.
#include <nnp/plugin.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/nn/layer_registry.hpp"
#include "../../core/plugin_registry.hpp"

namespace {

using nnp::core::PluginRegistry;

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  bool empty() const { return at_ >= size_; }
  // A short string from the input (may be empty, may hold any byte but NUL).
  std::string text() {
    std::string s;
    for (uint8_t n = next() % 12; n > 0 && !empty(); --n) {
      char c = static_cast<char>(next());
      s.push_back(c ? c : 'a');
    }
    return s;
  }
  size_t size_near(size_t real) {  // the real size, a smaller or larger one, or anything
    switch (next() % 5) {
      case 0: return real;
      case 1: return real - 8 * (1 + next() % 4);
      case 2: return real + 8 * (1 + next() % 4);
      case 3: return next();
      default: return real;
    }
  }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

// Slots of the backends the script registers: never called by the checks.
nnp_status unused_kernel() { return NNP_UNIMPLEMENTED; }
int32_t no_devices(void*) { return 0; }
nnp_status info(void*, int32_t, nnp_device_info*) { return NNP_UNIMPLEMENTED; }
nnp_status alloc(void*, int32_t, size_t, void**) { return NNP_OUT_OF_MEMORY; }
void release(void*, int32_t, void*, size_t) {}
nnp_status copy(void*, int32_t, void*, const void*, size_t) { return NNP_UNIMPLEMENTED; }
nnp_status sync(void*, int32_t) { return NNP_OK; }
nnp_status create_layer(const nnp_attrs*, void*, nnp_module**) { return NNP_UNIMPLEMENTED; }

// Storage for what init registers: the core copies structs at registration,
// but names and tables must outlive the call, as a plugin's statics do.
struct Script {
  Bytes* in = nullptr;
  std::deque<std::string> names;  // c_str()s stay valid as it grows
  std::vector<std::vector<unsigned char>> blocks;
  std::vector<std::string> accepted_backends;
  std::vector<std::string> accepted_layers;
};
Script* g_script = nullptr;

// Memory for a struct of `size` bytes, of which the real `T` fills the start.
template <typename T>
T* block(Script& s, size_t size, const T& value) {
  s.blocks.emplace_back(std::max(size, sizeof(T)) + 16, 0);
  std::memcpy(s.blocks.back().data(), &value, sizeof(T));
  T* out = reinterpret_cast<T*>(s.blocks.back().data());
  out->struct_size = size;
  return out;
}

const char* keep(Script& s, std::string text, bool null) {
  if (null) return nullptr;
  s.names.push_back(std::move(text));
  return s.names.back().c_str();
}

void register_backend(const nnp_api* api, nnp_plugin_host* host, Script& s) {
  Bytes& in = *s.in;
  using K = nnp_status (*)();
  nnp_kernels k{};
  void** slots = reinterpret_cast<void**>(&k.copy);
  const uint32_t kernel_nulls = in.next() % 8 == 0 ? in.next() : 0;
  for (int i = 0; i < 12; ++i)
    slots[i] = kernel_nulls & (1u << i) ? nullptr : reinterpret_cast<void*>(K(unused_kernel));
  nnp_kernels* kernels = block(s, in.size_near(sizeof(nnp_kernels)), k);

  nnp_backend b{};
  b.name = keep(s, in.next() % 2 ? "fz" + std::to_string(in.next()) : in.text(), in.next() % 16 == 0);
  b.score = static_cast<int8_t>(in.next());
  b.device_count = no_devices;
  b.device_info = info;
  b.alloc = alloc;
  b.free = release;
  b.copy_from_host = b.copy_to_host = b.copy_on_device = copy;
  b.synchronize = sync;
  b.kernels = in.next() % 16 == 0 ? nullptr : kernels;
  const uint8_t slot_nulls = in.next() % 8 == 0 ? in.next() : 0;
  void** backend_slots = reinterpret_cast<void**>(&b.device_count);
  for (int i = 0; i < 8; ++i)
    if (slot_nulls & (1u << i) && i != 1) backend_slots[i] = nullptr;  // slot 1 (unavailable_reason) may be NULL
  nnp_backend* backend = block(s, in.size_near(sizeof(nnp_backend)), b);
  const int how = in.next() % 8;
  nnp_status status = api->register_backend(how == 0 ? nullptr : host, how == 1 ? nullptr : backend);
  if (status == NNP_OK)
    s.accepted_backends.push_back(b.name);
  else if (api->last_error()[0] == '\0')
    __builtin_trap();
}

void register_layer(const nnp_api* api, nnp_plugin_host* host, Script& s) {
  Bytes& in = *s.in;
  nnp_layer_type t{};
  t.name = keep(s, in.next() % 2 ? "fz.L" + std::to_string(in.next()) : in.text(), in.next() % 16 == 0);
  t.doc = keep(s, in.text(), in.next() % 2);
  t.create = in.next() % 16 == 0 ? nullptr : create_layer;
  nnp_layer_type* type = block(s, in.size_near(sizeof(nnp_layer_type)), t);
  if (api->register_layer_type(host, type) == NNP_OK)
    s.accepted_layers.push_back(t.name);
  else if (api->last_error()[0] == '\0')
    __builtin_trap();
}

nnp_status fuzz_init(const nnp_api* api, nnp_plugin_host* host) {
  Script& s = *g_script;
  Bytes& in = *s.in;
  for (int step = 0; step < 6 && !in.empty(); ++step) {
    switch (in.next() % 8) {
      case 0:
      case 1:
      case 2: register_backend(api, host, s); break;
      case 3: register_layer(api, host, s); break;
      case 4: {  // calls back into the core while it loads this plugin
        nnp_device d;
        (void)api->device_parse("cpu", &d);
        (void)api->plugin_count();
        (void)api->backend_count();
        break;
      }
      case 5: api->set_error(NNP_DEVICE_ERROR, "fuzz init: failing on purpose"); return NNP_DEVICE_ERROR;
      case 6: return static_cast<nnp_status>(in.next() % 14);  // any status, maybe with no message
      default: throw std::runtime_error("fuzz init: throwing on purpose");
    }
  }
  return NNP_OK;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t attempt = 0;
  Bytes in(data, size);
  Script script;
  script.in = &in;
  g_script = &script;
  PluginRegistry& registry = PluginRegistry::instance();
  nnp::core::nn::LayerRegistry& layers = nnp::core::nn::LayerRegistry::instance();
  const int32_t backends_before = registry.backend_count();
  const size_t layers_before = static_cast<size_t>(layers.count());

  nnp_plugin_descriptor d{};
  d.abi_major = in.next() % 8 == 0 ? in.next() : NNP_ABI_MAJOR;
  d.abi_minor = in.next() % 8 == 0 ? in.next() : NNP_ABI_MINOR;
  d.name = keep(script, in.next() % 2 ? "fz.p" + std::to_string(attempt) : in.text(), in.next() % 16 == 0);
  d.version = keep(script, in.text(), in.next() % 2);
  d.description = keep(script, in.text(), in.next() % 2);
  d.init = in.next() % 16 == 0 ? nullptr : fuzz_init;
  nnp_plugin_descriptor* descriptor = block(script, in.size_near(sizeof(nnp_plugin_descriptor)), d);
  const bool null_descriptor = in.next() % 32 == 0;

  bool loaded = true;
  try {
    registry.load_descriptor(null_descriptor ? nullptr : descriptor, "fuzz:" + std::to_string(attempt++));
  } catch (const nnp::core::Error& e) {
    loaded = false;
    if (std::string(e.what()).empty()) __builtin_trap();  // a refusal says why
  }
  if (!loaded) {  // nothing of a refused plugin stays
    if (registry.backend_count() != backends_before || static_cast<size_t>(layers.count()) != layers_before)
      __builtin_trap();
  } else {  // everything it registered is there, under its name
    for (const std::string& name : script.accepted_backends)
      if (!registry.find_backend(name)) __builtin_trap();
    for (const std::string& name : script.accepted_layers)
      if (!layers.find(name)) __builtin_trap();
  }
  g_script = nullptr;
  return 0;
}
