// nnplug summary: the tree of a model spec with each module's output shape
// and parameter count, found by running it once on zeros; then what graph
// mode makes of it on the device (its placement on a backend that compiles
// graphs, the cpu's fusions).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <nnp/compile.hpp>
#include <nnp/nnp.hpp>
#include <sstream>

#include "options.hpp"
#include "training.hpp"

namespace nnplug {
namespace {

nnp::Shape parse_shape(const std::string& text) {
  nnp::Shape shape;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 0)
      throw nnp::Error(NNP_INVALID_ARGUMENT, "--input-shape '" + text + "': expected sizes like 1,64 or 32,1,28,28");
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

int run_summary(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string model, input_shape, device = "cpu";
  options.add_options()("model,m", po::value(&model)->required(), "model spec (JSON file) or ONNX file (.onnx)")(
      "input-shape,i", po::value(&input_shape)->required(), "input shape, e.g. 1,64 or 32,1,28,28")(
      "device,d", po::value(&device)->default_value("cpu"), "device to run the shape pass on");
  po::variables_map vm;
  if (auto stop = parse_options("summary", "Prints a model spec's module tree with output shapes and parameter counts.",
                                options, args, vm))
    return *stop;

  nnp::nn::ModuleHandle net = build_model(model);
  net.to(nnp::Device(device));
  std::map<nnp_module*, nnp::Shape> shapes;
  auto record = [](nnp_module* m, const nnp_tensor* const*, int32_t, const nnp_tensor* const* out, int32_t,
                   nnp_tensor**, void* user_data) -> nnp_status {
    nnp::Tensor output = nnp::Tensor::borrow(const_cast<nnp_tensor*>(out[0]));
    (*static_cast<std::map<nnp_module*, nnp::Shape>*>(user_data))[m] = output.shape();
    return NNP_OK;
  };
  nnp_hook_handle* raw = nullptr;
  nnp::check(nnp::api().register_global_module_hook(NNP_HOOK_FORWARD, record, &shapes, nullptr, &raw));
  nnp::HookHandle hook(raw);
  {
    nnp::NoGradGuard no_grad;
    net.eval();
    net(nnp::zeros(parse_shape(input_shape), nnp::Dtype::f32, nnp::Device(device)));
  }
  hook.remove();

  // Columns as wide as their longest entry, so long dotted names stay apart.
  struct Row {
    std::string label, shape;
    int64_t own = 0;
  };
  std::vector<Row> rows;
  size_t label_width = 34, shape_width = 20;
  for (auto& [name, module] : net.named_modules()) {
    Row row{(name.empty() ? "(model)" : name) + " " + module.type_name(), "-", 0};
    for (const nnp::Tensor& p : module.parameters(false)) row.own += p.numel();
    auto it = shapes.find(module.handle());
    if (it != shapes.end()) row.shape = nnp::detail::shape_text(it->second);
    label_width = std::max(label_width, row.label.size() + 2);
    shape_width = std::max(shape_width, row.shape.size() + 2);
    rows.push_back(row);
  }
  const int label_w = static_cast<int>(label_width), shape_w = static_cast<int>(shape_width);
  std::cout << std::left << std::setw(label_w) << "module (type)" << std::setw(shape_w) << "output shape"
            << "parameters\n";
  for (const Row& row : rows)
    std::cout << std::setw(label_w) << row.label << std::setw(shape_w) << row.shape << row.own << "\n";
  int64_t total = 0, trainable = 0;
  for (const nnp::Tensor& p : net.parameters()) {
    total += p.numel();
    if (p.requires_grad()) trainable += p.numel();
  }
  std::cout << "total parameters: " << total << " (trainable " << trainable << ")\n";

  // Where graph mode runs each part on the device: a backend that compiles
  // graphs runs what it claims, the cpu the rest, with the copies between.
  const nnp::Tensor input = nnp::zeros(parse_shape(input_shape), nnp::Dtype::f32, nnp::Device(device));
  nnp::nn::ModuleHandle compiled = nnp::compile(net, {input});
  {
    nnp::NoGradGuard no_grad;
    compiled(input);
  }
  std::cout << "graph mode on " << nnp::Device(device).name() << ":\n";
  std::istringstream explain(nnp::compile_explain(compiled));
  std::string line;
  std::getline(explain, line);  // "OptimizedModule of ..."
  while (std::getline(explain, line))
    if (!line.empty() && line.rfind("last call:", 0) != 0) std::cout << "  " << line << "\n";
  return 0;
}

}  // namespace nnplug
