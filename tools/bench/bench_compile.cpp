// W2c: a module of 20 elementwise ops on a [64, 64] f32 input, compiled
// (nnp::compile: one fused pass over memory) against the same module called
// eagerly, both in eval mode under no_grad. The ops are a mix a fused chain
// meets in models: scales and biases, residuals, ReLU, tanh, sigmoid, exp,
// a square and its root. W2c-arith keeps only the arithmetic and ReLU
// (informative: at this size every tensor stays in L1, so there the chain
// saves the per-op dispatch and little memory traffic).
#include <benchmark/benchmark.h>

#include <memory>
#include <nnp/nnp.hpp>

namespace {

using nnp::Tensor;

struct Chain20 : nnp::nn::Module {
  bool arithmetic_only;
  Tensor bias, scale;
  explicit Chain20(bool arithmetic) : Module("Chain20"), arithmetic_only(arithmetic) {
    nnp::manual_seed(2);
    bias = register_buffer("bias", nnp::randn({64}));
    scale = register_buffer("scale", nnp::full({1}, 0.75));
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = x * scale;                          // 1
    y = y + bias;                                  // 2
    y = y.relu();                                  // 3
    y = y - x;                                     // 4
    y = arithmetic_only ? y * 1.25 : y.tanh();     // 5
    y = y * y;                                     // 6
    y = y + scale;                                 // 7
    y = arithmetic_only ? y - 0.5 : y.sqrt();      // 8
    y = x / y;                                     // 9
    y = arithmetic_only ? y.relu() : y.sigmoid();  // 10
    y = -y;                                        // 11
    y = arithmetic_only ? y + 2.0 : y.exp();       // 12
    y = y + bias;                                  // 13
    y = y.abs();                                   // 14
    y = y * 0.5;                                   // 15
    y = y - scale;                                 // 16
    y = y.relu();                                  // 17
    y = y + x;                                     // 18
    y = y * bias;                                  // 19
    return -y;                                     // 20
  }
};

void run(benchmark::State& state, bool arithmetic, bool compiled) {
  auto chain = std::make_shared<Chain20>(arithmetic);
  nnp::nn::ModuleHandle module(chain);
  module.eval();
  const Tensor x = nnp::randn({64, 64});
  nnp::nn::ModuleHandle target = compiled ? nnp::compile(module, {x}) : module;
  nnp::NoGradGuard no_grad;
  for (auto _ : state) {
    Tensor y = target(x);
    benchmark::DoNotOptimize(y.get());
  }
}

void W2c_eager(benchmark::State& state) { run(state, false, false); }
void W2c_compiled(benchmark::State& state) { run(state, false, true); }
void W2c_arith_eager(benchmark::State& state) { run(state, true, false); }
void W2c_arith_compiled(benchmark::State& state) { run(state, true, true); }
BENCHMARK(W2c_eager)->Name("W2c/eager")->Unit(benchmark::kMicrosecond);
BENCHMARK(W2c_compiled)->Name("W2c/compiled")->Unit(benchmark::kMicrosecond);
BENCHMARK(W2c_arith_eager)->Name("W2c/arith_eager")->Unit(benchmark::kMicrosecond);
BENCHMARK(W2c_arith_compiled)->Name("W2c/arith_compiled")->Unit(benchmark::kMicrosecond);

}  // namespace
