// Adapters: safetensors files, module checkpoints and model specs.
#include "../device.hpp"
#include "../io/model_spec.hpp"
#include "../io/safetensors.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status save_safetensors(const nnp_list* tensors, const char* path, const char* const* keys,
                            const char* const* values, int32_t count) {
  return guard([&] {
    io::Metadata metadata;
    for (int32_t i = 0; i < count; ++i) {
      if (!keys || !values || !keys[i] || !values[i])
        fail(NNP_INVALID_ARGUMENT, "save_safetensors: metadata entry ", i, " is NULL");
      metadata[keys[i]] = values[i];
    }
    io::save_safetensors(list_arg(tensors, "save_safetensors", "tensors"), path_arg(path, "save_safetensors"),
                         metadata);
  });
}
nnp_status load_safetensors(const char* path, nnp_device device, nnp_list** out) {
  return list_out(out, "load_safetensors", [&](nnp_list& l) {
    check_device("load_safetensors", device);
    io::load_safetensors(path_arg(path, "load_safetensors"), device, l, nullptr);
  });
}
nnp_status safetensors_metadata(const char* path, const char* key, char* buf, size_t size, size_t* needed) {
  return guard([&] {
    string_arg(key, "safetensors_metadata", "key");
    io::Metadata metadata = io::read_safetensors_metadata(path_arg(path, "safetensors_metadata"));
    auto it = metadata.find(key);
    if (it == metadata.end()) fail(NNP_NOT_FOUND, path, ": __metadata__ has no key '", key, "'");
    detail::write_string(it->second, buf, size, needed);
  });
}
nnp_status module_save(nnp_module* m, const char* path) {
  return guard([&] { nn::save(module_arg(m, "module_save"), path_arg(path, "module_save")); });
}
nnp_status module_load(nnp_module* m, const char* path, int32_t strict, nnp_list** missing, nnp_list** unexpected) {
  return guard([&] {
    optional_out<nnp_list*>(missing, nullptr);
    optional_out<nnp_list*>(unexpected, nullptr);
    hand_out(nn::load(module_arg(m, "module_load"), path_arg(path, "module_load"), strict != 0), missing, unexpected);
  });
}

nnp_status model_from_spec(const char* json_text, nnp_module** out) {
  return handle_out(out, "model_from_spec",
                    [&] { return io::model_from_spec(string_arg(json_text, "model_from_spec", "json"), "spec"); });
}
nnp_status model_from_spec_file(const char* path, nnp_module** out) {
  return handle_out(out, "model_from_spec_file",
                    [&] { return io::model_from_spec_file(path_arg(path, "model_from_spec_file")); });
}

}  // namespace nnp::core::api
