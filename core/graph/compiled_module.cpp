#include "compiled_module.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <nnp/detail/strings.hpp>

#include "../autograd/grad_mode.hpp"
#include "../autograd/record.hpp"
#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../nn/derived_tensor.hpp"
#include "../nn/module_call.hpp"
#include "../onnx/graph_module.hpp"
#include "../onnx/onnx_export.hpp"
#include "../onnx/onnx_import.hpp"

namespace nnp::core::graph {

namespace {

// What the capture assumed of one input.
struct InputGuard {
  nnp_dtype dtype;
  nnp_device device;
  Dims shape;
  bool batch;  // dimension 0 may differ (all batch inputs' by the same size)
};

// Every parameter and buffer of m and its descendants, in order.
void collect_tensors(const nn::Module& m, std::vector<const Tensor*>& out) {
  for (const auto& [name, t] : m.parameters)
    if (t) out.push_back(t.get());
  for (const auto& [name, t] : m.buffers)
    if (t) out.push_back(t.get());
  for (const auto& [name, child] : m.children)
    if (child) collect_tensors(*child, out);
}

nn::Fingerprint weights_of(const nn::Module& m) {
  std::vector<const Tensor*> tensors;
  collect_tensors(m, tensors);
  return nn::fingerprint(tensors);
}

std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype)) + " " + format_dims(t.shape); }

struct Compiled {
  ModuleRef original;
  CompileOptions options;
  std::mutex mutex;  // guards everything below
  ModuleRef graph;   // null: not captured (reason says why)
  std::vector<InputGuard> guards;
  nn::Fingerprint weights;
  std::string reason;     // why the module is not captured
  std::string last_call;  // what the last call ran, and why

  // Captures the original on inputs: the graph, the guards, the weights'
  // fingerprint, or the reason it cannot be.
  void capture(const std::vector<TensorRef>& inputs) {
    graph = ModuleRef();
    guards.clear();
    reason.clear();
    weights = weights_of(*original);  // a failed capture is tried again only when these change
    static std::atomic<uint64_t> counter{0};
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() /
        ("nnp_compile_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".onnx");
    try {
      onnx::ExportOptions export_options;
      export_options.fixed_batch = !options.dynamic_batch;
      const bool symbolic = onnx::export_model(*original, inputs, file.string(), export_options);
      ModuleRef imported = onnx::import_model(file.string());
      std::filesystem::remove(file);
      const nnp_device device = inputs[0]->device;
      nn::to(*imported, &device, -1);
      nn::train(*imported, false);
      onnx::set_graph_fallback(*imported, options.fallback);
      for (const TensorRef& t : inputs)
        guards.push_back(
            {t->dtype, t->device, t->shape, symbolic && t->shape.ndim > 0 && t->shape.d[0] == inputs[0]->shape.d[0]});
      graph = std::move(imported);
    } catch (const Error& e) {
      std::error_code ignored;
      std::filesystem::remove(file, ignored);
      reason = std::string("it cannot be captured: ") + e.what();
    }
  }

  // Why a call with inputs cannot run the captured plan, or "".
  std::string guard_failure(const std::vector<TensorRef>& inputs) const {
    if (inputs.size() != guards.size())
      return std::to_string(inputs.size()) + " inputs where the capture had " + std::to_string(guards.size());
    int64_t batch = -1;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      const InputGuard& g = guards[i];
      bool same = t.dtype == g.dtype && t.device.backend == g.device.backend && t.device.index == g.device.index &&
                  t.shape.ndim == g.shape.ndim;
      for (int32_t d = 0; same && d < t.shape.ndim; ++d) same = t.shape.d[d] == g.shape.d[d] || (d == 0 && g.batch);
      if (same && g.batch) {
        if (batch >= 0 && t.shape.d[0] != batch) same = false;
        batch = t.shape.d[0];
      }
      if (!same)
        return "input " + std::to_string(i) + " is " + describe(t) + " on " + device_name(t.device) +
               " where the capture had " + std::string(dtype_name(g.dtype)) + " " + format_dims(g.shape) +
               (g.batch ? " (any batch)" : "") + " on " + device_name(g.device);
    }
    return "";
  }

