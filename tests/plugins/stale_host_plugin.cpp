// A plugin that keeps the host pointer its init was given and registers
// through it later, from the forward of its layers (a plugin exports only
// its entry, so the test reaches it through them): nnplug must refuse each
// call without reading through the pointer.
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>

namespace {

nnp_plugin_host* kept_host = nullptr;
const nnp_api* kept_api = nullptr;

struct Late : nnp::nn::Module {
  explicit Late(const nnp::nn::Attrs&) : Module("Late") {}
  nnp::Tensor forward(const nnp::Tensor& x) override { return x; }
};

// Throws the status and message of a registration the test expects refused.
void refused_or_throw(nnp_status status) {
  if (status != NNP_OK) throw nnp::Error(status, kept_api->last_error());
}

struct RegisterLayerLate : nnp::nn::Module {
  explicit RegisterLayerLate(const nnp::nn::Attrs&) : Module("RegisterLayerLate") {}
  nnp::Tensor forward(const nnp::Tensor& x) override {
    refused_or_throw(
        kept_api->register_layer_type(kept_host, &nnp::nn::layer_type<Late>("stale.Late", "registered late").get()));
    return x;
  }
};

struct RegisterBackendLate : nnp::nn::Module {
  explicit RegisterBackendLate(const nnp::nn::Attrs&) : Module("RegisterBackendLate") {}
  nnp::Tensor forward(const nnp::Tensor& x) override {
    static nnp_backend backend{};
    backend.struct_size = sizeof backend;
    backend.name = "stale";
    refused_or_throw(kept_api->register_backend(kept_host, &backend));
    return x;
  }
};

struct ForgedHost : nnp::nn::Module {
  explicit ForgedHost(const nnp::nn::Attrs&) : Module("ForgedHost") {}
  nnp::Tensor forward(const nnp::Tensor& x) override {
    static nnp_backend backend{};
    backend.struct_size = sizeof backend;
    backend.name = "forged";
    alignas(16) static unsigned char not_a_host[256] = {1, 1, 1, 1};
    refused_or_throw(kept_api->register_backend(reinterpret_cast<nnp_plugin_host*>(not_a_host), &backend));
    return x;
  }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  kept_host = host;
  kept_api = api;
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<RegisterLayerLate>(host, "stale.RegisterLayerLate", "registers a layer after init");
    nnp::nn::register_layer<RegisterBackendLate>(host, "stale.RegisterBackendLate", "registers a backend after init");
    nnp::nn::register_layer<ForgedHost>(host, "stale.ForgedHost", "passes a pointer that was never a host");
  });
}

}  // namespace

NNP_PLUGIN("test.stale_host", "0", "keeps its host pointer past init (tests only)", init)
