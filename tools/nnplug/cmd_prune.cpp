// nnplug prune: prunes the weights of a checkpoint's model as
// torch.nn.utils.prune does and writes a checkpoint whose pruning is
// permanent (prune.remove), so nnplug eval and --resume read it as any
// other. Every weight of two or more dimensions (Linear, Conv, ...) is
// pruned: by least magnitude per layer (l1_unstructured), across all layers
// at once (--global, global_unstructured), or by whole output channels of
// least L2 norm (--structured, ln_structured n=2 dim=0).
#include <cstdio>
#include <nnp/nnp.hpp>
#include <nnp/prune.hpp>

#include "checkpoint.hpp"
#include "options.hpp"

namespace nnplug {

int run_prune(const Args& args) {
  namespace po = boost::program_options;
  namespace prune = nnp::nn::utils::prune;
  po::options_description options("options");
  std::string checkpoint, out;
  double amount = 0;
  bool structured = false, global = false;
  options.add_options()("checkpoint,c", po::value(&checkpoint)->required(), "checkpoint written by nnplug train")(
      "amount,a", po::value(&amount)->required(), "fraction of each weight to prune, in [0, 1]")(
      "structured", po::bool_switch(&structured), "prune whole output channels (rows) of least L2 norm")(
      "global", po::bool_switch(&global), "rank the weights of every layer together (unstructured only)")(
      "out,o", po::value(&out)->required(), "where to write the pruned checkpoint");
  po::variables_map vm;
  if (auto stop =
          parse_options("prune", "Prunes a checkpoint's weights and writes the pruned checkpoint.", options, args, vm))
    return *stop;
  if (!(amount >= 0 && amount <= 1)) {
    std::fprintf(stderr, "nnplug prune: --amount %g must be a fraction in [0, 1]\n", amount);
    return 2;
  }
  if (structured && global) {
    std::fprintf(stderr, "nnplug prune: --global ranks single weights; it does not combine with --structured\n");
    return 2;
  }
  TrainCheckpoint c = load_train_checkpoint(checkpoint);
  nnp::nn::ModuleHandle model = nnp::nn::model_from_spec(c.model_spec);
  model.load_state_dict(c.model);

  std::vector<std::pair<nnp::nn::ModuleHandle, std::string>> weights;
  for (auto& [name, module] : model.named_modules())
    for (auto& [param, tensor] : module.named_parameters(false))
      if (param == "weight" && tensor.ndim() >= 2) weights.emplace_back(module, param);
  if (weights.empty()) {
    std::fprintf(stderr, "nnplug prune: the model has no weight of two or more dimensions to prune\n");
    return 1;
  }
  if (global) {
    prune::global_unstructured(weights, prune::Method::L1Unstructured, amount);
  } else {
    for (auto& [module, name] : weights) {
      if (structured)
        prune::ln_structured(module, name, amount, 2.0, 0);
      else
        prune::l1_unstructured(module, name, amount);
    }
  }
  int64_t zeros = 0, total = 0;
  for (auto& [module, name] : weights) {
    prune::remove(module, name);
    const nnp::Tensor w = module.get_parameter(name);
    const int64_t z = w.eq(w.scalar_like(0)).to(nnp::Dtype::f64).sum().item<double>();
    std::printf("  %-28s %-12s %6.2f%% zero of %lld\n", module.type_name().c_str(),
                nnp::detail::shape_text(w.shape()).c_str(), 100.0 * static_cast<double>(z) / w.numel(),
                static_cast<long long>(w.numel()));
    zeros += z;
    total += w.numel();
  }
  c.model = model.state_dict();
  save_train_checkpoint(out, c);
  std::printf("pruned %s: %.2f%% of %lld weights in %zu layers are zero; wrote %s\n",
              structured ? "output channels (ln_structured, n=2)"
              : global   ? "globally (global_unstructured, L1)"
                         : "per layer (l1_unstructured)",
              100.0 * static_cast<double>(zeros) / static_cast<double>(total), static_cast<long long>(total),
              weights.size(), out.c_str());
  return 0;
}

}  // namespace nnplug
