// Adapters: safetensors files, module checkpoints and model specs.
#include "../device.hpp"
#include "../io/csv.hpp"
#include "../io/model_spec.hpp"
#include "../io/npy.hpp"
#include "../io/safetensors.hpp"
#include "../ops.hpp"
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
nnp_status npy_load(const char* path, nnp_device device, nnp_tensor** out) {
  return handle_out(out, "npy_load", [&] {
    check_device("npy_load", device);
    return io::load_npy(path_arg(path, "npy_load"), device);
  });
}
nnp_status npy_save(const nnp_tensor* t, const char* path) {
  return guard([&] { io::save_npy(tensor_arg(t, "npy_save", "t"), path_arg(path, "npy_save")); });
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
nnp_status safetensors_metadata_all(const char* path, nnp_list** out) {
  return list_out(out, "safetensors_metadata_all", [&](nnp_list& l) {
    for (const auto& [key, value] : io::read_safetensors_metadata(path_arg(path, "safetensors_metadata_all")))
      l.add_scalar(key, NNP_VALUE_STRING).text = value;
  });
}
nnp_status load_csv(const char* path, const nnp_csv_options* options, nnp_device device, nnp_tensor** features,
                    nnp_tensor** labels, nnp_csv_info* info) {
  return guard([&] {
    nnp_tensor*& x_out = out_arg(features, "load_csv");
    nnp_tensor*& y_out = out_arg(labels, "load_csv");
    if (info) info_arg(info, "load_csv");
    bool header = false;
    if (options) {
      if (options->struct_size < sizeof(size_t))
        fail(NNP_INVALID_ARGUMENT, "load_csv: set options->struct_size to sizeof(nnp_csv_options) before the call");
      if (options->struct_size >= NNP_CSV_OPTIONS_SIZE_1_2) {
        if (options->header != NNP_CSV_HEADER_AUTO && options->header != NNP_CSV_HEADER_YES)
          fail(NNP_INVALID_ARGUMENT,
               "load_csv: options->header must be NNP_CSV_HEADER_AUTO or NNP_CSV_HEADER_YES, got ", options->header);
        header = options->header == NNP_CSV_HEADER_YES;
      }
    }
    check_device("load_csv", device);
    io::CsvTable table = io::read_csv(path_arg(path, "load_csv"), header);
    const int64_t shape[2] = {table.rows, table.features};
    TensorRef x = from_host(table.x.data(), Dims::from_user("load_csv", shape, 2), NNP_F32, device);
    TensorRef y = from_host(table.y.data(), Dims::from_user("load_csv", &table.rows, 1), NNP_I64, device);
    if (info) {
      nnp_csv_info full{};
      full.rows = table.rows;
      full.features = table.features;
      full.classes = table.classes;
      full.largest_label_line = table.largest_label_line;
      full.header_skipped = table.header ? 1 : 0;
      write_info(info, full);
    }
    x_out = x.take();
    y_out = y.take();
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
