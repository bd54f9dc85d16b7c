// libFuzzer target: the model-spec reader on arbitrary text. A spec is
// either refused with a message or builds a module that prints.
#include <nnp/nnp.h>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  std::string json(reinterpret_cast<const char*>(data), size);
  nnp_module* module = nullptr;
  if (api->model_from_spec(json.c_str(), &module) == NNP_OK) {
    size_t needed = 0;
    if (api->module_repr(module, nullptr, 0, &needed) != NNP_OK) __builtin_trap();
    std::string text(needed, '\0');
    if (api->module_repr(module, &text[0], text.size(), &needed) != NNP_OK) __builtin_trap();
    api->module_release(module);
  } else if (api->last_error()[0] == '\0') {
    __builtin_trap();
  }
  return 0;
}
