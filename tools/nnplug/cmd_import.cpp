// nnplug import: an ONNX file (PyTorch's torch.onnx.export, nnplug's own, or
// another framework's) read into nnplug (nnp::onnx::load) and written as a
// model spec (an nn.GraphModule) and its weights, which summary, eval and
// train --model read like any other.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>

#include "options.hpp"

namespace nnplug {

int run_import(const Args& args) {
  namespace po = boost::program_options;
  namespace fs = std::filesystem;
  po::options_description options("options");
  std::string model, out;
  options.add_options()("model,m", po::value(&model)->required(), "the ONNX file")(
      "out,o", po::value(&out)->required(), "folder to write model.json and model.safetensors into");
  po::variables_map vm;
  // `nnplug import FILE --out DIR`: a first argument that is no option is the file.
  Args given = args;
  if (!given.empty() && given[0].rfind("-", 0) != 0) given.insert(given.begin(), "--model");
  if (auto stop =
          parse_options("import", "Reads an ONNX file and writes it as a model spec and weights.", options, given, vm))
    return *stop;
  nnp::nn::ModuleHandle module = nnp::onnx::load(model);
  std::optional<nnp::nn::LayerSpec> spec = nnp::nn::layer_spec(module);
  if (!spec) throw nnp::Error(NNP_INTERNAL, "onnx load returned a module without its graph");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out))
    throw nnp::Error(NNP_IO_ERROR, "--out " + out + ": cannot make the folder (" + ec.message() + ")");
  const nlohmann::ordered_json text = {{"type", spec->type}, {"graph", spec->attrs.string("graph")}};
  const std::string spec_path = (fs::path(out) / "model.json").string();
  const std::string weights_path = (fs::path(out) / "model.safetensors").string();
  nnp::save_safetensors(module.state_dict(), weights_path);
  {
    std::ofstream file(spec_path);
    file << text.dump(2) << "\n";
    if (!file) throw nnp::Error(NNP_IO_ERROR, "cannot write " + spec_path);
  }
  int64_t parameters = 0;
  for (const nnp::Tensor& p : module.parameters()) parameters += p.numel();
  std::printf("imported %s: %s (%zu layers, %lld parameters); wrote %s and %s\n", model.c_str(),
              module.repr().substr(0, module.repr().find('\n')).c_str(), module.named_children().size(),
              static_cast<long long>(parameters), spec_path.c_str(), weights_path.c_str());
  return 0;
}

}  // namespace nnplug
