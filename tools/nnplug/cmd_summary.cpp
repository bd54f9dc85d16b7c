// nnplug summary: the tree of a model spec with each module's output shape
// and parameter count, found by running it once on zeros.
#include <iomanip>
#include <iostream>
#include <map>
#include <nnp/nnp.hpp>
#include <sstream>

#include "options.hpp"

namespace nnplug {
namespace {

std::string shape_text(const nnp::Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

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
  options.add_options()("model,m", po::value(&model)->required(), "model spec (JSON file)")(
      "input-shape,i", po::value(&input_shape)->required(), "input shape, e.g. 1,64 or 32,1,28,28")(
      "device,d", po::value(&device)->default_value("cpu"), "device to run the shape pass on");
  po::variables_map vm;
  if (auto stop = parse_options("summary", "Prints a model spec's module tree with output shapes and parameter counts.",
                                options, args, vm))
    return *stop;

  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec_file(model);
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

  std::cout << std::left << std::setw(34) << "module (type)" << std::setw(20) << "output shape"
            << "parameters\n";
  int64_t total = 0, trainable = 0;
  for (auto& [name, module] : net.named_modules()) {
    int64_t own = 0;
    for (const nnp::Tensor& p : module.parameters(false)) own += p.numel();
    std::string label = (name.empty() ? "(model)" : name) + " " + module.type_name();
    auto it = shapes.find(module.handle());
    std::cout << std::setw(34) << label << std::setw(20) << (it == shapes.end() ? "-" : shape_text(it->second)) << own
              << "\n";
  }
  for (const nnp::Tensor& p : net.parameters()) {
    total += p.numel();
    if (p.requires_grad()) trainable += p.numel();
  }
  std::cout << "total parameters: " << total << " (trainable " << trainable << ")\n";
  return 0;
}

}  // namespace nnplug
