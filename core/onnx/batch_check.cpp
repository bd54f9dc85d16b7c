#include "batch_check.hpp"

#include <cmath>
#include <vector>

#include "../autograd/grad_mode.hpp"
#include "../error.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../nn/named_list.hpp"
#include "../ops.hpp"
#include "../shape.hpp"
#include "eval_mode_scope.hpp"
#include "graph_module.hpp"
#include "onnx_import.hpp"

namespace nnp::core::onnx {

namespace {

std::vector<double> host_values(const Tensor& t) {
  TensorRef wide = contiguous(*to(t, t.device, NNP_F64));
  std::vector<double> out(static_cast<size_t>(t.shape.numel()));
  if (!out.empty()) copy_to_host(*wide, out.data(), out.size() * sizeof(double));
  return out;
}

std::string compare(const nnp_list& got, const nnp_list& want) {
  std::vector<TensorRef> a, b;
  for (const nnp_list::Entry& e : got.entries)
    if (e.tensor) a.push_back(e.tensor);
  for (const nnp_list::Entry& e : want.entries)
    if (e.tensor) b.push_back(e.tensor);
  if (a.size() != b.size()) return str_cat("the graph gives ", a.size(), " outputs, the module ", b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i]->shape == b[i]->shape))
      return str_cat("output ", i, " has shape ", format_dims(a[i]->shape), " where the module's is ",
                     format_dims(b[i]->shape));
    const std::vector<double> x = host_values(*a[i]), y = host_values(*b[i]);
    for (size_t j = 0; j < x.size(); ++j) {
      const bool both_nan = std::isnan(x[j]) && std::isnan(y[j]);
      if (!both_nan && !(std::fabs(x[j] - y[j]) <= 1e-4 * (1 + std::fabs(y[j]))))
        return str_cat("output ", i, " differs from the module's (element ", j, ": ", x[j], " against ", y[j], ")");
    }
  }
  return "";
}

}  // namespace

std::string batch_generic_failure(nn::Module& module, const std::vector<TensorRef>& inputs, const std::string& draft) {
  ModuleRef graph;
  try {
    graph = import_model(draft);
  } catch (const Error&) {
    return "";
  }
  // The file's weights are read onto the cpu; the check runs where the
  // module's inputs are (a module traced on a GPU is checked there).
  const nnp_device device = inputs[0]->device;
  nn::to(*graph, &device, -1);
  set_graph_as_written(*graph);
  const int64_t batch = inputs[0]->shape[0];
  auto grown = [&] {
    nnp_list args;
    for (const TensorRef& t : inputs) {
      if (t->shape.ndim > 0 && t->shape[0] == batch) {
        TensorRef first = slice(*t, 0, 0, 1, 1);
        const Tensor* parts[] = {t.get(), first.get()};
        args.add("", cat(parts, 2, 0));
      } else {
        args.add("", t);
      }
    }
    return args;
  };
  EvalModeScope module_eval(module), graph_eval(*graph);
  autograd::NoGradGuard no_grad;
  const nnp_list want = nn::call_values(module, grown());
  nnp_list got;
  try {
    got = nn::call_values(*graph, grown());
  } catch (const Error& e) {
    return str_cat("the graph fails at batch ", batch + 1, " (", e.what(), ")");
  }
  const std::string difference = compare(got, want);
  return difference.empty() ? "" : str_cat("at batch ", batch + 1, " ", difference);
}

}  // namespace nnp::core::onnx
