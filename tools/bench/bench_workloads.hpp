// What the nnplug benchmarks share: W1's, W3's and W7's models
// (workload_models.hpp) and the training step of docs/benchmarks.md, Workloads
// (zero_grad + forward + loss + backward + step).
#pragma once

#include <benchmark/benchmark.h>

#include <nnp/nnp.hpp>

#include "workload_models.hpp"

namespace nnp::bench {

// Times training steps; on a device with a queue, each timed step ends when
// the device has finished it.
inline void run_steps(benchmark::State& state, nn::ModuleHandle& net, const Tensor& x, const Tensor& y,
                      optim::Optimizer opt) {
  nn::ModuleHandle loss_fn = nn::create_layer("nn.CrossEntropyLoss");
  const nnp_device device = x.device().raw();
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = loss_fn.call({net(x), y});
    loss.backward();
    opt.step();
    check(api().synchronize(device));
  };
  for (int i = 0; i < 10; ++i) step();  // warm-up
  for (auto _ : state) step();
}
// With SGD(lr=0.01, momentum=0.9), W1's and W3's optimizer.
inline void run_steps(benchmark::State& state, nn::ModuleHandle& net, const Tensor& x, const Tensor& y) {
  run_steps(state, net, x, y,
            optim::Optimizer("SGD", net.parameters(), std::move(nn::Attrs().set("lr", 0.01).set("momentum", 0.9))));
}

}  // namespace nnp::bench
