// nn.RNN, nn.LSTM, nn.GRU and their cells (nn.RNNCell, nn.LSTMCell,
// nn.GRUCell), as PyTorch defines them: the same parameter names, shapes
// and registration order (weight_ih_l0, weight_hh_l0, bias_ih_l0,
// bias_hh_l0, weight_hr_l0, then the _reverse direction, then the next
// layer), gates stacked as PyTorch stacks them (LSTM i, f, g, o; GRU r, z,
// n), so a PyTorch state dict loads strictly. Composed of differentiable ops.
//
// A call with values gives every result, as PyTorch's tuple does but flat:
// RNN and GRU (output, h_n), LSTM (output, h_n, c_n), LSTMCell (h, c).
// Initial states come the same way: (input[, h_0]) or, for LSTM and
// LSTMCell, (input[, h_0, c_0]); None stands for zeros. A call that asks
// for one tensor (module_call, a Sequential) gets the first result, so a
// recurrent layer can sit in a model spec.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::Value;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

namespace {

enum class CellKind { RnnTanh, RnnRelu, Lstm, Gru };

int64_t gate_count(CellKind kind) { return kind == CellKind::Lstm ? 4 : kind == CellKind::Gru ? 3 : 1; }

CellKind rnn_kind(const std::string& type, const Attrs& a) {
  const std::string nonlinearity = a.string("nonlinearity");
  if (nonlinearity == "tanh") return CellKind::RnnTanh;
  if (nonlinearity == "relu") return CellKind::RnnRelu;
  throw Error(NNP_INVALID_ARGUMENT,
              type + ": unknown nonlinearity '" + nonlinearity + "'; select from 'tanh' or 'relu'");
}

// One direction of one layer, or one cell.
struct CellWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;  // biases and w_hr undefined when absent
};

// One time step: the new h (and c for LSTM) from the input's projection
// x_gates = x W_ih^T + b_ih ([N, G*H]) and the state.
void cell_step(CellKind kind, const Tensor& x_gates, const CellWeights& w, Tensor& h, Tensor& c) {
  const Tensor h_gates = F::linear(h, w.w_hh, w.b_hh);
  const int64_t n = w.w_hh.size(0) / gate_count(kind);
  auto gate = [&](const Tensor& t, int64_t i) { return t.narrow(1, i * n, n); };
  switch (kind) {
    case CellKind::RnnTanh: h = (x_gates + h_gates).tanh(); break;
    case CellKind::RnnRelu: h = (x_gates + h_gates).relu(); break;
    case CellKind::Lstm: {
      const Tensor g = x_gates + h_gates;
      c = gate(g, 1).sigmoid() * c + gate(g, 0).sigmoid() * gate(g, 2).tanh();
      h = gate(g, 3).sigmoid() * c.tanh();
      if (w.w_hr.defined()) h = h.matmul(w.w_hr.t());
      break;
    }
    case CellKind::Gru: {
      const Tensor r = (gate(x_gates, 0) + gate(h_gates, 0)).sigmoid();
      const Tensor z = (gate(x_gates, 1) + gate(h_gates, 1)).sigmoid();
      const Tensor candidate = (gate(x_gates, 2) + r * gate(h_gates, 2)).tanh();
      h = candidate + z * (h - candidate);  // (1 - z) * n + z * h
      break;
    }
  }
}

// The arguments of a call: the input, then h_0 (and c_0 for LSTM).
struct States {
  Tensor input, h0, c0;
};
States read_args(const std::string& type, bool lstm, const std::vector<Value>& args) {
  const CallArgs call(
      type, args, lstm ? std::vector<const char*>{"input", "h_0", "c_0"} : std::vector<const char*>{"input", "hx"}, 1);
  States out{call.tensor(0), call.tensor(1), lstm ? call.tensor(2) : Tensor()};
  if (lstm && out.h0.defined() != out.c0.defined())
    throw Error(NNP_INVALID_ARGUMENT, type + ": give both h_0 and c_0, or neither");
  return out;
}

void check_state(const std::string& type, const char* what, const Tensor& state, const nnp::Shape& expected,
                 const Tensor& input) {
  if (state.shape() != expected)
    throw Error(NNP_SHAPE_MISMATCH, type + ": expected " + what + " of size " + shape_text(expected) + ", got " +
                                        shape_text(state.shape()));
  if (state.dtype() != input.dtype())
    throw Error(NNP_DTYPE_MISMATCH, type + ": " + what + " is " + dtype_name(state.dtype()) + " but the input is " +
                                        dtype_name(input.dtype()));
}

}  // namespace

