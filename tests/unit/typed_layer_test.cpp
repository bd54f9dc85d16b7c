// Typed layers (nnp/modules.hpp) as a libtorch user writes them: a holder
// for every built-in layer type, made by the same registry as specs and
// plugins, with typed options and fields.
#include <functional>
#include <map>

#include "test_support.hpp"

using namespace nnp;
namespace nn = nnp::nn;
namespace F = nnp::nn::functional;
using nnp::test::expect_error;

namespace {

// One typed holder per built-in type, with the spec attributes that build the
// same layer.
struct Twin {
  std::function<nn::ModuleHandle()> typed;
  std::function<nn::Attrs()> attrs;
};

const char* const kReluGraph =
    R"({"inputs": ["x"], "outputs": ["y"], "tensors": [], "layers": [],
        "nodes": [{"op": "Relu", "inputs": ["x"], "outputs": ["y"]}]})";

std::map<std::string, Twin> twins() {
  auto none = [] { return nn::Attrs(); };
  std::map<std::string, Twin> t;
  t["nn.Linear"] = {
      [] { return nn::Linear(nn::LinearOptions(4, 3).bias(false)); },
      [] { return std::move(nn::Attrs().set("in_features", 4).set("out_features", 3).set("bias", false)); }};
  t["nn.Identity"] = {[] { return nn::Identity(); }, none};
  t["nn.GraphModule"] = {[] { return nn::GraphModule(kReluGraph); },
                         [] { return std::move(nn::Attrs().set("graph", kReluGraph)); }};
  t["nn.MinMaxObserver"] = {
      [] { return nn::MinMaxObserver(nn::ObserverOptions().dtype(kQInt8).qscheme("per_tensor_symmetric")); },
      [] { return std::move(nn::Attrs().set("dtype", "qint8").set("qscheme", "per_tensor_symmetric")); }};
  t["nn.MovingAverageMinMaxObserver"] = {
      [] { return nn::MovingAverageMinMaxObserver(nn::ObserverOptions().averaging_constant(0.1)); },
      [] { return std::move(nn::Attrs().set("averaging_constant", 0.1)); }};
  t["nn.PerChannelMinMaxObserver"] = {[] { return nn::PerChannelMinMaxObserver(nn::ObserverOptions().ch_axis(1)); },
                                      [] { return std::move(nn::Attrs().set("ch_axis", 1)); }};
  t["nn.FakeQuantize"] = {[] { return nn::FakeQuantize(nn::FakeQuantizeOptions().quant_min(0).quant_max(127)); },
                          [] { return std::move(nn::Attrs().set("quant_min", 0).set("quant_max", 127)); }};
  t["nn.quantized.dynamic.Linear"] = {
      [] { return nn::DynamicQuantizedLinear(nn::LinearOptions(4, 3)); },
      [] { return std::move(nn::Attrs().set("in_features", 4).set("out_features", 3)); }};
  t["nn.quantized.Linear"] = {
      [] { return nn::QuantizedLinear(nn::QuantizedLinearOptions(4, 3).relu(true)); },
      [] { return std::move(nn::Attrs().set("in_features", 4).set("out_features", 3).set("relu", true)); }};
  t["nn.quantized.Conv2d"] = {[] {
                                return nn::QuantizedConv2d(nn::QuantizedConv2dOptions(2, 4, {3, 3}).padding({1}));
                              },
                              [] {
                                return std::move(nn::Attrs()
                                                     .set("in_channels", 2)
                                                     .set("out_channels", 4)
                                                     .set("kernel_size", std::vector<int64_t>{3})
                                                     .set("padding", std::vector<int64_t>{1}));
                              }};
  t["nn.Flatten"] = {[] { return nn::Flatten(nn::FlattenOptions().start_dim(0)); },
                     [] { return std::move(nn::Attrs().set("start_dim", 0)); }};
  t["nn.Dropout"] = {[] { return nn::Dropout(0.25); }, [] { return std::move(nn::Attrs().set("p", 0.25)); }};
  t["nn.Embedding"] = {
      [] { return nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0)); },
      [] { return std::move(nn::Attrs().set("num_embeddings", 10).set("embedding_dim", 3).set("padding_idx", 0)); }};
  t["nn.EmbeddingBag"] = {
      [] { return nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 3).mode(kSum).max_norm(2.0)); },
      [] {
        return std::move(
            nn::Attrs().set("num_embeddings", 10).set("embedding_dim", 3).set("mode", "sum").set("max_norm", 2.0));
      }};
  t["nn.MaxUnpool1d"] = {[] { return nn::MaxUnpool1d(nn::MaxUnpool1dOptions(2)); },
                         [] { return std::move(nn::Attrs().set("kernel_size", std::vector<int64_t>{2})); }};
  t["nn.MaxUnpool2d"] = {[] { return nn::MaxUnpool2d(nn::MaxUnpool2dOptions(3).stride(2).padding(1)); },
                         [] {
                           return std::move(nn::Attrs()
                                                .set("kernel_size", std::vector<int64_t>{3})
                                                .set("stride", std::vector<int64_t>{2})
                                                .set("padding", std::vector<int64_t>{1}));
                         }};
  t["nn.MaxUnpool3d"] = {[] {
                           return nn::MaxUnpool3d(nn::MaxUnpool3dOptions({2, 1, 2}));
                         },
                         [] {
                           return std::move(nn::Attrs().set("kernel_size", std::vector<int64_t>{2, 1, 2}));
                         }};
  t["nn.AdaptiveLogSoftmaxWithLoss"] = {
      [] {
        return nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {3, 6}).div_value(2.0));
      },
      [] {
        return std::move(nn::Attrs()
                             .set("in_features", 8)
                             .set("n_classes", 10)
                             .set("cutoffs", std::vector<int64_t>{3, 6})
                             .set("div_value", 2.0));
      }};
  t["nn.FractionalMaxPool2d"] = {
      [] {
        return nn::FractionalMaxPool2d(nn::FractionalMaxPool2dOptions(2).output_size({3, 2}));
      },
      [] {
        return std::move(
            nn::Attrs().set("kernel_size", std::vector<int64_t>{2, 2}).set("output_size", std::vector<int64_t>{3, 2}));
      }};
  t["nn.FractionalMaxPool3d"] = {
      [] { return nn::FractionalMaxPool3d(nn::FractionalMaxPool3dOptions(2).output_ratio(std::vector<double>{0.5})); },
      [] {
        return std::move(nn::Attrs()
                             .set("kernel_size", std::vector<int64_t>{2, 2, 2})
                             .set("output_ratio", std::vector<double>{0.5}));
      }};
  t["nn.Upsample"] = {
      [] { return nn::Upsample(nn::UpsampleOptions().scale_factor(2.0).mode("bilinear").align_corners(true)); },
      [] {
        return std::move(nn::Attrs().set("scale_factor", 2.0).set("mode", "bilinear").set("align_corners", true));
      }};
  t["nn.UpsamplingNearest2d"] = {
      [] {
        return nn::UpsamplingNearest2d(nn::UpsampleOptions().size(std::vector<int64_t>{4, 6}));
      },
      [] {
        return std::move(nn::Attrs().set("size", std::vector<int64_t>{4, 6}));
      }};
  t["nn.UpsamplingBilinear2d"] = {[] { return nn::UpsamplingBilinear2d(nn::UpsampleOptions().scale_factor(3.0)); },
                                  [] { return std::move(nn::Attrs().set("scale_factor", 3.0)); }};
  t["nn.Unflatten"] = {
      [] {
        return nn::Unflatten(nn::UnflattenOptions(1, {2, 3}));
      },
      [] {
        return std::move(nn::Attrs().set("dim", 1).set("unflattened_size", std::vector<int64_t>{2, 3}));
      }};
  auto recurrent = [] { return std::move(nn::Attrs().set("input_size", 3).set("hidden_size", 4)); };
  t["nn.RNN"] = {[] { return nn::RNN(nn::RNNOptions(3, 4).nonlinearity(kReLU).num_layers(2)); },
                 [=] { return std::move(recurrent().set("nonlinearity", "relu").set("num_layers", 2)); }};
  t["nn.LSTM"] = {
      [] { return nn::LSTM(nn::LSTMOptions(3, 4).proj_size(2).bidirectional(true).dropout(0.5)); },
      [=] { return std::move(recurrent().set("proj_size", 2).set("bidirectional", true).set("dropout", 0.5)); }};
  t["nn.GRU"] = {[] { return nn::GRU(nn::GRUOptions(3, 4).bias(false).batch_first(true)); },
                 [=] { return std::move(recurrent().set("bias", false).set("batch_first", true)); }};
  t["nn.RNNCell"] = {[] { return nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(kReLU)); },
                     [=] { return std::move(recurrent().set("nonlinearity", "relu")); }};
  t["nn.LSTMCell"] = {[] { return nn::LSTMCell(nn::LSTMCellOptions(3, 4).bias(false)); },
                      [=] { return std::move(recurrent().set("bias", false)); }};
  t["nn.GRUCell"] = {[] { return nn::GRUCell(3, 4); }, recurrent};
  t["nn.NonDynamicallyQuantizableLinear"] = {
      [] { return nn::NonDynamicallyQuantizableLinear(4, 3); },
      [] { return std::move(nn::Attrs().set("in_features", 4).set("out_features", 3)); }};
  t["nn.MultiheadAttention"] = {
      [] { return nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).kdim(3).add_bias_kv(true)); },
      [] {
        return std::move(nn::Attrs().set("embed_dim", 4).set("num_heads", 2).set("kdim", 3).set("add_bias_kv", true));
      }};
  auto layer_options = [] { return nn::TransformerLayerOptions(8, 2).dim_feedforward(16).norm_first(true); };
  auto layer_attrs = [] {
    return std::move(nn::Attrs().set("d_model", 8).set("nhead", 2).set("dim_feedforward", 16).set("norm_first", true));
  };
  t["nn.TransformerEncoderLayer"] = {[=] { return nn::TransformerEncoderLayer(layer_options()); }, layer_attrs};
  t["nn.TransformerDecoderLayer"] = {[=] { return nn::TransformerDecoderLayer(layer_options()); }, layer_attrs};
  t["nn.TransformerEncoder"] = {
      [=] { return nn::TransformerEncoder(nn::TransformerEncoderOptions(layer_options(), 2).norm(true)); },
      [=] { return std::move(layer_attrs().set("num_layers", 2).set("norm", true)); }};
  t["nn.TransformerDecoder"] = {
      [=] { return nn::TransformerDecoder(nn::TransformerDecoderOptions(layer_options(), 1)); },
      [=] { return std::move(layer_attrs().set("num_layers", 1)); }};
  t["nn.Transformer"] = {[] { return nn::Transformer(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16)); },
                         [] {
                           return std::move(nn::Attrs()
                                                .set("d_model", 8)
                                                .set("nhead", 2)
                                                .set("num_encoder_layers", 1)
                                                .set("num_decoder_layers", 1)
                                                .set("dim_feedforward", 16));
                         }};
  auto padding = [](std::vector<int64_t> p) { return [p] { return std::move(nn::Attrs().set("padding", p)); }; };
  t["nn.ReflectionPad1d"] = {[] { return nn::ReflectionPad1d(2); }, padding({2})};
  t["nn.ReflectionPad2d"] = {[] {
                               return nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 0, 1}));
                             },
                             padding({1, 2, 0, 1})};
  t["nn.ReflectionPad3d"] = {[] { return nn::ReflectionPad3d(1); }, padding({1})};
  t["nn.ReplicationPad1d"] = {[] {
                                return nn::ReplicationPad1d(nn::ReplicationPad1dOptions({0, 3}));
                              },
                              padding({0, 3})};
  t["nn.ReplicationPad2d"] = {[] { return nn::ReplicationPad2d(1); }, padding({1})};
  t["nn.ReplicationPad3d"] = {[] { return nn::ReplicationPad3d(2); }, padding({2})};
  t["nn.CircularPad1d"] = {[] { return nn::CircularPad1d(1); }, padding({1})};
  t["nn.CircularPad2d"] = {[] {
                             return nn::CircularPad2d(nn::CircularPad2dOptions({1, 1, 2, 2}));
                           },
                           padding({1, 1, 2, 2})};
  t["nn.CircularPad3d"] = {[] { return nn::CircularPad3d(1); }, padding({1})};
  t["nn.ZeroPad1d"] = {[] { return nn::ZeroPad1d(1); }, padding({1})};
  t["nn.ZeroPad2d"] = {[] { return nn::ZeroPad2d(nn::ZeroPad2dOptions({1, 0, 2, -1})); }, padding({1, 0, 2, -1})};
  t["nn.ZeroPad3d"] = {[] { return nn::ZeroPad3d(3); }, padding({3})};
  auto constant = [](std::vector<int64_t> p) {
    return [p] { return std::move(nn::Attrs().set("padding", p).set("value", 3.5)); };
  };
  t["nn.ConstantPad1d"] = {[] { return nn::ConstantPad1d(nn::ConstantPad1dOptions({1, 2}, 3.5)); }, constant({1, 2})};
  t["nn.ConstantPad2d"] = {[] { return nn::ConstantPad2d(nn::ConstantPad2dOptions(1, 3.5)); }, constant({1})};
  t["nn.ConstantPad3d"] = {[] { return nn::ConstantPad3d(nn::ConstantPad3dOptions(2, 3.5)); }, constant({2})};
  auto dropout = [] { return std::move(nn::Attrs().set("p", 0.25).set("inplace", true)); };
  t["nn.Dropout1d"] = {[] { return nn::Dropout1d(nn::Dropout1dOptions(0.25).inplace(true)); }, dropout};
  t["nn.Dropout2d"] = {[] { return nn::Dropout2d(nn::Dropout2dOptions(0.25).inplace(true)); }, dropout};
  t["nn.Dropout3d"] = {[] { return nn::Dropout3d(nn::Dropout3dOptions(0.25).inplace(true)); }, dropout};
  t["nn.AlphaDropout"] = {[] { return nn::AlphaDropout(nn::AlphaDropoutOptions(0.25).inplace(true)); }, dropout};
  t["nn.FeatureAlphaDropout"] = {
      [] { return nn::FeatureAlphaDropout(nn::FeatureAlphaDropoutOptions(0.25).inplace(true)); }, dropout};
  t["nn.PixelShuffle"] = {[] { return nn::PixelShuffle(2); },
                          [] { return std::move(nn::Attrs().set("upscale_factor", 2)); }};
  t["nn.PixelUnshuffle"] = {[] { return nn::PixelUnshuffle(3); },
                            [] { return std::move(nn::Attrs().set("downscale_factor", 3)); }};
  t["nn.ChannelShuffle"] = {[] { return nn::ChannelShuffle(2); },
                            [] { return std::move(nn::Attrs().set("groups", 2)); }};
  t["nn.CosineSimilarity"] = {[] { return nn::CosineSimilarity(nn::CosineSimilarityOptions().dim(2)); },
                              [] { return std::move(nn::Attrs().set("dim", 2)); }};
  t["nn.PairwiseDistance"] = {[] { return nn::PairwiseDistance(nn::PairwiseDistanceOptions().p(1).keepdim(true)); },
                              [] { return std::move(nn::Attrs().set("p", 1.0).set("keepdim", true)); }};
  t["nn.Bilinear"] = {
      [] { return nn::Bilinear(nn::BilinearOptions(3, 4, 5).bias(false)); },
      [] {
        return std::move(
            nn::Attrs().set("in1_features", 3).set("in2_features", 4).set("out_features", 5).set("bias", false));
      }};
  t["nn.BatchNorm3d"] = {[] { return nn::BatchNorm3d(3); },
                         [] { return std::move(nn::Attrs().set("num_features", 3)); }};
  auto instance = [] { return std::move(nn::Attrs().set("num_features", 3).set("affine", true)); };
  t["nn.InstanceNorm1d"] = {[] { return nn::InstanceNorm1d(nn::InstanceNorm1dOptions(3).affine(true)); }, instance};
  t["nn.InstanceNorm2d"] = {[] { return nn::InstanceNorm2d(nn::InstanceNorm2dOptions(3).affine(true)); }, instance};
  t["nn.InstanceNorm3d"] = {[] { return nn::InstanceNorm3d(nn::InstanceNorm3dOptions(3).affine(true)); }, instance};
  t["nn.GroupNorm"] = {[] { return nn::GroupNorm(2, 4); },
                       [] { return std::move(nn::Attrs().set("num_groups", 2).set("num_channels", 4)); }};
  t["nn.LocalResponseNorm"] = {[] { return nn::LocalResponseNorm(nn::LocalResponseNormOptions(3).k(2.0)); },
                               [] { return std::move(nn::Attrs().set("size", 3).set("k", 2.0)); }};
  t["nn.CrossMapLRN2d"] = {[] { return nn::CrossMapLRN2d(5); }, [] { return std::move(nn::Attrs().set("size", 5)); }};
  t["nn.CosineEmbeddingLoss"] = {[] { return nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.5)); },
                                 [] { return std::move(nn::Attrs().set("margin", 0.5)); }};
  t["nn.MultiMarginLoss"] = {[] { return nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(2)); },
                             [] { return std::move(nn::Attrs().set("p", 2)); }};
  t["nn.MultiLabelMarginLoss"] = {[] { return nn::MultiLabelMarginLoss(kSum); },
                                  [] { return std::move(nn::Attrs().set("reduction", "sum")); }};
  t["nn.TripletMarginLoss"] = {[] { return nn::TripletMarginLoss(nn::TripletMarginLossOptions().swap(true)); },
                               [] { return std::move(nn::Attrs().set("swap", true)); }};
  t["nn.TripletMarginWithDistanceLoss"] = {
      [] { return nn::TripletMarginWithDistanceLoss(nn::TripletMarginWithDistanceLossOptions().margin(2.0)); },
      [] { return std::move(nn::Attrs().set("margin", 2.0)); }};
  t["nn.GaussianNLLLoss"] = {[] { return nn::GaussianNLLLoss(nn::GaussianNLLLossOptions().full(true)); },
                             [] { return std::move(nn::Attrs().set("full", true)); }};
  t["nn.CTCLoss"] = {[] { return nn::CTCLoss(nn::CTCLossOptions().blank(2).zero_infinity(true)); },
                     [] { return std::move(nn::Attrs().set("blank", 2).set("zero_infinity", true)); }};
  auto window = [](std::vector<int64_t> k, std::vector<int64_t> st) {
    return [k, st] { return std::move(nn::Attrs().set("kernel_size", k).set("stride", st)); };
  };
  t["nn.MaxPool1d"] = {[] { return nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2)); }, window({3}, {2})};
  t["nn.MaxPool3d"] = {[] {
                         return nn::MaxPool3d(nn::MaxPool3dOptions({1, 2, 2}).stride(1));
                       },
                       window({1, 2, 2}, {1, 1, 1})};
  t["nn.AvgPool1d"] = {[] { return nn::AvgPool1d(nn::AvgPool1dOptions(3)); }, window({3}, {3})};
  t["nn.AvgPool3d"] = {[] { return nn::AvgPool3d(nn::AvgPool3dOptions(2)); }, window({2, 2, 2}, {2, 2, 2})};
  auto output_size = [](std::vector<int64_t> o) {
    return [o] { return std::move(nn::Attrs().set("output_size", o)); };
  };
  t["nn.AdaptiveAvgPool1d"] = {[] { return nn::AdaptiveAvgPool1d(3); }, output_size({3})};
  t["nn.AdaptiveAvgPool3d"] = {[] {
                                 return nn::AdaptiveAvgPool3d(nn::AdaptiveAvgPool3dOptions({1, 2, 3}));
                               },
                               output_size({1, 2, 3})};
  t["nn.AdaptiveMaxPool1d"] = {[] { return nn::AdaptiveMaxPool1d(2); }, output_size({2})};
  t["nn.AdaptiveMaxPool2d"] = {[] {
                                 return nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions({2, 3}));
                               },
                               output_size({2, 3})};
  t["nn.AdaptiveMaxPool3d"] = {[] { return nn::AdaptiveMaxPool3d(2); }, output_size({2, 2, 2})};
  t["nn.LPPool1d"] = {
      [] { return nn::LPPool1d(nn::LPPool1dOptions(2, 3)); },
      [] { return std::move(nn::Attrs().set("norm_type", 2.0).set("kernel_size", 3).set("stride", 3)); }};
  t["nn.LPPool2d"] = {[] {
                        return nn::LPPool2d(nn::LPPool2dOptions(1.5, {2, 3}).stride(1));
                      },
                      [] {
                        return std::move(nn::Attrs()
                                             .set("norm_type", 1.5)
                                             .set("kernel_size", std::vector<int64_t>{2, 3})
                                             .set("stride", std::vector<int64_t>{1, 1}));
                      }};
  t["nn.ReLU"] = {[] { return nn::ReLU(); }, none};
  t["nn.SiLU"] = {[] { return nn::SiLU(); }, none};
  t["nn.Sigmoid"] = {[] { return nn::Sigmoid(); }, none};
  t["nn.Tanh"] = {[] { return nn::Tanh(); }, none};
  t["nn.LeakyReLU"] = {[] { return nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)); },
                       [] { return std::move(nn::Attrs().set("negative_slope", 0.2)); }};
  t["nn.GELU"] = {[] { return nn::GELU(nn::GELUOptions().approximate("tanh")); },
                  [] { return std::move(nn::Attrs().set("approximate", "tanh")); }};
  t["nn.Tanhshrink"] = {[] { return nn::Tanhshrink(); }, none};
  t["nn.Softsign"] = {[] { return nn::Softsign(); }, none};
  t["nn.LogSigmoid"] = {[] { return nn::LogSigmoid(); }, none};
  t["nn.Softmax2d"] = {[] { return nn::Softmax2d(); }, none};
  t["nn.SELU"] = {[] { return nn::SELU(nn::SELUOptions().inplace(true)); },
                  [] { return std::move(nn::Attrs().set("inplace", true)); }};
  t["nn.ReLU6"] = {[] { return nn::ReLU6(); }, none};
  t["nn.Hardswish"] = {[] { return nn::Hardswish(); }, none};
  t["nn.Hardsigmoid"] = {[] { return nn::Hardsigmoid(); }, none};
  t["nn.Mish"] = {[] { return nn::Mish(); }, none};
  t["nn.ELU"] = {[] { return nn::ELU(nn::ELUOptions().alpha(0.5).inplace(true)); },
                 [] { return std::move(nn::Attrs().set("alpha", 0.5).set("inplace", true)); }};
  t["nn.CELU"] = {[] { return nn::CELU(nn::CELUOptions().alpha(2.0)); },
                  [] { return std::move(nn::Attrs().set("alpha", 2.0)); }};
  t["nn.GLU"] = {[] { return nn::GLU(nn::GLUOptions().dim(1)); }, [] { return std::move(nn::Attrs().set("dim", 1)); }};
  t["nn.Hardtanh"] = {[] { return nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(3)); },
                      [] { return std::move(nn::Attrs().set("min_val", -2.0).set("max_val", 3.0)); }};
  t["nn.Hardshrink"] = {[] { return nn::Hardshrink(nn::HardshrinkOptions().lambda(0.25)); },
                        [] { return std::move(nn::Attrs().set("lambd", 0.25)); }};
  t["nn.Softshrink"] = {[] { return nn::Softshrink(); }, none};
  t["nn.Softplus"] = {[] { return nn::Softplus(nn::SoftplusOptions().beta(2).threshold(10)); },
                      [] { return std::move(nn::Attrs().set("beta", 2.0).set("threshold", 10.0)); }};
  t["nn.Threshold"] = {[] { return nn::Threshold(0.1, 20); },
                       [] { return std::move(nn::Attrs().set("threshold", 0.1).set("value", 20.0)); }};
  t["nn.RReLU"] = {[] { return nn::RReLU(nn::RReLUOptions().lower(0.1)); },
                   [] { return std::move(nn::Attrs().set("lower", 0.1)); }};
  t["nn.PReLU"] = {[] { return nn::PReLU(nn::PReLUOptions().num_parameters(3)); },
                   [] { return std::move(nn::Attrs().set("num_parameters", 3)); }};
  t["nn.Softmin"] = {[] { return nn::Softmin(1); }, [] { return std::move(nn::Attrs().set("dim", 1)); }};
  t["nn.Softmax"] = {[] { return nn::Softmax(1); }, [] { return std::move(nn::Attrs().set("dim", 1)); }};
  t["nn.LogSoftmax"] = {[] { return nn::LogSoftmax(-1); }, [] { return std::move(nn::Attrs().set("dim", -1)); }};
  t["nn.MSELoss"] = {[] { return nn::MSELoss(kSum); }, [] { return std::move(nn::Attrs().set("reduction", "sum")); }};
  t["nn.L1Loss"] = {[] { return nn::L1Loss(); }, none};
  t["nn.SoftMarginLoss"] = {[] { return nn::SoftMarginLoss(kSum); },
                            [] { return std::move(nn::Attrs().set("reduction", "sum")); }};
  t["nn.MultiLabelSoftMarginLoss"] = {[] { return nn::MultiLabelSoftMarginLoss(); }, none};
  t["nn.SmoothL1Loss"] = {[] { return nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5)); },
                          [] { return std::move(nn::Attrs().set("beta", 0.5)); }};
  t["nn.HuberLoss"] = {[] { return nn::HuberLoss(nn::HuberLossOptions(kNone).delta(2.0)); },
                       [] { return std::move(nn::Attrs().set("reduction", "none").set("delta", 2.0)); }};
  t["nn.KLDivLoss"] = {[] { return nn::KLDivLoss(nn::KLDivLossOptions("batchmean").log_target(true)); },
                       [] { return std::move(nn::Attrs().set("reduction", "batchmean").set("log_target", true)); }};
  t["nn.HingeEmbeddingLoss"] = {[] { return nn::HingeEmbeddingLoss(nn::HingeEmbeddingLossOptions().margin(2.0)); },
                                [] { return std::move(nn::Attrs().set("margin", 2.0)); }};
  t["nn.PoissonNLLLoss"] = {[] { return nn::PoissonNLLLoss(nn::PoissonNLLLossOptions().log_input(false)); },
                            [] { return std::move(nn::Attrs().set("log_input", false)); }};
  t["nn.MarginRankingLoss"] = {[] { return nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.5)); },
                               [] { return std::move(nn::Attrs().set("margin", 0.5)); }};
  t["nn.BCELoss"] = {
      [] { return nn::BCELoss(nn::BCELossOptions().weight(full({1}, 0.5)).reduction("none")); },
      [] { return std::move(nn::Attrs().set("weight", std::vector<double>{0.5}).set("reduction", "none")); }};
  t["nn.BCEWithLogitsLoss"] = {
      [] { return nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(full({1}, 2.0))); },
      [] { return std::move(nn::Attrs().set("pos_weight", std::vector<double>{2.0})); }};
  t["nn.CrossEntropyLoss"] = {
      [] { return nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().label_smoothing(0.1).reduction(kSum)); },
      [] { return std::move(nn::Attrs().set("label_smoothing", 0.1).set("reduction", "sum")); }};
  t["nn.NLLLoss"] = {[] { return nn::NLLLoss(nn::NLLLossOptions().ignore_index(3)); },
                     [] { return std::move(nn::Attrs().set("ignore_index", 3)); }};
  t["nn.BatchNorm1d"] = {[] { return nn::BatchNorm1d(nn::BatchNormOptions(5).momentum(std::nullopt)); },
                         [] { return std::move(nn::Attrs().set("num_features", 5).set("momentum", std::nullopt)); }};
  t["nn.BatchNorm2d"] = {
      [] { return nn::BatchNorm2d(nn::BatchNormOptions(3).affine(false).eps(1e-3)); },
      [] { return std::move(nn::Attrs().set("num_features", 3).set("affine", false).set("eps", 1e-3)); }};
  t["nn.LayerNorm"] = {
      [] {
        return nn::LayerNorm(nn::LayerNormOptions({2, 3}).elementwise_affine(false));
      },
      [] {
        return std::move(
            nn::Attrs().set("normalized_shape", std::vector<int64_t>{2, 3}).set("elementwise_affine", false));
      }};
  t["nn.Conv2d"] = {[] {
                      return nn::Conv2d(nn::Conv2dOptions(2, 4, {3, 2}).stride(2).padding(1).groups(2));
                    },
                    [] {
                      return std::move(nn::Attrs()
                                           .set("in_channels", 2)
                                           .set("out_channels", 4)
                                           .set("kernel_size", std::vector<int64_t>{3, 2})
                                           .set("stride", std::vector<int64_t>{2})
                                           .set("padding", std::vector<int64_t>{1})
                                           .set("groups", 2));
                    }};
  t["nn.Conv1d"] = {[] { return nn::Conv1d(nn::Conv1dOptions(2, 4, 3).dilation(2).bias(false)); },
                    [] {
                      return std::move(nn::Attrs()
                                           .set("in_channels", 2)
                                           .set("out_channels", 4)
                                           .set("kernel_size", std::vector<int64_t>{3})
                                           .set("dilation", std::vector<int64_t>{2})
                                           .set("bias", false));
                    }};
  t["nn.Conv3d"] = {
      [] {
        return nn::Conv3d(nn::Conv3dOptions(2, 4, {3, 2, 2}).padding(nnp::kSame).padding_mode(nnp::kCircular));
      },
      [] {
        return std::move(nn::Attrs()
                             .set("in_channels", 2)
                             .set("out_channels", 4)
                             .set("kernel_size", std::vector<int64_t>{3, 2, 2})
                             .set("padding", "same")
                             .set("padding_mode", "circular"));
      }};
  t["nn.ConvTranspose1d"] = {[] { return nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 4, 3).groups(2)); },
                             [] {
                               return std::move(nn::Attrs()
                                                    .set("in_channels", 2)
                                                    .set("out_channels", 4)
                                                    .set("kernel_size", std::vector<int64_t>{3})
                                                    .set("groups", 2));
                             }};
  t["nn.ConvTranspose2d"] = {
      [] { return nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 4, 3).stride(2).output_padding(1).bias(false)); },
      [] {
        return std::move(nn::Attrs()
                             .set("in_channels", 2)
                             .set("out_channels", 4)
                             .set("kernel_size", std::vector<int64_t>{3})
                             .set("stride", std::vector<int64_t>{2})
                             .set("output_padding", std::vector<int64_t>{1})
                             .set("bias", false));
      }};
  t["nn.ConvTranspose3d"] = {[] {
                               return nn::ConvTranspose3d(nn::ConvTranspose3dOptions(2, 3, 2).dilation({1, 2, 1}));
                             },
                             [] {
                               return std::move(nn::Attrs()
                                                    .set("in_channels", 2)
                                                    .set("out_channels", 3)
                                                    .set("kernel_size", std::vector<int64_t>{2})
                                                    .set("dilation", std::vector<int64_t>{1, 2, 1}));
                             }};
  t["nn.Unfold"] = {
      [] {
        return nn::Unfold(nn::UnfoldOptions({2, 3}).padding(1));
      },
      [] {
        return std::move(
            nn::Attrs().set("kernel_size", std::vector<int64_t>{2, 3}).set("padding", std::vector<int64_t>{1}));
      }};
  t["nn.Fold"] = {[] {
                    return nn::Fold(nn::FoldOptions({4, 5}, 2).stride(2));
                  },
                  [] {
                    return std::move(nn::Attrs()
                                         .set("output_size", std::vector<int64_t>{4, 5})
                                         .set("kernel_size", std::vector<int64_t>{2})
                                         .set("stride", std::vector<int64_t>{2}));
                  }};
  t["nn.MaxPool2d"] = {[] { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)); },
                       [] {
                         return std::move(nn::Attrs()
                                              .set("kernel_size", std::vector<int64_t>{3})
                                              .set("stride", std::vector<int64_t>{2})
                                              .set("padding", std::vector<int64_t>{1}));
                       }};
  t["nn.AvgPool2d"] = {[] {
                         return nn::AvgPool2d(nn::AvgPool2dOptions({2, 3}));
                       },
                       [] {
                         return std::move(nn::Attrs().set("kernel_size", std::vector<int64_t>{2, 3}));
                       }};
  t["nn.AdaptiveAvgPool2d"] = {[] {
                                 return nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({2, 1}));
                               },
                               [] {
                                 return std::move(nn::Attrs().set("output_size", std::vector<int64_t>{2, 1}));
                               }};
  return t;
}

}  // namespace

