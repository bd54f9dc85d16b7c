// nnplug quantize: a checkpoint's model quantized to int8, as
// torch.ao.quantization does: dynamically (every Linear: int8 weights,
// activations quantized per batch) or, with --calibrate N, statically
// (Linear and Conv2d with a following ReLU fused: int8 weights and
// activation parameters calibrated on N batches of the training rows). The
// checkpoint it writes holds the quantized model's spec and state, so
// nnplug eval reads it as any other; it evaluates, it does not train.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/quantize_model.hpp>

#include "checkpoint.hpp"
#include "options.hpp"
#include "training.hpp"

namespace nnplug {
namespace {

// ordered: the spec written keeps the order of every key it was given.
using json = nlohmann::ordered_json;

// One or two integers as a list of two.
json pair_of(const json& layer, const char* key, int64_t fallback) {
  if (!layer.contains(key)) return json::array({fallback, fallback});
  const json& v = layer[key];
  if (v.is_number_integer()) return json::array({v, v});
  if (v.is_array() && v.size() == 1) return json::array({v[0], v[0]});
  if (v.is_array() && v.size() == 2) return v;
  throw nnp::Error(NNP_INVALID_ARGUMENT, std::string("nnplug quantize: a Conv2d's ") + key + " " + v.dump() +
                                             " is not one or two integers; only those are quantized");
}

// The spec of the model quantize_dynamic / prepare+convert make of `spec`:
// the same rewrites, so the state of the converted model loads into it.
void rewrite(json& node, bool calibrated) {
  if (!node.is_object()) return;
  const std::string type = node.value("type", "");
  if (type == "nn.Linear") {
    json q = {{"type", calibrated ? "nn.quantized.Linear" : "nn.quantized.dynamic.Linear"},
              {"in_features", node.at("in_features")},
              {"out_features", node.at("out_features")},
              {"bias", node.value("bias", true)}};
    node = q;
    return;
  }
  if (type == "nn.Conv2d" && calibrated) {
    if (node.value("groups", 1) != 1 || node.value("padding_mode", "zeros") != "zeros" ||
        (node.contains("padding") && node["padding"].is_string()))
      throw nnp::Error(NNP_UNIMPLEMENTED, "nnplug quantize: Conv2d " + node.dump() +
                                              " has groups, a padding mode or string padding; quantized Conv2d has "
                                              "groups 1 and numeric zero padding");
    json q = {{"type", "nn.quantized.Conv2d"},
              {"in_channels", node.at("in_channels")},
              {"out_channels", node.at("out_channels")},
              {"kernel_size", pair_of(node, "kernel_size", 1)},
              {"stride", pair_of(node, "stride", 1)},
              {"padding", pair_of(node, "padding", 0)},
              {"dilation", pair_of(node, "dilation", 1)},
              {"bias", node.value("bias", true)}};
    node = q;
    return;
  }
  if (!node.contains("children")) return;
  json& children = node["children"];
  if (children.is_array()) {
    for (json& child : children) rewrite(child, calibrated);
    // In a Sequential a ReLU right after a quantized layer is fused into it.
    if (calibrated && type == "nn.Sequential")
      for (size_t i = 0; i + 1 < children.size(); ++i) {
        const std::string t = children[i].value("type", "");
        if ((t == "nn.quantized.Linear" || t == "nn.quantized.Conv2d") &&
            children[i + 1].value("type", "") == "nn.ReLU") {
          children[i]["relu"] = true;
          children[i + 1] = {{"type", "nn.Identity"}};
        }
      }
  } else if (children.is_object()) {
    for (auto& [name, child] : children.items()) rewrite(child, calibrated);
  }
}

}  // namespace

int run_quantize(const Args& args) {
  namespace po = boost::program_options;
  namespace quant = nnp::quantization;
  po::options_description options("options");
  std::string checkpoint, out, data_path;
  int64_t calibrate = 0, batch_size = 32;
  bool header = false;
  options.add_options()("checkpoint,c", po::value(&checkpoint)->required(), "checkpoint written by nnplug train")(
      "calibrate", po::value(&calibrate)->default_value(0),
      "static quantization calibrated on this many batches of training rows (0: dynamic)")(
      "batch-size", po::value(&batch_size)->default_value(32), "rows per calibration batch")(
      "data", po::value(&data_path), "CSV data the checkpoint was trained on (default: the digits)")(
      "header", po::bool_switch(&header), "the first row of the data is a header")(
      "out,o", po::value(&out)->required(), "where to write the quantized checkpoint");
  po::variables_map vm;
  if (auto stop = parse_options("quantize", "Quantizes a checkpoint's model to int8 and writes it.", options, args, vm))
    return *stop;
  if (calibrate < 0 || batch_size < 1) {
    std::fprintf(stderr, "nnplug quantize: --calibrate must be >= 0 and --batch-size >= 1\n");
    return 2;
  }
  TrainCheckpoint c = load_train_checkpoint(checkpoint);
  if (c.model_spec.find("nn.quantized") != std::string::npos) {
    std::fprintf(stderr, "nnplug quantize: %s holds a quantized model already\n", checkpoint.c_str());
    return 1;
  }
  if (data_path.empty()) data_path = default_data_path();
  Dataset data = load_csv(data_path, header);
  const nnp::Shape shape = sample_shape(c.input_shape, data, false);
  nnp::nn::ModuleHandle model = nnp::nn::model_from_spec(c.model_spec);
  model.load_state_dict(c.model);
  model.eval();
  auto samples = samples_of(data, shape, c.scale, nnp::Device("cpu"));
  check_labels_fit(data, data_path, output_classes(model, *samples));
  const bool same_data = data.rows == c.data_rows && data.rows >= 5;
  const Split split = hold_out_fifth(data.rows, c.seed);
  if (!same_data || split_fingerprint(data, split.test) != c.split)
    std::fprintf(stderr, "nnplug quantize: note: %s is not the data the checkpoint was trained on\n",
                 data_path.c_str());
  const std::vector<int64_t>& test = split.test;
  const double before = evaluate(model, samples, test).accuracy * 100;

  json spec = json::parse(c.model_spec);
  rewrite(spec, calibrate > 0);
  nnp::nn::ModuleHandle quantized;
  if (calibrate > 0) {
    auto run = quant::prepare(model);
    nnp::NoGradGuard no_grad;
    int64_t used = 0;
    for (int64_t b = 0; b < calibrate && used < static_cast<int64_t>(split.train.size()); ++b) {
      const int64_t end = std::min<int64_t>(used + batch_size, static_cast<int64_t>(split.train.size()));
      std::vector<int64_t> rows(split.train.begin() + used, split.train.begin() + end);
      run.model()(samples->get_batch(rows).data);
      used = end;
    }
    quantized = run.convert();
    std::printf("static quantization calibrated on %lld training rows\n", static_cast<long long>(used));
  } else {
    quantized = quant::quantize_dynamic(model);
    std::printf("dynamic quantization\n");
  }
  // The written spec must build the model that was converted.
  nnp::nn::ModuleHandle rebuilt = nnp::nn::model_from_spec(spec.dump());
  rebuilt.load_state_dict(quantized.state_dict());
  const double after = evaluate(rebuilt, samples, test).accuracy * 100;
  c.model_spec = spec.dump();
  c.model = rebuilt.state_dict();
  c.optimizer.clear();
  save_train_checkpoint(out, c);
  std::printf("test accuracy %.2f%% float, %.2f%% quantized on %zu held-out rows; wrote %s\n", before, after,
              test.size(), out.c_str());
  return 0;
}

}  // namespace nnplug
