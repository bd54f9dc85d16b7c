// Every differentiable op's backward against central finite differences in
// f64: d/dx_j sum(w * f(x)) for a random weighting w.
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "test_support.hpp"

using namespace nnp;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct GradcheckCase {
  std::string name;
  std::vector<Tensor> inputs;  // f64 leaves; those to check require grad
  Fn fn;
};

Tensor leaf(const Shape& shape, double low = -2, double high = 2) {
  return (rand(shape, Dtype::f64) * (high - low) + low).requires_grad_();
}
// Values kept away from a kink at 0 (abs, relu, sign, max ties).
Tensor away_from_zero(const Shape& shape) {
  Tensor magnitude = rand(shape, Dtype::f64) * 1.5 + 0.25;
  Tensor sign = randint(0, 2, shape, Dtype::i64).to(Dtype::f64) * 2.0 - 1.0;
  return (magnitude * sign).detach().requires_grad_();
}
Tensor positive(const Shape& shape) { return (rand(shape, Dtype::f64) * 1.5 + 0.5).requires_grad_(); }
Tensor index(const std::vector<int64_t>& values, const Shape& shape) { return from_vector(values, shape); }

// Returns how many elements were compared, so the test can tell it checked.
int check(const GradcheckCase& c) {
  int compared = 0;
  SCOPED_TRACE(c.name);
  std::vector<Tensor> inputs = c.inputs;
  Tensor out = c.fn(inputs);
  Tensor weight = randn(out.shape(), Dtype::f64);
  (out * weight).sum().backward();
  const double eps = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    Tensor analytic = inputs[i].grad();
    EXPECT_TRUE(analytic.defined()) << "input " << i << " got no gradient";
    if (!analytic.defined()) continue;
    std::vector<double> got = analytic.to_vector<double>();
    std::vector<double> x = inputs[i].to_vector<double>();
    for (size_t j = 0; j < x.size(); ++j) {
      NoGradGuard no_grad;
      auto loss_at = [&](double value) {
        std::vector<double> moved = x;
        moved[j] = value;
        std::vector<Tensor> probe = inputs;
        probe[i] = from_vector(moved, inputs[i].shape());
        return (c.fn(probe) * weight).sum().item<double>();
      };
      double numeric = (loss_at(x[j] + eps) - loss_at(x[j] - eps)) / (2 * eps);
      EXPECT_NEAR(got[j], numeric, 1e-5 * (1 + std::fabs(numeric))) << "input " << i << " element " << j;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0) << "nothing was checked";
  return compared;
}

class GradCheck : public ::testing::TestWithParam<int> {};