// RNN, LSTM and GRU: num_layers stacked layers, each one or two directions.
struct Recurrent : nnp::nn::Module {
  CellKind kind;
  int64_t input_size, hidden_size, num_layers, proj_size;
  bool bias, batch_first, bidirectional;
  double dropout;
  std::vector<CellWeights> cells;  // [layer * directions + direction]

  Recurrent(const char* name, CellKind k, const Attrs& a)
      : Module(name),
        kind(k),
        input_size(a.integer("input_size")),
        hidden_size(a.integer("hidden_size")),
        num_layers(a.integer("num_layers")),
        proj_size(a.has("proj_size") ? a.integer("proj_size") : 0),
        bias(a.boolean("bias")),
        batch_first(a.boolean("batch_first")),
        bidirectional(a.boolean("bidirectional")),
        dropout(a.real("dropout")) {
    const std::string type = name;
    if (!(dropout >= 0 && dropout <= 1))
      throw Error(NNP_INVALID_ARGUMENT, type +
                                            ": dropout should be a number in range [0, 1] representing the "
                                            "probability of an element being zeroed, got " +
                                            nnp::nn::format_float(dropout));
    if (input_size < 0) throw Error(NNP_INVALID_ARGUMENT, type + ": input_size must be >= 0");
    if (hidden_size <= 0) throw Error(NNP_INVALID_ARGUMENT, type + ": hidden_size must be greater than zero");
    if (num_layers <= 0) throw Error(NNP_INVALID_ARGUMENT, type + ": num_layers must be greater than zero");
    if (proj_size < 0)
      throw Error(NNP_INVALID_ARGUMENT,
                  type + ": proj_size should be a positive integer or zero to disable projections");
    if (proj_size >= hidden_size)
      throw Error(NNP_INVALID_ARGUMENT, type + ": proj_size has to be smaller than hidden_size");

    const int64_t gates = gate_count(kind) * hidden_size, out_size = output_size();
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
    auto param = [&](const std::string& key, const nnp::Shape& shape) {
      Tensor t = register_parameter(key, nnp::empty(shape));
      nnp::nn::init::uniform_(t, -bound, bound);  // PyTorch's reset_parameters
      return t;
    };
    for (int64_t layer = 0; layer < num_layers; ++layer) {
      for (int64_t direction = 0; direction < directions(); ++direction) {
        const std::string suffix = "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
        const int64_t in = layer == 0 ? input_size : out_size * directions();
        CellWeights w;
        w.w_ih = param("weight_ih" + suffix, {gates, in});
        w.w_hh = param("weight_hh" + suffix, {gates, out_size});
        if (bias) {
          w.b_ih = param("bias_ih" + suffix, {gates});
          w.b_hh = param("bias_hh" + suffix, {gates});
        }
        if (proj_size > 0) w.w_hr = param("weight_hr" + suffix, {proj_size, hidden_size});
        cells.push_back(w);
      }
    }
  }

