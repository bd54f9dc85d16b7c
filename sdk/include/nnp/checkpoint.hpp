// Activation checkpointing: nnp::utils::checkpoint and checkpoint_sequential,
// PyTorch's torch.utils.checkpoint (its non-reentrant form) in C++ (ABI
// 1.27; libtorch has neither). A checkpointed segment keeps no activations
// after its forward: backward runs it again, with the random generators and
// autocast state of the first run (the same dropout masks), and the
// gradients equal those without checkpointing.
//
//   nnp::Tensor y = nnp::utils::checkpoint([&](const nnp::Tensor& h) { return layer(h); }, x);
//   nnp::Tensor z = nnp::utils::checkpoint_sequential(encoder_layers, 2, x);
//
// Parameters the function uses get their gradients whether or not its
// inputs require grad. Module forward hooks inside run twice (forward and
// recomputation), as in PyTorch. Without grad mode the function simply runs.
#pragma once

#include <functional>
#include <memory>
#include <nnp/nn.hpp>
#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp::utils {

using CheckpointFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

inline std::vector<Tensor> checkpoint(CheckpointFunction fn, const std::vector<Tensor>& inputs,
                                      bool preserve_rng_state = true) {
  auto trampoline = [](void* user, nnp_tensor* const* in, int32_t n_in, nnp_tensor** out,
                       int32_t* n_out) -> nnp_status {
    return detail::guard([&] {
      std::vector<Tensor> args;
      args.reserve(static_cast<size_t>(n_in));
      for (int32_t i = 0; i < n_in; ++i) args.push_back(Tensor::borrow(in[i]));
      std::vector<Tensor> results = (*static_cast<CheckpointFunction*>(user))(args);
      if (results.size() > NNP_STEP_MAX_OUTPUTS)
        throw Error(NNP_INVALID_ARGUMENT, "checkpoint: the function returned " + std::to_string(results.size()) +
                                              " tensors; at most " + std::to_string(NNP_STEP_MAX_OUTPUTS));
      for (size_t i = 0; i < results.size(); ++i) out[i] = results[i].release();
      *n_out = static_cast<int32_t>(results.size());
    });
  };
  std::vector<const nnp_tensor*> raw;
  for (const Tensor& t : inputs) raw.push_back(t.get());
  nnp_tensor* out[NNP_STEP_MAX_OUTPUTS] = {};
  int32_t n_out = 0;
  check(api().checkpoint(
      trampoline, new CheckpointFunction(std::move(fn)),
      [](void* user) { delete static_cast<CheckpointFunction*>(user); }, raw.data(), static_cast<int32_t>(raw.size()),
      preserve_rng_state, out, NNP_STEP_MAX_OUTPUTS, &n_out));
  std::vector<Tensor> results;
  for (int32_t i = 0; i < n_out; ++i) results.push_back(Tensor::adopt(out[i]));
  return results;
}

// One tensor in, one out.
inline Tensor checkpoint(std::function<Tensor(const Tensor&)> fn, const Tensor& input, bool preserve_rng_state = true) {
  return checkpoint([fn = std::move(fn)](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; },
                    std::vector<Tensor>{input}, preserve_rng_state)[0];
}

// PyTorch's checkpoint_sequential: the modules of `sequential` in `segments`
// runs of len / segments modules; every run but the last is checkpointed
// (the last one's activations are needed at once by backward).
inline Tensor checkpoint_sequential(const nn::ModuleHandle& sequential, int32_t segments, const Tensor& input,
                                    bool preserve_rng_state = true) {
  std::vector<nn::ModuleHandle> modules;
  for (auto& [name, m] : sequential.named_children()) modules.push_back(m);
  const int32_t count = static_cast<int32_t>(modules.size());
  if (segments < 1 || segments > count)
    throw Error(NNP_INVALID_ARGUMENT, "checkpoint_sequential: segments must be between 1 and the number of modules (" +
                                          std::to_string(count) + "), got " + std::to_string(segments));
  auto run = [modules](int32_t start, int32_t end) {
    return [modules, start, end](const Tensor& x) {
      Tensor h = x;
      for (int32_t i = start; i <= end; ++i) h = nn::ModuleHandle(modules[static_cast<size_t>(i)])(h);
      return h;
    };
  };
  const int32_t segment_size = count / segments;
  int32_t end = -1;
  Tensor h = input;
  for (int32_t start = 0; start < segment_size * (segments - 1); start += segment_size) {
    end = start + segment_size - 1;
    h = checkpoint(run(start, end), h, preserve_rng_state);
  }
  return run(end + 1, count - 1)(h);
}

}  // namespace nnp::utils