std::vector<GradcheckCase> gradcheck_cases() {
  manual_seed(2024);
  std::vector<GradcheckCase> all;
  auto add = [&](std::string name, std::vector<Tensor> inputs, Fn fn) {
    all.push_back(GradcheckCase{std::move(name), std::move(inputs), std::move(fn)});
  };
  // unary
  struct U {
    const char* name;
    nnp_unary_op op;
    int domain;  // 0 any, 1 away from zero, 2 positive
  };
  for (U u : {U{"neg", NNP_UNARY_NEG, 0}, U{"abs", NNP_UNARY_ABS, 1}, U{"exp", NNP_UNARY_EXP, 0},
              U{"log", NNP_UNARY_LOG, 2}, U{"sqrt", NNP_UNARY_SQRT, 2}, U{"rsqrt", NNP_UNARY_RSQRT, 2},
              U{"sin", NNP_UNARY_SIN, 0}, U{"cos", NNP_UNARY_COS, 0}, U{"tanh", NNP_UNARY_TANH, 0},
              U{"sigmoid", NNP_UNARY_SIGMOID, 0}, U{"relu", NNP_UNARY_RELU, 1}, U{"gelu", NNP_UNARY_GELU, 0},
              U{"silu", NNP_UNARY_SILU, 0}, U{"sign", NNP_UNARY_SIGN, 1}, U{"erf", NNP_UNARY_ERF, 0}}) {
    Tensor x = u.domain == 2 ? positive({3, 4}) : u.domain == 1 ? away_from_zero({3, 4}) : leaf({3, 4});
    nnp_unary_op op = u.op;
    add(u.name, {x}, [op](const std::vector<Tensor>& in) { return in[0].t().unary(op); });
  }
  // binary, with broadcasting
  add("add", {leaf({2, 3}), leaf({3})}, [](const std::vector<Tensor>& in) { return in[0] + in[1]; });
  add("sub", {leaf({2, 1}), leaf({2, 3})}, [](const std::vector<Tensor>& in) { return in[0] - in[1]; });
  add("mul", {leaf({2, 3}), leaf({2, 1})}, [](const std::vector<Tensor>& in) { return in[0] * in[1]; });
  add("div", {leaf({2, 3}), away_from_zero({3})}, [](const std::vector<Tensor>& in) { return in[0] / in[1]; });
  add("pow", {positive({2, 3}), leaf({3}, -1, 2)}, [](const std::vector<Tensor>& in) { return in[0].pow(in[1]); });
  add("maximum", {away_from_zero({2, 3}), away_from_zero({3})},
      [](const std::vector<Tensor>& in) { return in[0].maximum(in[1]); });
  add("minimum", {away_from_zero({2, 3}), away_from_zero({2, 3})},
      [](const std::vector<Tensor>& in) { return in[0].minimum(in[1]); });
  add("where", {leaf({2, 3}), leaf({3})}, [](const std::vector<Tensor>& in) {
    Tensor cond = from_vector(std::vector<uint8_t>{1, 0, 1, 0, 0, 1}, {2, 3}).to(Dtype::boolean);
    return where(cond, in[0], in[1]);
  });
  // reductions
  add("sum all", {leaf({2, 3, 4})}, [](const std::vector<Tensor>& in) { return in[0].sum(); });
  add("sum dims {0,2}", {leaf({2, 3, 4})}, [](const std::vector<Tensor>& in) { return in[0].sum({0, 2}); });
  add("sum keepdim", {leaf({2, 3})}, [](const std::vector<Tensor>& in) { return in[0].sum({1}, true); });
  add("mean", {leaf({2, 3, 4})}, [](const std::vector<Tensor>& in) { return in[0].mean({-1}); });
  add("amax", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].amax({1}); });
  add("amin all", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].amin(); });
  add("var unbiased", {leaf({3, 5})}, [](const std::vector<Tensor>& in) { return in[0].var({1}); });
  add("var population all", {leaf({3, 5})}, [](const std::vector<Tensor>& in) { return in[0].var({}, 0); });
  add("softmax", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].softmax(1); });
  add("softmax dim 0", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].t().softmax(0); });
  add("log_softmax", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].log_softmax(-1); });
  // matmul
  add("matmul", {leaf({3, 4}), leaf({4, 2})}, [](const std::vector<Tensor>& in) { return in[0].matmul(in[1]); });
  add("matmul transposed", {leaf({4, 3}), leaf({2, 4})},
      [](const std::vector<Tensor>& in) { return in[0].t().matmul(in[1].t()); });
  add("matmul batched broadcast", {leaf({2, 1, 3, 4}), leaf({3, 4, 2})},
      [](const std::vector<Tensor>& in) { return in[0].matmul(in[1]); });
  add("matmul vector", {leaf({4}), leaf({4, 3})}, [](const std::vector<Tensor>& in) { return in[0].matmul(in[1]); });
  add("matmul matrix-vector", {leaf({3, 4}), leaf({4})},
      [](const std::vector<Tensor>& in) { return in[0].matmul(in[1]); });
  add("dot", {leaf({4}), leaf({4})}, [](const std::vector<Tensor>& in) { return in[0].matmul(in[1]); });
  // views and copies
  add("view", {leaf({2, 6})}, [](const std::vector<Tensor>& in) { return in[0].view({3, 4}) * 2.0; });
  add("reshape of transpose", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].t().reshape({12}); });
  add("permute", {leaf({2, 3, 4})}, [](const std::vector<Tensor>& in) { return in[0].permute({2, 0, 1}).exp(); });
  add("slice", {leaf({4, 6})}, [](const std::vector<Tensor>& in) { return in[0].slice(1, 1, 6, 2); });
  add("expand", {leaf({3, 1})}, [](const std::vector<Tensor>& in) { return in[0].expand({2, 3, 4}); });
  add("squeeze/unsqueeze", {leaf({3, 1})},
      [](const std::vector<Tensor>& in) { return in[0].squeeze().unsqueeze(0).unsqueeze(2); });
  add("contiguous", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].t().contiguous(); });
  add("clone", {leaf({3})}, [](const std::vector<Tensor>& in) { return in[0].clone() * in[0]; });
  add("to another device and back", {leaf({3})},
      [](const std::vector<Tensor>& in) { return in[0].to(Device("reference")).exp().to(Device("cpu")); });
  // indexing
  add("cat", {leaf({2, 3}), leaf({1, 3})}, [](const std::vector<Tensor>& in) { return cat({in[0], in[1]}, 0); });
  add("cat dim 1", {leaf({2, 3}), leaf({2, 2})}, [](const std::vector<Tensor>& in) { return cat({in[0], in[1]}, 1); });
  add("index_select", {leaf({4, 3})}, [](const std::vector<Tensor>& in) {
    return in[0].index_select(0, index({3, 0, 3}, {3}));
  });
  add("index_select dim 1", {leaf({2, 4})}, [](const std::vector<Tensor>& in) {
    return in[0].index_select(1, index({1, 1, 2}, {3}));
  });
  add("gather", {leaf({3, 4})}, [](const std::vector<Tensor>& in) {
    return in[0].gather(1, index({0, 3, 3, 1, 2, 2}, {3, 2}));
  });
  add("scatter_add", {leaf({3, 4}), leaf({3, 2})}, [](const std::vector<Tensor>& in) {
    return in[0].scatter_add(1, index({0, 3, 3, 3, 1, 0}, {3, 2}), in[1]);
  });
  add("scatter_add with a larger src", {leaf({2, 3}), leaf({3, 3})}, [](const std::vector<Tensor>& in) {
    return in[0].scatter_add(0, index({1, 0, 1, 0}, {2, 2}), in[1]);
  });
  // the C++ frontend: functions, indexing, clamp (each input's every partial derivative)
  namespace F = nnp::nn::functional;
  add("F::cross_entropy weights, smoothing", {leaf({4, 5})}, [](const std::vector<Tensor>& in) {
    Tensor w = from_vector(std::vector<double>{0.5, 1, 2, 1, 0.25});
    return F::cross_entropy(in[0], index({1, 4, 0, 2}, {4}),
                            F::CrossEntropyFuncOptions().weight(w).label_smoothing(0.1));
  });
  add("F::binary_cross_entropy_with_logits pos_weight", {leaf({2, 3})}, [](const std::vector<Tensor>& in) {
    Tensor target = from_vector(std::vector<double>{0, 1, 0.5, 1, 0, 0.25}, {2, 3});
    return F::binary_cross_entropy_with_logits(
        in[0], target,
        F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(from_vector(std::vector<double>{2, 1, 0.5})));
  });
  add("F::pad reflect", {leaf({1, 2, 3, 4})}, [](const std::vector<Tensor>& in) {
    return F::pad(in[0], F::PadFuncOptions({2, 1, 1, 2}).mode(kReflect));
  });
  add("F::normalize", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return F::normalize(in[0]); });
  add("F::layer_norm", {leaf({2, 6}), leaf({6}), leaf({6})}, [](const std::vector<Tensor>& in) {
    return F::layer_norm(in[0], F::LayerNormFuncOptions({6}).weight(in[1]).bias(in[2]));
  });
  add("F::conv2d groups, dilation", {leaf({1, 4, 5, 5}), leaf({2, 2, 2, 2})}, [](const std::vector<Tensor>& in) {
    return F::conv2d(in[0], in[1], F::Conv2dFuncOptions().padding(1).dilation(2).groups(2));
  });
  add("cumsum", {leaf({3, 5})}, [](const std::vector<Tensor>& in) { return in[0].cumsum(1); });
  add("index: slice, positions", {leaf({4, 5})}, [](const std::vector<Tensor>& in) {
    return in[0].index({indexing::Slice(1, indexing::None), index({4, 0, 4}, {3})});
  });
  add("masked_select", {leaf({3, 4})}, [](const std::vector<Tensor>& in) {
    return in[0].masked_select(from_vector(std::vector<uint8_t>{1, 0, 0, 1}, {4}).to(Dtype::boolean));
  });
  add("sort values", {leaf({3, 4})}, [](const std::vector<Tensor>& in) { return std::get<0>(in[0].sort(1, true)); });
  add("clamp", {away_from_zero({3, 4})}, [](const std::vector<Tensor>& in) { return in[0].clamp(-1.5, 1.5); });
  // activations (inputs away from their bends, where the derivative jumps)
  add("elu, celu, selu", {away_from_zero({3, 4})}, [](const std::vector<Tensor>& in) {
    return F::elu(in[0], F::ELUFuncOptions().alpha(0.7)) + F::celu(in[0] * 2.0, F::CELUFuncOptions().alpha(1.5)) +
           F::selu(in[0]);
  });
  add("softplus, logsigmoid, mish, softsign, tanhshrink", {leaf({3, 4})}, [](const std::vector<Tensor>& in) {
    return F::softplus(in[0] * 3.0, F::SoftplusFuncOptions().beta(2).threshold(4)) + F::logsigmoid(in[0] * 5.0) +
           F::mish(in[0]) + F::softsign(in[0]) + F::tanhshrink(in[0]);
  });
  add("glu", {leaf({2, 6})}, [](const std::vector<Tensor>& in) { return F::glu(in[0], F::GLUFuncOptions().dim(1)); });
  add("prelu (input and weight)", {away_from_zero({2, 3, 4}), leaf({3})},
      [](const std::vector<Tensor>& in) { return F::prelu(in[0], in[1]); });
  add("in-place on views (CopySlices)", {leaf({3, 4}), leaf({4})}, [](const std::vector<Tensor>& in) {
    Tensor y = in[0] * 1.5;
    y.select(0, 1).mul_(in[1]);  // a row times v
    y.t().narrow(0, 2, 2).add_(y.t().narrow(0, 0, 2).detach() * 0.0 + in[0].t().narrow(0, 0, 2));
    Tensor stale = y.narrow(0, 0, 2);  // written below: follows the base
    y.narrow(1, 1, 2).sigmoid_();
    return stale * y.narrow(0, 1, 2);
  });
  add("CrossMapLRN2d (PyTorch's own backward fails this check)", {leaf({2, 5, 2, 2})},
      [](const std::vector<Tensor>& in) {
        return nn::create_layer("nn.CrossMapLRN2d", nn::Attrs().set("size", 3).set("alpha", 0.2).set("k", 1.5))(in[0]);
      });
  add("local_response_norm, group_norm", {leaf({2, 4, 3}), leaf({4})}, [](const std::vector<Tensor>& in) {
    return F::local_response_norm(in[0], F::LocalResponseNormFuncOptions(3).alpha(0.3)) +
           F::group_norm(in[0], F::GroupNormFuncOptions(2).weight(in[1]));
  });
  add("bilinear", {leaf({2, 3}), leaf({2, 2}), leaf({2, 3, 2})},
      [](const std::vector<Tensor>& in) { return F::bilinear(in[0], in[1], in[2]); });
  add("multi_head_attention_forward", {leaf({3, 2, 4}), leaf({12, 4}), leaf({4, 4})},
      [](const std::vector<Tensor>& in) {
        return std::get<0>(F::multi_head_attention_forward(
            in[0], in[0], in[0],
            F::MultiheadAttentionForwardFuncOptions(4, 2, in[1], Tensor(), Tensor(), Tensor(), false, 0.0, in[2],
                                                    Tensor())));
      });
  add("composite: softmax(x @ w + b)", {leaf({2, 3}), leaf({3, 4}), leaf({4})},
      [](const std::vector<Tensor>& in) { return (in[0].matmul(in[1]) + in[2]).tanh().softmax(1).log(); });
  return all;
}

}  // namespace

TEST(GradCheck, EveryDifferentiableOpMatchesFiniteDifferences) {
  int compared = 0, count = 0;
  for (const GradcheckCase& c : gradcheck_cases()) {
    compared += check(c);
    ++count;
  }
  EXPECT_GE(count, 66);
  EXPECT_GT(compared, 500);
  std::printf("gradcheck: %d cases, %d partial derivatives compared\n", count, compared);
}