  int64_t directions() const { return bidirectional ? 2 : 1; }
  int64_t output_size() const { return proj_size > 0 ? proj_size : hidden_size; }

  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const States given = read_args(type_name(), kind == CellKind::Lstm, args);
    Tensor h_n, c_n;
    Tensor output = run(given, h_n, c_n);
    if (kind == CellKind::Lstm) return {output, h_n, c_n};
    return {output, h_n};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }

  Tensor run(const States& given, Tensor& h_n, Tensor& c_n) {
    const std::string type = type_name();
    Tensor x = given.input;
    if (x.ndim() != 2 && x.ndim() != 3)
      throw Error(NNP_SHAPE_MISMATCH,
                  type + ": expected input to be 2-D or 3-D but received " + std::to_string(x.ndim()) + "-D tensor");
    if (x.size(-1) != input_size)
      throw Error(NNP_SHAPE_MISMATCH, type + ": input.size(-1) must be equal to input_size. Expected " +
                                          std::to_string(input_size) + ", got " + std::to_string(x.size(-1)));
    const bool batched = x.ndim() == 3;
    Tensor h0 = given.h0, c0 = given.c0;
    for (const Tensor* state : {&h0, &c0})
      if (state->defined() && state->ndim() != (batched ? 3 : 2))
        throw Error(NNP_SHAPE_MISMATCH, type + ": for " + (batched ? "batched 3-D" : "unbatched 2-D") +
                                            " input, the initial states should also be " + (batched ? "3-D" : "2-D") +
                                            " but got " + std::to_string(state->ndim()) + "-D");
    if (!batched) {
      x = x.unsqueeze(1);
      if (h0.defined()) h0 = h0.unsqueeze(1);
      if (c0.defined()) c0 = c0.unsqueeze(1);
    } else if (batch_first) {
      x = x.transpose(0, 1);
    }
    const int64_t steps = x.size(0), batch = x.size(1), stacked = num_layers * directions();
    const nnp::Shape h_shape{stacked, batch, output_size()}, c_shape{stacked, batch, hidden_size};
    if (h0.defined()) {
      check_state(type, kind == CellKind::Lstm ? "h_0" : "hx", h0, h_shape, x);
      if (c0.defined()) check_state(type, "c_0", c0, c_shape, x);
    } else {
      h0 = nnp::zeros(h_shape, x.dtype(), x.device());
      if (kind == CellKind::Lstm) c0 = nnp::zeros(c_shape, x.dtype(), x.device());
    }

    std::vector<Tensor> last_h, last_c;
    Tensor layer_input = x;
    for (int64_t layer = 0; layer < num_layers; ++layer) {
      std::vector<Tensor> per_direction;
      for (int64_t direction = 0; direction < directions(); ++direction) {
        const int64_t index = layer * directions() + direction;
        const CellWeights& w = cells[static_cast<size_t>(index)];
        // The input's projection for every step at once: one GEMM, not L.
        const Tensor x_gates = F::linear(layer_input, w.w_ih, w.b_ih);
        Tensor h = h0.select(0, index), c = c0.defined() ? c0.select(0, index) : Tensor();
        std::vector<Tensor> outputs(static_cast<size_t>(steps));
        for (int64_t i = 0; i < steps; ++i) {
          const int64_t t = direction == 0 ? i : steps - 1 - i;
          cell_step(kind, x_gates.select(0, t), w, h, c);
          outputs[static_cast<size_t>(t)] = h;
        }
        per_direction.push_back(steps > 0 ? nnp::stack(outputs, 0)
                                          : nnp::zeros({0, batch, output_size()}, x.dtype(), x.device()));
        last_h.push_back(h);
        if (c.defined()) last_c.push_back(c);
      }
      layer_input = per_direction.size() == 1 ? per_direction[0] : nnp::cat(per_direction, 2);
      if (dropout > 0 && is_training() && layer + 1 < num_layers)
        layer_input = F::dropout(layer_input, F::DropoutFuncOptions().p(dropout).training(true));
    }
    Tensor output = layer_input;
    h_n = nnp::stack(last_h, 0);
    if (kind == CellKind::Lstm) c_n = nnp::stack(last_c, 0);
    if (!batched) {
      output = output.squeeze(1);
      h_n = h_n.squeeze(1);
      if (c_n.defined()) c_n = c_n.squeeze(1);
    } else if (batch_first) {
      output = output.transpose(0, 1);
    }
    return output;
  }

  std::string extra_repr() const override {
    std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
    if (proj_size != 0) s += ", proj_size=" + std::to_string(proj_size);
    if (num_layers != 1) s += ", num_layers=" + std::to_string(num_layers);
    if (!bias) s += ", bias=False";
    if (batch_first) s += ", batch_first=True";
    if (dropout != 0) s += ", dropout=" + nnp::nn::format_float(dropout);
    if (bidirectional) s += ", bidirectional=True";
    return s;
  }
};

struct RNN : Recurrent {
  explicit RNN(const Attrs& a) : Recurrent("RNN", rnn_kind("RNN", a), a) {}
};
struct LSTM : Recurrent {
  explicit LSTM(const Attrs& a) : Recurrent("LSTM", CellKind::Lstm, a) {}
};
struct GRU : Recurrent {
  explicit GRU(const Attrs& a) : Recurrent("GRU", CellKind::Gru, a) {}
};

// RNNCell, LSTMCell and GRUCell: one step of one layer.
struct RecurrentCell : nnp::nn::Module {
  CellKind kind;
  int64_t input_size, hidden_size;
  CellWeights w;

