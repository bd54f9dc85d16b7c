// libFuzzer target: the .npy reader on arbitrary bytes. Anything may be
// refused; nothing may crash, leak or read out of bounds, and what loads is
// whole and writes back to a file that loads to the same bytes.
#include <cstdio>
#include <cstring>
#include <string>

#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nnp_api* api = fuzz_api();
  const nnp_device cpu = fuzz_cpu();
  const std::string path = fuzz_input_file(data, size, ".npy");
  if (path.empty()) return 0;
  static const std::string again = "/tmp/nnp_fuzz_" + std::to_string(getpid()) + "_again.npy";
  nnp_tensor* t = nullptr;
  if (api->npy_load(path.c_str(), cpu, &t) == NNP_OK) {
    std::string bytes(static_cast<size_t>(api->tensor_numel(t)) * api->dtype_size(api->tensor_dtype(t)), '\0');
    if (api->copy_to_host(t, &bytes[0], bytes.size()) != NNP_OK) __builtin_trap();
    nnp_tensor* back = nullptr;
    if (api->npy_save(t, again.c_str()) != NNP_OK || api->npy_load(again.c_str(), cpu, &back) != NNP_OK)
      __builtin_trap();  // what loads saves and loads again
    std::string round(bytes.size(), '\0');
    if (api->copy_to_host(back, &round[0], round.size()) != NNP_OK || round != bytes) __builtin_trap();
    api->tensor_release(back);
  } else if (api->last_error()[0] == '\0') {
    __builtin_trap();  // a refusal always says why
  }
  api->tensor_release(t);
  return 0;
}