TEST(TypedLayers, EveryBuiltInTypeHasAHolderThatBuildsTheSameLayer) {
  std::map<std::string, Twin> all = twins();
  int builtins = 0;
  for (int32_t i = 0; i < api().layer_type_count(); ++i) {
    nnp_layer_type info{};
    info.struct_size = sizeof(info);
    check(api().layer_type_info(i, &info));
    const char* plugin = nullptr;
    check(api().layer_type_plugin(i, &plugin));
    if (std::string(plugin) != "core") continue;
    ++builtins;
    SCOPED_TRACE(info.name);
    auto it = all.find(info.name);
    ASSERT_NE(it, all.end()) << "no typed holder for the built-in layer " << info.name;
    nn::ModuleHandle typed = it->second.typed();
    nn::ModuleHandle spec = nn::create_layer(info.name, it->second.attrs());
    EXPECT_EQ(typed.repr(), spec.repr());
    std::vector<std::string> typed_keys, spec_keys;
    for (const auto& entry : typed.state_dict()) typed_keys.push_back(entry.first);
    for (const auto& entry : spec.state_dict()) spec_keys.push_back(entry.first);
    EXPECT_EQ(typed_keys, spec_keys);
  }
  EXPECT_EQ(builtins, static_cast<int>(all.size())) << "a holder names a type the registry does not have";
}

