// MultiheadAttention and the Transformer layers beyond PyTorch's numbers
// (layer_fixture_test): reprs as PyTorch prints them, the typed holders,
// batch_first, masks, identical starting layers in a stack, children's
// hooks, and the checks.
#include "test_support.hpp"

using namespace nnp;
namespace nn = nnp::nn;
using nn::Attrs;
using nnp::test::expect_error;

namespace {

void expect_near(const Tensor& a, const Tensor& b, double tolerance = 1e-5) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<double> x = a.to(Dtype::f64).to_vector<double>(), y = b.to(Dtype::f64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], tolerance) << "element " << i;
}

nn::TransformerLayerOptions small_layer() { return nn::TransformerLayerOptions(8, 2).dim_feedforward(16).dropout(0.0); }

}  // namespace

TEST(AttentionLayers, PrintAsPyTorchs) {
  EXPECT_EQ(nn::MultiheadAttention(4, 2)->repr(),
            "MultiheadAttention(\n"
            "  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)\n"
            ")");
  const std::string layer =
      "TransformerEncoderLayer(\n"
      "      (self_attn): MultiheadAttention(\n"
      "        (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n"
      "      )\n"
      "      (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
      "      (dropout): Dropout(p=0.1, inplace=False)\n"
      "      (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
      "      (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
      "      (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
      "      (dropout1): Dropout(p=0.1, inplace=False)\n"
      "      (dropout2): Dropout(p=0.1, inplace=False)\n"
      "    )";
  EXPECT_EQ(nn::TransformerEncoder(
                nn::TransformerEncoderOptions(nn::TransformerLayerOptions(8, 2).dim_feedforward(16), 2).norm(true))
                ->repr(),
            "TransformerEncoder(\n  (layers): ModuleList(\n    (0): " + layer + "\n    (1): " + layer +
                "\n  )\n  (norm): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n)");
}

TEST(AttentionLayers, MultiheadAttentionAsLibtorchCallsIt) {
  manual_seed(11);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  EXPECT_EQ(mha->in_proj_weight.shape(), (Shape{24, 8}));
  EXPECT_FALSE(mha->q_proj_weight.defined());
  // PyTorch's _reset_parameters: zero biases.
  EXPECT_EQ(mha->in_proj_bias.abs().amax().item<float>(), 0.0f);
  Tensor q = randn({3, 2, 8}), kv = randn({5, 2, 8});
  auto [out, weights] = mha(q, kv, kv);
  EXPECT_EQ(out.shape(), (Shape{3, 2, 8}));
  EXPECT_EQ(weights.shape(), (Shape{2, 3, 5}));
  expect_near(weights.sum({2}), ones({2, 3}));
  // A padded key gets no weight; per-head weights average to the mean.
  Tensor padding = from_vector<uint8_t>({0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, {2, 5}).to(Dtype::boolean);
  auto [masked, per_head] = mha(q, kv, kv, padding, true, Tensor(), false);
  EXPECT_EQ(per_head.shape(), (Shape{2, 2, 3, 5}));
  EXPECT_EQ(per_head.select(0, 0).narrow(2, 4, 1).abs().amax().item<float>(), 0.0f);
  auto [same, averaged] = mha(q, kv, kv, padding);
  expect_near(averaged, per_head.mean({1}));
  expect_near(same, masked);
  // Without need_weights the weights are None.
  auto [plain, none] = mha(q, kv, kv, Tensor(), false);
  EXPECT_FALSE(none.defined());
  expect_near(plain, out);
  // A call for one tensor gets the output.
  expect_near(mha->call({q, kv, kv}), out);

  // batch_first is the same layer on transposed inputs.
  nn::MultiheadAttention first(nn::MultiheadAttentionOptions(8, 2).batch_first(true));
  first->load_state_dict(mha->state_dict());
  auto [batch_out, batch_weights] = first(q.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1));
  expect_near(batch_out.transpose(0, 1), out);
  expect_near(batch_weights, weights);
}

TEST(AttentionLayers, ScaledDotProductAttentionMasks) {
  manual_seed(12);
  Tensor q = randn({2, 4, 8}), k = randn({2, 4, 8}), v = randn({2, 4, 8});
  namespace F = nn::functional;
  Tensor causal = F::scaled_dot_product_attention(q, k, v, F::ScaledDotProductAttentionFuncOptions().is_causal(true));
  // The first query sees only the first key.
  expect_near(causal.select(1, 0), v.select(1, 0));
  Tensor allowed = nn::TransformerImpl::generate_square_subsequent_mask(4).eq(zeros({}));
  expect_near(causal,
              F::scaled_dot_product_attention(q, k, v, F::ScaledDotProductAttentionFuncOptions().attn_mask(allowed)));
  expect_near(causal, F::scaled_dot_product_attention(q, k, v,
                                                      F::ScaledDotProductAttentionFuncOptions().attn_mask(
                                                          nn::TransformerImpl::generate_square_subsequent_mask(4))));
  expect_error(
      [&] {
        F::scaled_dot_product_attention(q, k, v,
                                        F::ScaledDotProductAttentionFuncOptions().is_causal(true).attn_mask(allowed));
      },
      NNP_INVALID_ARGUMENT, {"attn_mask should not be set when is_causal=True"});
  expect_error(
      [&] {
        F::scaled_dot_product_attention(q, randn({2, 4, 7}), v);
      },
      NNP_SHAPE_MISMATCH, {"scaled_dot_product_attention", "[2,4,7]"});
  EXPECT_EQ(nn::TransformerImpl::generate_square_subsequent_mask(3).to_vector<float>(),
            (std::vector<float>{0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0}));
}

