// nnplug run: a model's outputs on inputs read from files, written to files
// - what ONNX Runtime's onnxruntime_perf_test and TensorRT's trtexec do
// with --loadInputs / --exportOutput. The model is an ONNX file, a spec with
// --weights, or a checkpoint; inputs are .npy files or tensors of a
// safetensors file; the outputs go to a folder as one .npy file each, or to
// one safetensors file. The model runs compiled (nnp::compile) unless
// --no-compile, in eval mode without gradients.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "call_memory.hpp"
#include "options.hpp"
#include "terminal_text.hpp"
#include "training.hpp"

namespace nnplug {
namespace {

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// An imported model's input and output names (ONNX's), or none for a
// model made otherwise.
struct Names {
  std::vector<std::string> inputs, outputs;
};
Names names_of(const nnp::nn::ModuleHandle& model) {
  Names names;
  const std::optional<nnp::nn::LayerSpec> spec = nnp::nn::layer_spec(model);
  if (!spec || spec->type != "nn.GraphModule") return names;
  const nlohmann::json graph = nlohmann::json::parse(spec->attrs.string("graph"), nullptr, false);
  auto read = [&](const char* key, std::vector<std::string>& out) {
    if (graph.is_object() && graph.contains(key) && graph[key].is_array())
      for (const nlohmann::json& n : graph[key])
        if (n.is_string()) out.push_back(n.get<std::string>());
  };
  read("inputs", names.inputs);
  read("outputs", names.outputs);
  return names;
}

// One --input: [NAME=]FILE.
struct Input {
  std::string name, file;
  nnp::Tensor tensor;
};

nnp::Tensor read_input(const Input& in, const nnp::Device& device) {
  if (ends_with(in.file, ".npy")) return nnp::load_npy(in.file, device);
  if (!ends_with(in.file, ".safetensors"))
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--input " + printable(in.file) +
                                               ": give a .npy file or a .safetensors file (with NAME= for one of "
                                               "its tensors)");
  const nnp::NamedTensors tensors = nnp::load_safetensors(in.file, device);
  if (in.name.empty()) {
    if (tensors.size() != 1)
      throw nnp::Error(NNP_INVALID_ARGUMENT, "--input " + printable(in.file) + " holds " +
                                                 std::to_string(tensors.size()) +
                                                 " tensors: name the one to take, as NAME=" + printable(in.file));
    return tensors[0].second;
  }
  std::string held;
  for (const auto& [key, t] : tensors) {
    if (key == in.name) return t;
    held += (held.empty() ? "" : ", ") + printable(key, 60);
  }
  throw nnp::Error(NNP_NOT_FOUND, "--input " + printable(in.name) + "=" + printable(in.file) +
                                      ": the file has no tensor '" + printable(in.name) + "' (it holds " +
                                      (held.empty() ? "none" : held) + ")");
}

// A name as a file name: what is not a letter, digit, '.', '_' or '-'
// becomes '_' (an ONNX output may be named "../x" or "a/b").
std::string file_name(const std::string& name) {
  std::string out = name.empty() ? "output" : name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  if (out == "." || out == "..") out = "_";
  return out;
}

}  // namespace