TEST(TypedLayers, LinearAsLibtorchWritesIt) {
  manual_seed(1);
  nn::Linear lin(4, 3);
  EXPECT_EQ(lin->weight.shape(), (Shape{3, 4}));
  EXPECT_EQ(lin->bias.shape(), (Shape{3}));
  EXPECT_EQ(lin->options.out_features(), 3);
  EXPECT_TRUE(lin->options.bias());
  Tensor x = randn({2, 4});
  Tensor y = lin(x);
  EXPECT_EQ(y.to_vector<float>(), F::linear(x, lin->weight, lin->bias).to_vector<float>());
  EXPECT_EQ(lin->forward(x).to_vector<float>(), y.to_vector<float>());
  // The fields are the module's own tensors: they follow it across dtypes.
  lin->to(kFloat64);
  EXPECT_EQ(lin->weight.dtype(), Dtype::f64);
  EXPECT_EQ(lin->named_parameters()[0].second.get(), lin->weight.get());
  nn::Linear no_bias(nn::LinearOptions(4, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->repr(), "Linear(in_features=4, out_features=3, bias=False)");
  // Copies share one layer, as libtorch's holders do.
  nn::Linear same = lin;
  EXPECT_EQ(same.get(), lin.get());
}

TEST(TypedLayers, Conv2dWithChainedOptions) {
  nn::Conv2d conv(nn::Conv2dOptions(1, 16, 5).stride(2).padding(1));
  EXPECT_EQ(conv->weight.shape(), (Shape{16, 1, 5, 5}));
  EXPECT_EQ(conv->options.stride()[1], 2);
  EXPECT_EQ(conv->repr(), "Conv2d(1, 16, kernel_size=(5, 5), stride=(2, 2), padding=(1, 1))");
  EXPECT_EQ(conv(randn({2, 1, 28, 28})).shape(), (Shape{2, 16, 13, 13}));
}

namespace {
struct Net : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::BatchNorm1d norm{nullptr};
  Net() : Module("Net") {
    fc1 = register_module("fc1", nn::Linear(4, 8));
    norm = register_module("norm", nn::BatchNorm1d(8));
    fc2 = register_module("fc2", nn::Linear(8, 2));
  }
  Tensor forward(const Tensor& x) override { return fc2(norm(fc1(x)).relu()); }
};
}  // namespace

