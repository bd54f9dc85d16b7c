// libFuzzer target: the safetensors reader on arbitrary bytes. Anything may
// be refused; nothing may crash, leak or read out of bounds.
#include <cstdio>
#include <string>

#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nnp_api* api = fuzz_api();
  const nnp_device cpu = fuzz_cpu();
  const std::string path = fuzz_input_file(data, size, ".safetensors");
  if (path.empty()) return 0;
  nnp_list* tensors = nullptr;
  if (api->load_safetensors(path.c_str(), cpu, &tensors) == NNP_OK) {
    // Whatever loads is whole: every entry readable to its last byte.
    for (int32_t i = 0; i < api->list_size(tensors); ++i) {
      nnp_tensor* t = api->list_tensor(tensors, i);
      std::string bytes(static_cast<size_t>(api->tensor_numel(t)) * api->dtype_size(api->tensor_dtype(t)), '\0');
      if (api->copy_to_host(t, &bytes[0], bytes.size()) != NNP_OK) __builtin_trap();
    }
  } else if (api->last_error()[0] == '\0') {
    __builtin_trap();  // a refusal always says why
  }
  api->list_release(tensors);
  return 0;
}
