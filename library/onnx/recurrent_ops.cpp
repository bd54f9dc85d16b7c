// ONNX's RNN, GRU and LSTM in every form the operators define (the importer
// makes nn.LSTM of the forms PyTorch exports): computed weights, forward,
// reverse and bidirectional, sequence_lens, layout 1 (batch first), clip,
// the activation functions named in `activations`, GRU's
// linear_before_reset, LSTM's peepholes and input_forget. Unrolled over the
// sequence with the SDK's tensor ops, so it differentiates.
#include <sstream>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

namespace F = nnp::nn::functional;

// One activation function of `activations`, with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
  Tensor operator()(const Tensor& x) const {
    if (name == "Sigmoid") return x.sigmoid();
    if (name == "Tanh") return x.tanh();
    if (name == "Relu") return x.relu();
    if (name == "LeakyRelu") return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(alpha));
    if (name == "ThresholdedRelu") return nnp::where(x.gt(x.scalar_like(alpha)), x, x.scalar_like(0));
    if (name == "HardSigmoid") return (x * alpha + beta).clamp(0.0, 1.0);
    if (name == "Affine") return x * alpha + beta;
    if (name == "ScaledTanh") return (x * beta).tanh() * alpha;
    if (name == "Elu") return F::elu(x, F::ELUFuncOptions().alpha(alpha));
    if (name == "Softsign") return F::softsign(x);
    if (name == "Softplus") return x.clamp_min(0.0) + ((-x.abs()).exp() + 1.0).log();
    refuse("recurrent op: activation '" + name + "' is not supported");
  }
};

// The node's activations: `count` per direction, its defaults where none are named.
std::vector<Activation> activations(const Node& a, const std::vector<std::string>& defaults, int64_t directions) {
  std::vector<std::string> names;
  std::stringstream listed(attr_string(a, "activations", ""));  // the importer joins a STRINGS attribute with ','
  for (std::string name; std::getline(listed, name, ',');)
    if (!name.empty()) names.push_back(name);
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * static_cast<size_t>(directions))
    invalid("recurrent op: activations must name " + std::to_string(defaults.size()) + " functions per direction");
  const std::vector<double> alphas = attr_floats(a, "activation_alpha"), betas = attr_floats(a, "activation_beta");
  std::vector<Activation> out;
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    Activation f{name};
    // ONNX's defaults where the lists stop (LeakyRelu 0.01, HardSigmoid 0.2 / 0.5, ...).
    const bool takes_alpha = name == "LeakyRelu" || name == "ThresholdedRelu" || name == "HardSigmoid" ||
                             name == "Affine" || name == "ScaledTanh" || name == "Elu";
    const bool takes_beta = name == "HardSigmoid" || name == "Affine" || name == "ScaledTanh";
    f.alpha = name == "LeakyRelu" ? 0.01 : name == "HardSigmoid" ? 0.2 : 1.0;
    f.beta = name == "HardSigmoid" ? 0.5 : 0.0;
    if (takes_alpha && next_alpha < alphas.size()) f.alpha = alphas[next_alpha++];
    if (takes_beta && next_beta < betas.size()) f.beta = betas[next_beta++];
    out.push_back(f);
  }
  return out;
}

// What every recurrent node shares: its inputs in the [seq, batch, *]
// layout, direction, hidden size, clip, sequence lengths.
struct Recurrence {
  Tensor x;  // [seq, batch, input]
  int64_t seq = 0, batch = 0, hidden = 0, directions = 1;
  std::string direction;
  double clip = 0;
  std::vector<int64_t> lengths;  // per batch entry
  bool batch_first = false;
};

Recurrence recurrence_of(const Tensors& in, const Node& a, const char* op) {
  Recurrence r;
  r.batch_first = attr_int(a, "layout", 0) != 0;
  r.x = need(in, 0, op);
  if (r.x.ndim() != 3) invalid(std::string(op) + ": X must be 3-D");
  if (r.batch_first) r.x = r.x.transpose(0, 1);
  r.seq = r.x.size(0);
  r.batch = r.x.size(1);
  r.hidden = attr_int(a, "hidden_size", 0);
  r.direction = attr_string(a, "direction", "forward");
  if (r.direction != "forward" && r.direction != "reverse" && r.direction != "bidirectional")
    invalid(std::string(op) + ": direction must be forward, reverse or bidirectional");
  r.directions = r.direction == "bidirectional" ? 2 : 1;
  r.clip = attr_float(a, "clip", 0);
  if (r.hidden <= 0) invalid(std::string(op) + ": hidden_size must be positive");
  r.lengths = given(in, 4) ? host_ints(in[4]) : std::vector<int64_t>(static_cast<size_t>(r.batch), r.seq);
  if (static_cast<int64_t>(r.lengths.size()) != r.batch) invalid(std::string(op) + ": sequence_lens needs one length per batch entry");
  for (int64_t& length : r.lengths) length = std::min(std::max<int64_t>(length, 0), r.seq);
  return r;
}