int run_run(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string model_path, weights, checkpoint, output, device_name = "auto";
  std::vector<std::string> inputs_given;
  int64_t threads = 0;
  bool no_compile = false, verbose = false;
  options.add_options()("model,m", po::value(&model_path), "ONNX file (.onnx), or model spec (with --weights)")(
      "checkpoint,c", po::value(&checkpoint), "checkpoint written by nnplug train (its model and weights)")(
      "weights", po::value(&weights), "safetensors weights for a --model spec")(
      "input,i", po::value(&inputs_given)->composing(),
      "an input: FILE.npy, or NAME=FILE (.npy, or .safetensors holding a tensor NAME); once per input, in the "
      "model's order, or by the ONNX model's input names")(
      "output,o", po::value(&output), "a folder for one NAME.npy per output, or a .safetensors file for all of them")(
      "device,d", po::value(&device_name)->default_value("auto"), "device to run on")(
      "threads,t", po::value(&threads), "cpu threads (NNP_CPU_THREADS; default: the machine's)")(
      "no-compile", po::bool_switch(&no_compile), "run the model as written (eager), not captured by nnp::compile")(
      "verbose,v", po::bool_switch(&verbose), "say what the compiled model ran (its plan), or why it ran eagerly");
  po::positional_options_description positional;
  positional.add("model", 1);
  po::variables_map vm;
  if (auto stop = parse_options("run", "Runs a model on inputs from .npy or safetensors files and writes its outputs.",
                                options, args, vm, &positional))
    return *stop;
  if (threads > 0) ::setenv("NNP_CPU_THREADS", std::to_string(threads).c_str(), 1);  // before the pool starts
  if (model_path.empty() && checkpoint.empty()) {
    std::fprintf(stderr, "nnplug run: give a model (an .onnx file, or a spec with --weights) or --checkpoint\n");
    return 2;
  }
  if (inputs_given.empty() || output.empty()) {
    std::fprintf(stderr,
                 "nnplug run: give each input with --input [NAME=]FILE and where the outputs go with "
                 "--output FOLDER or --output FILE.safetensors\n");
    return 2;
  }
  nnp::nn::ModuleHandle model = open_model(model_path, weights, checkpoint);
  const nnp::Device device(device_name);
  model.to(device);
  model.eval();
  const Names names = names_of(model);

  std::vector<Input> inputs;
  for (const std::string& given : inputs_given) {
    const size_t eq = given.find('=');
    Input in;
    if (eq != std::string::npos && !ends_with(given.substr(0, eq), ".npy")) {
      in.name = given.substr(0, eq);
      in.file = given.substr(eq + 1);
    } else {
      in.file = given;
    }
    in.tensor = read_input(in, device);
    inputs.push_back(std::move(in));
  }
  // Named inputs of an ONNX model go where its names say.
  const bool by_name = !names.inputs.empty() &&
                       std::all_of(inputs.begin(), inputs.end(), [](const Input& in) { return !in.name.empty(); });
  if (by_name) {
    std::vector<Input> ordered;
    for (const std::string& want : names.inputs) {
      auto it = std::find_if(inputs.begin(), inputs.end(), [&](const Input& in) { return in.name == want; });
      if (it == inputs.end())
        throw nnp::Error(NNP_INVALID_ARGUMENT, "the model's input '" + printable(want) + "' is not given (--input " +
                                                   printable(want) + "=FILE)");
      ordered.push_back(*it);
    }
    for (const Input& in : inputs)
      if (std::find(names.inputs.begin(), names.inputs.end(), in.name) == names.inputs.end()) {
        std::string known;
        for (const std::string& n : names.inputs) known += (known.empty() ? "" : ", ") + printable(n, 60);
        throw nnp::Error(NNP_INVALID_ARGUMENT, "--input " + printable(in.name) +
                                                   ": the model has no input of that name (its inputs: " + known + ")");
      }
    inputs = std::move(ordered);
  }
  std::vector<nnp::Tensor> tensors;
  for (const Input& in : inputs) tensors.push_back(in.tensor);

  nnp::nn::ModuleHandle runner = no_compile ? model : nnp::compile(model, tensors);
  nnp::nn::Outputs results;
  auto call = [&] {
    nnp::NoGradGuard no_grad;
    std::vector<nnp::Value> values(tensors.begin(), tensors.end());
    results = runner.call_values(values);
  };
  if (verbose)
    print_call_memory(tensors.empty() ? nnp::Device("cpu") : tensors[0].device(),
                      no_compile ? "the call" : "the compiled call (its plan made first)", call);
  else
    call();
  if (verbose && !no_compile) std::printf("%s", nnp::compile_explain(runner).c_str());
  nnp::NamedTensors outputs;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].isTensor()) continue;
    std::string name = i < names.outputs.size() ? names.outputs[i] : (i == 0 ? "output" : "output" + std::to_string(i));
    outputs.emplace_back(name, results[i].toTensor().to(nnp::Device("cpu")).contiguous());
  }
  if (outputs.empty()) throw nnp::Error(NNP_INVALID_ARGUMENT, "the model gave no tensor to write");

  if (ends_with(output, ".safetensors")) {
    nnp::save_safetensors(outputs, output);
    for (const auto& [name, t] : outputs)
      std::printf("%s: %s %s -> %s\n", printable(name).c_str(), nnp::detail::shape_text(t.shape()).c_str(),
                  nnp::dtype_name(t.dtype()), printable(output).c_str());
    return 0;
  }
  std::filesystem::create_directories(output);
  std::vector<std::string> used;
  for (const auto& [name, t] : outputs) {
    std::string file = file_name(name) + ".npy";
    if (std::find(used.begin(), used.end(), file) != used.end())
      throw nnp::Error(NNP_INVALID_ARGUMENT, "outputs '" + printable(name) + "' and another both write " +
                                                 printable(file) + "; write to a .safetensors file instead");
    used.push_back(file);
    const std::string path = (std::filesystem::path(output) / file).string();
    nnp::save_npy(t, path);
    std::printf("%s: %s %s -> %s\n", printable(name).c_str(), nnp::detail::shape_text(t.shape()).c_str(),
                nnp::dtype_name(t.dtype()), printable(path).c_str());
  }
  return 0;
}

}  // namespace nnplug