TEST(TypedLayers, RegisteredAsSubmodulesAndInsideSequential) {
  auto net = nn::make<Net>();
  std::vector<std::string> names;
  for (const auto& [name, t] : net->named_parameters()) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "norm.weight", "norm.bias", "fc2.weight", "fc2.bias"}));
  Tensor before = net->norm->running_mean.clone();
  (*net)(randn({5, 4}));
  // The typed field is the buffer the layer updates.
  EXPECT_NE(before.to_vector<float>(), net->norm->running_mean.to_vector<float>());
  EXPECT_EQ(net->norm->num_batches_tracked.item<int64_t>(), 1);

  nn::Sequential seq{nn::Linear(4, 8), nn::ReLU(), nn::Dropout(0.5), nn::Linear(8, 2)};
  std::vector<std::string> keys;
  for (const auto& entry : seq.state_dict()) keys.push_back(entry.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias"}));
  seq.eval();
  EXPECT_EQ(seq(randn({3, 4})).shape(), (Shape{3, 2}));
}

TEST(TypedLayers, LossesTakeInputAndTarget) {
  Tensor x = randn({4, 5}, Dtype::f64), t = from_vector(std::vector<int64_t>{0, 4, 2, 1});
  nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().label_smoothing(0.1));
  EXPECT_DOUBLE_EQ(loss(x, t).item<double>(),
                   F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(0.1)).item<double>());
  nn::MSELoss mse(kSum);
  EXPECT_DOUBLE_EQ(mse(x, x * 2.0).item<double>(), (x * x).sum().item<double>());
}