// Input i's slice for direction d (weights [dirs, rows, cols], biases [dirs, n]).
Tensor of_direction(const Tensor& t, int64_t d) { return t.select(0, d); }

// One direction's pass: step(t, x_t, state) -> new state, whose first
// tensor is the hidden state. Steps past a batch entry's length keep its
// state and give zeros; a reverse pass walks each entry's own length back.
template <typename Step>
std::pair<Tensor, std::vector<Tensor>> run_direction(const Recurrence& r, bool reverse, std::vector<Tensor> state,
                                                     const Step& step) {
  std::vector<Tensor> outputs(static_cast<size_t>(r.seq));
  const Tensor lengths = nnp::from_vector(r.lengths, {r.batch, 1}, r.x.device());
  for (int64_t k = 0; k < r.seq; ++k) {
    // The time each batch entry reads at step k: k, or length - 1 - k backwards.
    Tensor xt;
    if (reverse) {
      std::vector<int64_t> times(static_cast<size_t>(r.batch));
      for (int64_t b = 0; b < r.batch; ++b) times[static_cast<size_t>(b)] = std::max<int64_t>(r.lengths[static_cast<size_t>(b)] - 1 - k, 0);
      const Tensor index = nnp::from_vector(times, {1, r.batch, 1}, r.x.device()).expand({1, r.batch, r.x.size(2)});
      xt = r.x.gather(0, index).squeeze(0);
    } else {
      xt = r.x.select(0, k);
    }
    const Tensor active = lengths.gt(lengths.scalar_like(static_cast<double>(k)));  // [batch, 1]
    std::vector<Tensor> next = step(xt, state);
    for (size_t i = 0; i < state.size(); ++i) state[i] = nnp::where(active, next[i], state[i]);
    outputs[static_cast<size_t>(k)] = nnp::where(active, next[0], next[0].scalar_like(0));
  }
  Tensor y = r.seq == 0 ? nnp::full({0, r.batch, r.hidden}, 0, r.x.dtype(), r.x.device()) : nnp::stack(outputs, 0);
  if (reverse && r.seq > 0) {  // back to each entry's own time order
    std::vector<int64_t> times(static_cast<size_t>(r.seq * r.batch));
    for (int64_t t = 0; t < r.seq; ++t)
      for (int64_t b = 0; b < r.batch; ++b) {
        const int64_t length = r.lengths[static_cast<size_t>(b)];
        times[static_cast<size_t>(t * r.batch + b)] = t < length ? length - 1 - t : t;
      }
    const Tensor index = nnp::from_vector(times, {r.seq, r.batch, 1}, r.x.device()).expand(y.shape());
    y = y.gather(0, index);
  }
  return {y, state};
}

Tensor clipped(const Tensor& t, double clip) { return clip > 0 ? t.clamp(-clip, clip) : t; }

// Y [seq, dirs, batch, hidden] (or [batch, seq, dirs, hidden]) and each state [dirs, batch, hidden]
// (or [batch, dirs, hidden]).
Tensors outputs_of(const Recurrence& r, const std::vector<Tensor>& ys, const std::vector<std::vector<Tensor>>& states) {
  Tensor y = nnp::stack(ys, 1);
  if (r.batch_first) y = y.permute({2, 0, 1, 3});
  Tensors out{y.contiguous()};
  for (size_t i = 0; i < states[0].size(); ++i) {
    std::vector<Tensor> per_direction;
    for (const auto& s : states) per_direction.push_back(s[i]);
    Tensor h = nnp::stack(per_direction, 0);
    out.push_back(r.batch_first ? h.transpose(0, 1).contiguous() : h);
  }
  return out;
}

Tensor initial(const Tensors& in, size_t i, const Recurrence& r, int64_t d) {
  if (!given(in, i)) return nnp::full({r.batch, r.hidden}, 0, r.x.dtype(), r.x.device());
  const Tensor h = r.batch_first ? in[i].transpose(0, 1) : in[i];
  return h.select(0, d);
}

Tensors rnn(const Tensors& in, const Node& a) {
  const Recurrence r = recurrence_of(in, a, "RNN");
  const std::vector<Activation> f = activations(a, {"Tanh"}, r.directions);
  std::vector<Tensor> ys;
  std::vector<std::vector<Tensor>> states;
  for (int64_t d = 0; d < r.directions; ++d) {
    const Tensor w = of_direction(need(in, 1, "RNN"), d).t(), u = of_direction(need(in, 2, "RNN"), d).t();
    const Tensor b = given(in, 3) ? of_direction(in[3], d).reshape({2, r.hidden}).sum({0}) : Tensor();
    auto step = [&](const Tensor& xt, const std::vector<Tensor>& s) {
      Tensor pre = xt.matmul(w) + s[0].matmul(u);
      if (b.defined()) pre = pre + b;
      return std::vector<Tensor>{f[static_cast<size_t>(d)](clipped(pre, r.clip))};
    };
    auto [y, state] = run_direction(r, r.direction == "reverse" || d == 1, {initial(in, 5, r, d)}, step);
    ys.push_back(y);
    states.push_back(state);
  }
  return outputs_of(r, ys, states);
}