  RecurrentCell(const char* name, CellKind k, const Attrs& a)
      : Module(name), kind(k), input_size(a.integer("input_size")), hidden_size(a.integer("hidden_size")) {
    if (input_size < 0 || hidden_size <= 0)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": input_size must be >= 0 and hidden_size greater than zero");
    const int64_t gates = gate_count(kind) * hidden_size;
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
    auto param = [&](const std::string& key, const nnp::Shape& shape) {
      Tensor t = register_parameter(key, nnp::empty(shape));
      nnp::nn::init::uniform_(t, -bound, bound);
      return t;
    };
    w.w_ih = param("weight_ih", {gates, input_size});
    w.w_hh = param("weight_hh", {gates, hidden_size});
    if (a.boolean("bias")) {
      w.b_ih = param("bias_ih", {gates});
      w.b_hh = param("bias_hh", {gates});
    } else {
      register_parameter("bias_ih", Tensor());
      register_parameter("bias_hh", Tensor());
    }
  }

  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    const std::string type = type_name();
    States given = read_args(type, kind == CellKind::Lstm, args);
    Tensor x = given.input;
    if (x.ndim() != 1 && x.ndim() != 2)
      throw Error(NNP_SHAPE_MISMATCH,
                  type + ": expected input to be 1-D or 2-D but received " + std::to_string(x.ndim()) + "-D tensor");
    if (x.size(-1) != input_size)
      throw Error(NNP_SHAPE_MISMATCH, type + ": input has inconsistent input_size: got " + std::to_string(x.size(-1)) +
                                          ", expected " + std::to_string(input_size));
    const bool batched = x.ndim() == 2;
    if (!batched) x = x.unsqueeze(0);
    const nnp::Shape state_shape{x.size(0), hidden_size};
    Tensor h = given.h0, c = given.c0;
    const char* names[] = {"hidden0", "hidden1"};
    for (int i = 0; i < 2; ++i) {
      Tensor& state = i == 0 ? h : c;
      if (!state.defined()) {
        if (i == 0 || kind == CellKind::Lstm) state = nnp::zeros(state_shape, x.dtype(), x.device());
        continue;
      }
      if (state.ndim() != x.ndim() - (batched ? 0 : 1))
        throw Error(NNP_SHAPE_MISMATCH, type + ": " + names[i] + " must be " + (batched ? "2-D" : "1-D") +
                                            " like the input, got " + std::to_string(state.ndim()) + "-D");
      if (!batched) state = state.unsqueeze(0);
      check_state(type, names[i], state, state_shape, x);
    }
    cell_step(kind, F::linear(x, w.w_ih, w.b_ih), w, h, c);
    if (!batched) {
      h = h.squeeze(0);
      if (c.defined()) c = c.squeeze(0);
    }
    if (kind == CellKind::Lstm) return {h, c};
    return {h};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }

  std::string extra_repr() const override {
    std::string s = std::to_string(input_size) + ", " + std::to_string(hidden_size);
    if (!w.b_ih.defined()) s += ", bias=False";
    if (kind == CellKind::RnnRelu) s += ", nonlinearity=relu";
    return s;
  }
};

struct RNNCell : RecurrentCell {
  explicit RNNCell(const Attrs& a) : RecurrentCell("RNNCell", rnn_kind("RNNCell", a), a) {}
};
struct LSTMCell : RecurrentCell {
  explicit LSTMCell(const Attrs& a) : RecurrentCell("LSTMCell", CellKind::Lstm, a) {}
};
struct GRUCell : RecurrentCell {
  explicit GRUCell(const Attrs& a) : RecurrentCell("GRUCell", CellKind::Gru, a) {}
};

void register_recurrent_layers(nnp_plugin_host* host) {
  const AttrDecl input_size{"input_size", NNP_ATTR_INT, true, nullptr, "features of each input step"};
  const AttrDecl hidden_size{"hidden_size", NNP_ATTR_INT, true, nullptr, "features of the hidden state"};
  const AttrDecl bias{"bias", NNP_ATTR_BOOL, false, "true", "learn the biases b_ih and b_hh"};
  const AttrDecl nonlinearity{"nonlinearity", NNP_ATTR_STRING, false, "\"tanh\"", "'tanh' or 'relu'"};
  const std::vector<AttrDecl> stack{
      input_size,
      hidden_size,
      {"num_layers", NNP_ATTR_INT, false, "1", "recurrent layers stacked"},
      bias,
      {"batch_first", NNP_ATTR_BOOL, false, "false", "input and output are [N, L, H] rather than [L, N, H]"},
      {"dropout", NNP_ATTR_FLOAT, false, "0.0", "dropout on each layer's output but the last, while training"},
      {"bidirectional", NNP_ATTR_BOOL, false, "false", "run each layer both ways and concatenate"}};
  std::vector<AttrDecl> rnn = stack, lstm = stack;
  rnn.insert(rnn.begin() + 3, nonlinearity);
  lstm.push_back({"proj_size", NNP_ATTR_INT, false, "0", "project h to this size (0: no projection)"});
  add_builtin<RNN>(host, "nn.RNN", "Elman recurrent layers: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)", rnn);
  add_builtin<LSTM>(host, "nn.LSTM", "long short-term memory layers, optionally with projections", lstm);
  add_builtin<GRU>(host, "nn.GRU", "gated recurrent unit layers", stack);
  add_builtin<RNNCell>(host, "nn.RNNCell", "one step of an Elman recurrent layer",
                       {input_size, hidden_size, bias, nonlinearity});
  add_builtin<LSTMCell>(host, "nn.LSTMCell", "one step of an LSTM layer: (h, c) from (input, h, c)",
                        {input_size, hidden_size, bias});
  add_builtin<GRUCell>(host, "nn.GRUCell", "one step of a GRU layer", {input_size, hidden_size, bias});
}

}  // namespace nnp::library::layers