TEST(TypedLayers, AnEmptyHolderSaysSo) {
  nn::Linear fc{nullptr};
  EXPECT_TRUE(fc.is_empty());
  expect_error([&] { fc(randn({1, 2})); }, NNP_INVALID_ARGUMENT, {"empty module holder"});
  fc = nn::Linear(2, 1);
  EXPECT_EQ(fc(randn({1, 2})).shape(), (Shape{1, 1}));
  // Options a layer refuses are refused when the holder is made.
  expect_error([] { nn::Dropout(1.5); }, NNP_INVALID_ARGUMENT, {"between 0 and 1"});
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); }, NNP_INVALID_ARGUMENT, {"divisible by groups"});
}

TEST(TypedLayers, EmbeddingBagSumsRunsFromOffsets) {
  nn::EmbeddingBag bag(nn::EmbeddingBagOptions(5, 2).mode(kSum));
  const std::vector<float> w = bag->weight.to_vector<float>();
  Tensor y = bag->forward(from_vector(std::vector<int64_t>{0, 1, 2, 3}), from_vector(std::vector<int64_t>{0, 1}));
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  const std::vector<float> got = y.to_vector<float>();
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_FLOAT_EQ(got[d], w[d]);                                  // bag 0: row 0
    EXPECT_NEAR(got[2 + d], w[2 + d] + w[4 + d] + w[6 + d], 1e-6);  // bag 1: rows 1 to 3
  }
  expect_error(
      [&] {
        bag->forward(from_vector(std::vector<int64_t>{0, 1}));
      },
      NNP_INVALID_ARGUMENT, {"offsets has to be a 1-D tensor"});
  expect_error(
      [&] {
        bag->forward(from_vector(std::vector<int64_t>{0, 7}), from_vector(std::vector<int64_t>{0}));
      },
      NNP_INVALID_ARGUMENT, {"index 7 is out of range for 5 embeddings"});
}

