// nnp/plugin.hpp - what a plugin written in C++ needs beyond plugin.h: an
// init that sets up nnp::api() and turns exceptions into its status.
//
//   #define NNP_NO_GET_API            // plugins never link libnnp
//   #include <nnp/nnp.hpp>
//   #include <nnp/plugin.hpp>
//   nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
//     return nnp::init_plugin(api, [&] {
//       nnp::nn::register_layer<Swish>(host, "acme.Swish", "x * sigmoid(beta * x)",
//                                      {{"beta", NNP_ATTR_FLOAT, false, "1.0", "slope"}});
//     });
//   }
//   NNP_PLUGIN("acme.layers", "1.0.0", "Acme's activations", init)
#pragma once

#include <nnp/plugin.h>

#include <nnp/detail/api.hpp>
#include <utility>

namespace nnp {

// Makes `api` the table nnp::api() returns, then runs body (the plugin's
// registrations); an exception becomes the status init returns, with its
// message recorded for the loader to report.
template <typename Body>
nnp_status init_plugin(const nnp_api* api, Body&& body) noexcept {
  if (api == nullptr) return NNP_INVALID_ARGUMENT;
  set_api(api);
  return detail::guard(std::forward<Body>(body));
}

}  // namespace nnp
