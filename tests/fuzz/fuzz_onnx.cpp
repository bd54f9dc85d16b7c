// libFuzzer target: the ONNX reader (onnx_load) on arbitrary bytes, seeded
// with PyTorch's exports. Anything may be refused; nothing may crash, leak,
// hang or read out of bounds, and a model that loads is whole (it prints).
// Running what loads is left out: a valid graph may ask for any amount of
// memory, as a PyTorch model may, which is not the reader's concern.
#include <nnp/nnp.h>
#include <unistd.h>

#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  static const std::string path = "/tmp/nnp_fuzz_" + std::to_string(getpid()) + ".onnx";
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  nnp_module* model = nullptr;
  if (api->onnx_load(path.c_str(), &model) == NNP_OK) {
    size_t needed = 0;
    if (api->module_repr(model, nullptr, 0, &needed) != NNP_OK) __builtin_trap();
    api->module_release(model);
  } else if (api->last_error()[0] == '\0') {
    __builtin_trap();  // a refusal always says why
  }
  return 0;
}