TEST(TypedLayers, ConvTransposeUndoesTheShapeOfAStridedConv) {
  nn::Conv2d down(nn::Conv2dOptions(3, 6, 3).stride(2).padding(1));
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(6, 3, 3).stride(2).padding(1).output_padding(1));
  Tensor x = randn({2, 3, 8, 10});
  EXPECT_EQ(up(down(x)).shape(), x.shape());
  nn::Conv1d same(nn::Conv1dOptions(3, 4, 4).padding(kSame).padding_mode(kReflect));
  EXPECT_EQ(same(randn({2, 3, 9})).shape(), (Shape{2, 4, 9}));
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(kSame).stride(2)); }, NNP_INVALID_ARGUMENT,
               {"not supported for strided convolutions"});
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding("full")); }, NNP_INVALID_ARGUMENT,
               {"invalid padding string 'full'"});
  expect_error([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 4, 3).output_padding(1)); }, NNP_INVALID_ARGUMENT,
               {"output_padding", "smaller than either stride or dilation"});
}

TEST(TypedLayers, AdaptiveLogSoftmaxGivesTheFullDistribution) {
  nn::AdaptiveLogSoftmaxWithLoss asm_(nn::AdaptiveLogSoftmaxWithLossOptions(6, 9, {2, 5}).head_bias(true));
  Tensor x = randn({4, 6}, Dtype::f64);
  asm_->to(Dtype::f64);
  Tensor target = from_vector(std::vector<int64_t>{0, 3, 8, 5});
  nn::ASMoutput out = asm_(x, target);
  Tensor all = asm_->log_prob(x);
  ASSERT_EQ(all.shape(), (Shape{4, 9}));
  // Each row is a distribution, and forward's output is its entry at the target.
  for (double total : all.exp().sum({1}).to_vector<double>()) EXPECT_NEAR(total, 1.0, 1e-12);
  const std::vector<double> picked = all.gather(1, target.reshape({4, 1})).reshape({4}).to_vector<double>();
  const std::vector<double> output = out.output.to_vector<double>();
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(output[i], picked[i], 1e-12);
  double mean = 0;
  for (double v : output) mean -= v / 4;
  EXPECT_NEAR(out.loss.item<double>(), mean, 1e-12);
  EXPECT_EQ(asm_->predict(x).to_vector<int64_t>(), all.argmax(1).to_vector<int64_t>());
  expect_error(
      [&] {
        asm_(x, from_vector(std::vector<int64_t>{0, 3, 9, 1}));
      },
      NNP_INVALID_ARGUMENT, {"Target values should be in [0, 8], but values in range [0, 9] were found"});
  expect_error(
      [] {
        nn::AdaptiveLogSoftmaxWithLoss(nn::AdaptiveLogSoftmaxWithLossOptions(4, 5, {3, 2}));
      },
      NNP_INVALID_ARGUMENT, {"cutoffs should be a sequence of unique, positive integers sorted"});
}