Tensors gru(const Tensors& in, const Node& a) {
  const Recurrence r = recurrence_of(in, a, "GRU");
  const std::vector<Activation> f = activations(a, {"Sigmoid", "Tanh"}, r.directions);
  const bool linear_before_reset = attr_int(a, "linear_before_reset", 0) != 0;
  const int64_t h = r.hidden;
  std::vector<Tensor> ys;
  std::vector<std::vector<Tensor>> states;
  for (int64_t d = 0; d < r.directions; ++d) {
    const Activation &gate = f[static_cast<size_t>(2 * d)], &candidate = f[static_cast<size_t>(2 * d + 1)];
    const Tensor w = of_direction(need(in, 1, "GRU"), d).t(), u = of_direction(need(in, 2, "GRU"), d);
    const Tensor bias = given(in, 3) ? of_direction(in[3], d) : nnp::full({6 * h}, 0, r.x.dtype(), r.x.device());
    const Tensor wb = bias.slice(0, 0, 3 * h), rb = bias.slice(0, 3 * h, 6 * h);
    const Tensor u_zr = u.slice(0, 0, 2 * h).t(), u_h = u.slice(0, 2 * h, 3 * h).t();
    auto step = [&](const Tensor& xt, const std::vector<Tensor>& s) {
      const Tensor xw = xt.matmul(w) + wb;  // [batch, 3h]: z, r, h
      const Tensor zr = xw.slice(1, 0, 2 * h) + s[0].matmul(u_zr) + rb.slice(0, 0, 2 * h);
      const Tensor z = gate(clipped(zr.slice(1, 0, h), r.clip)), reset = gate(clipped(zr.slice(1, h, 2 * h), r.clip));
      const Tensor rh = rb.slice(0, 2 * h, 3 * h);
      const Tensor recurrent = linear_before_reset ? reset * (s[0].matmul(u_h) + rh) : (reset * s[0]).matmul(u_h) + rh;
      const Tensor hidden = candidate(clipped(xw.slice(1, 2 * h, 3 * h) + recurrent, r.clip));
      return std::vector<Tensor>{(z.scalar_like(1) - z) * hidden + z * s[0]};
    };
    auto [y, state] = run_direction(r, r.direction == "reverse" || d == 1, {initial(in, 5, r, d)}, step);
    ys.push_back(y);
    states.push_back(state);
  }
  return outputs_of(r, ys, states);
}

Tensors lstm(const Tensors& in, const Node& a) {
  const Recurrence r = recurrence_of(in, a, "LSTM");
  const std::vector<Activation> f = activations(a, {"Sigmoid", "Tanh", "Tanh"}, r.directions);
  const bool input_forget = attr_int(a, "input_forget", 0) != 0;
  const int64_t h = r.hidden;
  std::vector<Tensor> ys;
  std::vector<std::vector<Tensor>> states;
  for (int64_t d = 0; d < r.directions; ++d) {
    const Activation &gate = f[static_cast<size_t>(3 * d)], &cell = f[static_cast<size_t>(3 * d + 1)],
                     &out_act = f[static_cast<size_t>(3 * d + 2)];
    const Tensor w = of_direction(need(in, 1, "LSTM"), d).t(), u = of_direction(need(in, 2, "LSTM"), d).t();
    const Tensor b = given(in, 3) ? of_direction(in[3], d).reshape({2, 4 * h}).sum({0}) : Tensor();
    const Tensor p = given(in, 7) ? of_direction(in[7], d) : Tensor();  // peepholes i, o, f
    auto step = [&](const Tensor& xt, const std::vector<Tensor>& s) {
      Tensor pre = xt.matmul(w) + s[0].matmul(u);  // [batch, 4h]: i, o, f, c
      if (b.defined()) pre = pre + b;
      Tensor pi = pre.slice(1, 0, h), po = pre.slice(1, h, 2 * h), pf = pre.slice(1, 2 * h, 3 * h);
      if (p.defined()) {
        pi = pi + p.slice(0, 0, h) * s[1];
        pf = pf + p.slice(0, 2 * h, 3 * h) * s[1];
      }
      const Tensor i = gate(clipped(pi, r.clip));
      const Tensor forget = input_forget ? i.scalar_like(1) - i : gate(clipped(pf, r.clip));
      const Tensor c = forget * s[1] + i * cell(clipped(pre.slice(1, 3 * h, 4 * h), r.clip));
      if (p.defined()) po = po + p.slice(0, h, 2 * h) * c;
      const Tensor o = gate(clipped(po, r.clip));
      return std::vector<Tensor>{o * out_act(c), c};
    };
    auto [y, state] =
        run_direction(r, r.direction == "reverse" || d == 1, {initial(in, 5, r, d), initial(in, 6, r, d)}, step);
    ys.push_back(y);
    states.push_back(state);
  }
  return outputs_of(r, ys, states);
}

}  // namespace

void add_recurrent_ops(OpTable& t) {
  t.insert({{"GRU", gru}, {"LSTM", lstm}, {"RNN", rnn}});
}

}  // namespace nnp::library::onnx
