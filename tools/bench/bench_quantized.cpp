// W11. Q1 and Q64: a quantized Linear's forward against the f32 Linear it
// came from: W1's first layer (784 -> 512) at batch 1 and 64, no grad, both
// on cpu. The int8 side includes quantizing the batch (its range, its
// parameters, the rounding) as PyTorch's dynamic Linear does on every call.
// And the static int8 W3 CNN (calibrated on four batches, converted)
// compiled, against its compiled f32 form, at batch 1 and 64.
#include <benchmark/benchmark.h>

#include <nnp/nnp.hpp>
#include <nnp/quantize_model.hpp>

#include "workload_models.hpp"

namespace {

nnp::nn::ModuleHandle w1_first_layer() {
  nnp::manual_seed(1);
  return nnp::nn::create_layer("nn.Linear", nnp::nn::Attrs().set("in_features", 784).set("out_features", 512));
}

// Forward of `linear` on a batch of state.range(0) rows, no grad.
void time_forward(benchmark::State& state, nnp::nn::ModuleHandle linear) {
  const nnp::Tensor x = nnp::randn({state.range(0), 784});
  nnp::NoGradGuard no_grad;
  for (auto _ : state) {
    nnp::Tensor y = linear(x);
    benchmark::DoNotOptimize(y.get());
  }
}

void QLinear_f32(benchmark::State& state) { time_forward(state, w1_first_layer()); }
BENCHMARK(QLinear_f32)->Name("QLinear/f32_batch1")->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(QLinear_f32)->Name("QLinear/f32_batch64")->Arg(64)->Unit(benchmark::kMicrosecond);

void QLinear_int8(benchmark::State& state) {
  time_forward(state, nnp::quantization::quantize_dynamic(w1_first_layer()));
}
BENCHMARK(QLinear_int8)->Name("QLinear/int8_batch1")->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(QLinear_int8)->Name("QLinear/int8_batch64")->Arg(64)->Unit(benchmark::kMicrosecond);

// W3 (int8: quantized statically after four calibration batches) compiled,
// forward on a batch of state.range(0) images, no grad.
void time_compiled_w3(benchmark::State& state, bool int8) {
  nnp::manual_seed(3);
  nnp::nn::ModuleHandle model = nnp::bench::w3_model();
  if (int8) {
    auto calibration = nnp::quantization::prepare(model);
    for (int i = 0; i < 4; ++i) calibration.model()(nnp::randn({64, 1, 28, 28}));
    model = calibration.convert();
  }
  model.eval();
  const nnp::Tensor x = nnp::randn({state.range(0), 1, 28, 28});
  nnp::nn::ModuleHandle compiled = nnp::compile(model, {x});
  nnp::NoGradGuard no_grad;
  for (auto _ : state) {
    nnp::Tensor y = compiled(x);
    benchmark::DoNotOptimize(y.get());
  }
}

void QW3_f32(benchmark::State& state) { time_compiled_w3(state, false); }
void QW3_int8(benchmark::State& state) { time_compiled_w3(state, true); }
BENCHMARK(QW3_f32)->Name("QW3/compiled_f32_batch1")->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(QW3_int8)->Name("QW3/compiled_int8_batch1")->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(QW3_f32)->Name("QW3/compiled_f32_batch64")->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(QW3_int8)->Name("QW3/compiled_int8_batch64")->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