TEST(TypedLayers, ConvTransposeTakesAnOutputSize) {
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(2, 3, 3).stride(2).padding(1));
  Tensor x = randn({1, 2, 4, 5});
  EXPECT_EQ(up(x).shape(), (Shape{1, 3, 7, 9}));
  EXPECT_EQ(up->forward(x, {8, 10}).shape(), (Shape{1, 3, 8, 10}));
  EXPECT_EQ(up->forward(x, {1, 3, 8, 9}).shape(), (Shape{1, 3, 8, 9}));
  expect_error(
      [&] {
        up->forward(x, {9, 9});
      },
      NNP_INVALID_ARGUMENT, {"requested an output size of (9, 9), but valid sizes range from (7, 9) to (8, 10)"});
  expect_error([&] { up->forward(x, {8}); }, NNP_INVALID_ARGUMENT, {"output_size must have 2 or 4 elements (got 1)"});
}

TEST(TypedLayers, FractionalMaxPoolDrawsOrTakesItsSamples) {
  // Samples fix the windows: the same samples give the same output, and the
  // maxima of arange lie where the indices say.
  Tensor x = arange(0, 2 * 3 * 8 * 8, 1, Dtype::f32).reshape({2, 3, 8, 8});
  nn::FractionalMaxPool2d pool(nn::FractionalMaxPool2dOptions(2).output_size({5, 4}));
  Tensor samples = rand({2, 3, 2});
  auto [values, indices] = pool->forward_with_indices(x, samples);
  ASSERT_EQ(values.shape(), (Shape{2, 3, 5, 4}));
  EXPECT_EQ(pool(x, samples).to_vector<float>(), values.to_vector<float>());
  const std::vector<float> v = values.to_vector<float>();
  const std::vector<int64_t> at = indices.to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<float>((i / 20) * 64 + at[i])) << i;
  // Without samples each call draws its own, within the same bounds.
  Tensor drawn = pool(x);
  EXPECT_EQ(drawn.shape(), (Shape{2, 3, 5, 4}));
  expect_error([&] { pool(x, rand({2, 3, 3})); }, NNP_SHAPE_MISMATCH, {"_random_samples must be [N, C, 2]"});
  expect_error(
      [&] {
        nn::FractionalMaxPool2d(nn::FractionalMaxPool2dOptions(6).output_size({4, 4}))(x);
      },
      NNP_SHAPE_MISMATCH, {"pool height 6 too large relative to input height 8"});
  expect_error([] { nn::create_layer("nn.FractionalMaxPool2d", std::move(nn::Attrs().set("kernel_size", 2))); },
               NNP_INVALID_ARGUMENT, {"either an output size, or a pooling ratio"});
  expect_error(
      [] {
        nn::create_layer("nn.FractionalMaxPool3d",
                         std::move(nn::Attrs().set("kernel_size", 2).set("output_ratio", std::vector<double>{1.5})));
      },
      NNP_INVALID_ARGUMENT, {"output_ratio must be between 0 and 1"});
}

