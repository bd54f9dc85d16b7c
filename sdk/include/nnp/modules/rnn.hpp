// nnp/modules/rnn.hpp - typed RNN, LSTM, GRU, RNNCell, LSTMCell and GRUCell
// (libtorch's holders over the registry's nn.* layers), returning what
// libtorch's return:
//
//   nnp::nn::LSTM lstm(nnp::nn::LSTMOptions(8, 64).batch_first(true));
//   auto [output, state] = lstm(x);          // state: (h_n, c_n)
//   auto [h, c] = cell(x_t, std::make_tuple(h, c));
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <optional>
#include <string>
#include <tuple>

namespace nnp::nn {

namespace detail {
// The options every stacked recurrent layer shares.
#define NNP_RECURRENT_OPTIONS(Name)                                                                     \
  Name(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {} \
  NNP_ARG(int64_t, input_size);                                                                         \
  NNP_ARG(int64_t, hidden_size);                                                                        \
  NNP_ARG(int64_t, num_layers) = 1;                                                                     \
  NNP_ARG(bool, bias) = true;                                                                           \
  NNP_ARG(bool, batch_first) = false;                                                                   \
  NNP_ARG(double, dropout) = 0.0;                                                                       \
  NNP_ARG(bool, bidirectional) = false

template <typename O>
Attrs recurrent_attrs(const O& o) {
  Attrs a;
  a.set("input_size", o.input_size()).set("hidden_size", o.hidden_size()).set("num_layers", o.num_layers());
  a.set("bias", o.bias()).set("batch_first", o.batch_first()).set("dropout", o.dropout());
  a.set("bidirectional", o.bidirectional());
  return a;
}
inline Tensor state_or_none(const std::optional<std::tuple<Tensor, Tensor>>& hx, size_t i) {
  if (!hx) return Tensor();
  return i == 0 ? std::get<0>(*hx) : std::get<1>(*hx);
}
}  // namespace detail

struct RNNOptions {
  NNP_RECURRENT_OPTIONS(RNNOptions);
  NNP_ARG(std::string, nonlinearity) = kTanh;
};
struct RNNImpl : Layer {
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& o)
      : Layer("nn.RNN", detail::recurrent_attrs(o).set("nonlinearity", o.nonlinearity())), options(o) {}
  // (output, h_n); hx undefined: zeros.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {}) {
    Outputs out = call_values({input, hx});
    return {out.tensor(0), out.tensor(1)};
  }
  RNNOptions options;
};
NNP_MODULE(RNN);

struct LSTMOptions {
  NNP_RECURRENT_OPTIONS(LSTMOptions);
  NNP_ARG(int64_t, proj_size) = 0;
};
struct LSTMImpl : Layer {
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& o)
      : Layer("nn.LSTM", detail::recurrent_attrs(o).set("proj_size", o.proj_size())), options(o) {}
  // (output, (h_n, c_n)); no hx: zeros.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt) {
    Outputs out = call_values({input, detail::state_or_none(hx, 0), detail::state_or_none(hx, 1)});
    return {out.tensor(0), {out.tensor(1), out.tensor(2)}};
  }
  LSTMOptions options;
};
NNP_MODULE(LSTM);

struct GRUOptions {
  NNP_RECURRENT_OPTIONS(GRUOptions);
};
#undef NNP_RECURRENT_OPTIONS
struct GRUImpl : Layer {
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& o) : Layer("nn.GRU", detail::recurrent_attrs(o)), options(o) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {}) {
    Outputs out = call_values({input, hx});
    return {out.tensor(0), out.tensor(1)};
  }
  GRUOptions options;
};
NNP_MODULE(GRU);

// The cells: weight_ih, weight_hh, bias_ih and bias_hh as fields.
struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  NNP_ARG(int64_t, input_size);
  NNP_ARG(int64_t, hidden_size);
  NNP_ARG(bool, bias) = true;
  NNP_ARG(std::string, nonlinearity) = kTanh;
};
struct CellOptions {
  CellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  NNP_ARG(int64_t, input_size);
  NNP_ARG(int64_t, hidden_size);
  NNP_ARG(bool, bias) = true;
};
using LSTMCellOptions = CellOptions;
using GRUCellOptions = CellOptions;

class CellLayer : public Layer {
 public:
  CellLayer(const std::string& type, const Attrs& attrs)
      : Layer(type, attrs),
        weight_ih(tensor_named("weight_ih")),
        weight_hh(tensor_named("weight_hh")),
        bias_ih(tensor_named("bias_ih")),
        bias_hh(tensor_named("bias_hh")) {}
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;  // biases undefined with bias(false)

 protected:
  static Attrs attrs_of(int64_t input_size, int64_t hidden_size, bool bias) {
    Attrs a;
    a.set("input_size", input_size).set("hidden_size", hidden_size).set("bias", bias);
    return a;
  }
};

struct RNNCellImpl : CellLayer {
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& o)
      : CellLayer("nn.RNNCell",
                  attrs_of(o.input_size(), o.hidden_size(), o.bias()).set("nonlinearity", o.nonlinearity())),
        options(o) {}
  Tensor forward(const Tensor& input, const Tensor& hx = {}) { return call_values({input, hx}); }
  RNNCellOptions options;
};
NNP_MODULE(RNNCell);

struct LSTMCellImpl : CellLayer {
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& o)
      : CellLayer("nn.LSTMCell", attrs_of(o.input_size(), o.hidden_size(), o.bias())), options(o) {}
  // (h', c'); no hx: zeros.
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt) {
    Outputs out = call_values({input, detail::state_or_none(hx, 0), detail::state_or_none(hx, 1)});
    return {out.tensor(0), out.tensor(1)};
  }
  LSTMCellOptions options;
};
NNP_MODULE(LSTMCell);

struct GRUCellImpl : CellLayer {
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& o)
      : CellLayer("nn.GRUCell", attrs_of(o.input_size(), o.hidden_size(), o.bias())), options(o) {}
  Tensor forward(const Tensor& input, const Tensor& hx = {}) { return call_values({input, hx}); }
  GRUCellOptions options;
};
NNP_MODULE(GRUCell);

}  // namespace nnp::nn
