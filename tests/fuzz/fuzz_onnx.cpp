// libFuzzer target: the ONNX reader (onnx_load) on arbitrary bytes, seeded
// with PyTorch's and nnplug's exports. Anything may be refused; nothing may
// crash, leak, hang or read out of bounds, and a model that loads runs (or
// refuses its input) without harm.
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
    nnp_device cpu;
    if (api->device_parse("cpu", &cpu) != NNP_OK) __builtin_trap();
    const int64_t shape[2] = {2, 4};
    nnp_tensor* x = nullptr;
    if (api->full(shape, 2, 0.5, NNP_F32, cpu, &x) != NNP_OK) __builtin_trap();
    nnp_tensor* y = nullptr;
    if (api->module_call(model, &x, 1, &y) != NNP_OK && api->last_error()[0] == '\0') __builtin_trap();
    api->tensor_release(y);
    api->tensor_release(x);
    api->module_release(model);
  } else if (api->last_error()[0] == '\0') {
    __builtin_trap();  // a refusal always says why
  }
  return 0;
}