TEST(TypedLayers, MaxUnpoolTakesAnOutputSize) {
  // The 2x2 maxima of arange(16) as [4, 4] lie at 5, 7, 13 and 15.
  Tensor pooled = from_vector(std::vector<float>{5, 7, 13, 15}).reshape({1, 1, 2, 2});
  Tensor indices = from_vector(std::vector<int64_t>{5, 7, 13, 15}).reshape({1, 1, 2, 2});
  nn::MaxUnpool2d unpool(nn::MaxUnpool2dOptions(2));
  Tensor restored = unpool(pooled, indices);
  ASSERT_EQ(restored.shape(), (Shape{1, 1, 4, 4}));
  const std::vector<float> v = restored.to_vector<float>();
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(v[i], (i == 5 || i == 7 || i == 13 || i == 15) ? float(i) : 0.0f);
  EXPECT_EQ(unpool->forward(pooled, indices, std::vector<int64_t>{5, 5}).shape(), (Shape{1, 1, 5, 5}));
  expect_error(
      [&] {
        unpool->forward(pooled, indices, std::vector<int64_t>{7, 7});
      },
      NNP_INVALID_ARGUMENT, {"output_size", "plus or minus the stride"});
  expect_error([&] { unpool(pooled, indices * int64_t{3}); }, NNP_INVALID_ARGUMENT,
               {"invalid max index 45", "of size 16"});
}