  // Why this call runs the original eagerly, or "" for the plan.
  std::string eager_reason(const std::vector<TensorRef>& inputs) {
    if (original->training) return "the module is in training mode (the capture is of eval mode; call eval())";
    if (!nn::calls_plainly(*original)) return "the module has hooks (or pruned or parametrized tensors)";
    std::vector<const Tensor*> tensors;  // the original's, walked once per call
    collect_tensors(*original, tensors);
    if (autograd::grad_enabled()) {
      for (const TensorRef& t : inputs)
        if (autograd::requires_grad(*t)) return "an input requires grad";
      for (const Tensor* t : tensors)
        if (autograd::requires_grad(*t)) return "its parameters require grad and grad mode is on (use no_grad)";
    }
    if (nn::fingerprint(tensors) != weights) capture(inputs);  // written or replaced since: again
    if (!graph) return reason;
    return guard_failure(inputs);
  }
};

std::vector<TensorRef> tensor_args(const nnp_list& args) {
  std::vector<TensorRef> out;
  for (const nnp_list::Entry& e : args.entries) {
    if (!e.tensor || !e.name.empty()) return {};
    out.push_back(e.tensor);
  }
  return out;
}

// One call: the plan where the guards hold, else the original.
nnp_list run(Compiled& c, const nnp_list& args) {
  const std::vector<TensorRef> inputs = tensor_args(args);
  ModuleRef target;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    const std::string why = inputs.empty() ? "its arguments are not tensors alone" : c.eager_reason(inputs);
    target = why.empty() ? c.graph : c.original;
    c.last_call = why.empty() ? "the captured plan" : "eagerly: " + why;
  }
  return nn::call_values(*target, args);
}

nnp_status forward_values(void* self, nnp_module*, const nnp_list* args, nnp_list* outputs) {
  return guard([&] { *outputs = run(*static_cast<Compiled*>(self), *args); });
}

nnp_status forward(void* self, nnp_module*, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** output) {
  return guard([&] {
    nnp_list args;
    for (int32_t i = 0; i < n_inputs; ++i) args.add("", TensorRef::share(inputs[i]));
    nnp_list results = run(*static_cast<Compiled*>(self), args);
    if (results.entries.empty() || !results.entries[0].tensor)
      fail(NNP_INVALID_ARGUMENT, "OptimizedModule: the module gave no tensor");
    *output = results.entries[0].tensor.take();
  });
}

void destroy(void* self) { delete static_cast<Compiled*>(self); }

}  // namespace

ModuleRef compile(nn::Module& module, const std::vector<TensorRef>& example_inputs, const CompileOptions& options) {
  if (example_inputs.empty()) fail(NNP_INVALID_ARGUMENT, "compile: give at least one example input");
  nnp_module_vtable vtable{};
  vtable.struct_size = sizeof vtable;
  vtable.forward = forward;
  vtable.forward_values = forward_values;
  vtable.destroy = destroy;
  auto state = std::make_unique<Compiled>();
  state->original = ModuleRef::share(&module);
  state->options = options;
  state->capture(example_inputs);
  ModuleRef m = nn::create_module("OptimizedModule", &vtable, nullptr);
  nn::register_module(*m, "_orig_mod", &module);
  m->training = module.training;
  m->self = state.release();
  return m;
}

std::string explain(const nn::Module& compiled) {
  if (compiled.type_name != "OptimizedModule" || compiled.vtable.forward_values != forward_values || !compiled.self)
    fail(NNP_INVALID_ARGUMENT, "explain: ", compiled.type_name, " is not a module compile made");
  auto& c = *static_cast<Compiled*>(compiled.self);
  std::lock_guard<std::mutex> lock(c.mutex);
  std::string text = "OptimizedModule of " + c.original->type_name + "\n";
  if (!c.graph) return text + "runs eagerly: " + c.reason + "\n";
  text += "captured: inputs";
  for (const InputGuard& g : c.guards)
    text += std::string(" ") + dtype_name(g.dtype) + " " + format_dims(g.shape) + (g.batch ? " (any batch)" : "") +
            " on " + device_name(g.device);
  text += "\n";
  // The plan as a call runs it: the capture runs only without gradients.
  autograd::NoGradGuard no_grad;
  for (const std::string& note : onnx::graph_plan_notes(*c.graph)) text += "plan: " + note + "\n";
  text += "last call: " + (c.last_call.empty() ? std::string("none yet") : c.last_call) + "\n";
  return text;
}

}  // namespace nnp::core::graph
