// The ROCm backend plugin: the shared GPU backend (backends/gpu) compiled by
// hipcc under the name "rocm". rocBLAS is not packaged in Debian, so GEMM is
// the shared tiled kernel.
#include "../gpu/gpu_backend.hpp"

namespace nnp::rocm {
namespace {

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  gpu::BackendConfig config;
  config.name = "rocm";
  config.score = 900;
  return gpu::register_gpu_backend(api, host, config);
}

}  // namespace
}  // namespace nnp::rocm

NNP_PLUGIN("nnplug.rocm", NNP_PLUGIN_VERSION,
           "the ROCm backend: shared GPU kernels compiled by hipcc, tiled GEMM, one stream per device",
           nnp::rocm::init)