TEST(AttentionLayers, AStackStartsFromCopiesOfOneLayerAsPyTorchs) {
  manual_seed(13);
  nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(small_layer(), 3));
  StateDict state = encoder->state_dict();
  std::map<std::string, Tensor> by_key(state.begin(), state.end());
  for (const auto& [key, value] : state) {
    if (key.rfind("layers.0.", 0) != 0) continue;
    for (const char* other : {"layers.1.", "layers.2."}) expect_near(by_key.at(other + key.substr(9)), value, 0);
  }
  // ... and they are separate parameters, which training sets apart.
  EXPECT_NE(encoder->get_parameter("layers.0.linear1.weight").get(),
            encoder->get_parameter("layers.1.linear1.weight").get());
  // nn.Transformer re-draws every matrix, so its layers differ.
  nn::Transformer transformer(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16));
  EXPECT_GT((transformer->get_parameter("encoder.layers.0.linear1.weight") -
             transformer->get_parameter("encoder.layers.1.linear1.weight"))
                .abs()
                .amax()
                .item<float>(),
            0.0f);
}

TEST(AttentionLayers, TheChildrenAreCalledAsModules) {
  manual_seed(14);
  nn::TransformerEncoderLayer layer(small_layer().norm_first(true).activation(kGELU).batch_first(true));
  int calls = 0;
  nn::ModuleHandle linear1 = layer->get_submodule("linear1");
  auto handle = linear1.register_forward_hook([&](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor& out) {
    ++calls;
    return out * 0.0;  // the feed-forward block then adds only linear2's bias
  });
  Tensor x = randn({2, 5, 8});
  Tensor y = layer(x);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 5, 8}));
  handle.remove();
  Tensor z = layer(x);
  EXPECT_GT((z - y).abs().amax().item<float>(), 1e-4);
}

TEST(AttentionLayers, TransformerRunsEncoderThenDecoder) {
  manual_seed(15);
  nn::Transformer transformer(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).dropout(0.0));
  Tensor src = randn({5, 2, 8}), tgt = randn({4, 2, 8});
  Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(4);
  Tensor y = transformer(src, tgt, Tensor(), mask);
  nn::ModuleHandle encoder = transformer->get_submodule("encoder"), decoder = transformer->get_submodule("decoder");
  Tensor memory = encoder.call_values({src}).tensor(0);
  expect_near(y, decoder.call_values({tgt, memory, mask}).tensor(0));
  // Causal: the first target position does not depend on the later ones.
  Tensor changed = tgt.clone();
  changed.narrow(0, 3, 1).copy_(randn({1, 2, 8}));
  expect_near(transformer(src, changed, Tensor(), mask).select(0, 0), y.select(0, 0));

  expect_error(
      [&] {
        transformer(src, randn({4, 3, 8}));
      },
      NNP_SHAPE_MISMATCH, {"the batch number of src and tgt must be equal"});
  expect_error(
      [&] {
        transformer(src, randn({4, 2, 6}));
      },
      NNP_SHAPE_MISMATCH, {"the feature number of src and tgt must be equal to d_model"});
}

TEST(AttentionLayers, RefuseWhatPyTorchRefuses) {
  auto make = [](const char* type, const Attrs& a) { return nn::create_layer(type, a); };
  expect_error([&] { make("nn.MultiheadAttention", Attrs().set("embed_dim", 6).set("num_heads", 4)); },
               NNP_INVALID_ARGUMENT, {"embed_dim must be divisible by num_heads"});
  expect_error(
      [&] { make("nn.TransformerEncoderLayer", Attrs().set("d_model", 8).set("nhead", 2).set("activation", "tanh")); },
      NNP_INVALID_ARGUMENT, {"activation should be relu/gelu, not tanh"});
  nn::MultiheadAttention mha(4, 2);
  Tensor q = randn({3, 2, 4});
  expect_error([&] { mha(q, randn({5, 2, 4}), randn({6, 2, 4})); }, NNP_SHAPE_MISMATCH, {"key", "value"});
  expect_error(
      [&] {
        mha(randn({3, 2, 5}), randn({5, 2, 5}), randn({5, 2, 5}));
      },
      NNP_SHAPE_MISMATCH, {"expecting embedding dimension of 4, but got 5"});
  expect_error(
      [&] {
        mha(q, q, q, Tensor(), true, zeros({2, 2}));
      },
      NNP_SHAPE_MISMATCH, {"the shape of the 2D attn_mask is [2,2], but should be [3,3]"});
  expect_error(
      [&] {
        mha(q, q, q, zeros({2, 4}).to(Dtype::boolean));
      },
      NNP_SHAPE_MISMATCH, {"key_padding_mask", "[2,3]", "[2,4]"});
  expect_error(
      [&] {
        mha->call_values({q, q, q, Tensor(), "yes"});
      },
      NNP_INVALID_ARGUMENT, {"argument 4 (need_weights) must be a bool, got a string"});
  expect_error([&] { mha->call({q, q}); }, NNP_INVALID_ARGUMENT, {"forward takes 3 to 4 arguments"});
}
