// ONNX's signal operators (opset 17): DFT, STFT and MelWeightMatrix.
// Complex values are ONNX's [..., 2] (real, imaginary) pairs. The
// transforms are direct sums on the host in double precision: the suite's
// and a model's signals are short, and no backend has an FFT.
#include <cmath>
#include <complex>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

using Complex = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// The most terms a direct transform sums (lines x bins x length): a
// stranger's dft_length cannot make it run for hours.
constexpr double kMaxTerms = 1e10;

// The DFT of `in` (zero-padded or cut to length), its first `bins` terms;
// the inverse divides by length.
std::vector<Complex> dft(const std::vector<Complex>& in, int64_t length, int64_t bins, bool inverse) {
  std::vector<Complex> out(static_cast<size_t>(bins));
  const double sign = inverse ? 1 : -1;
  for (int64_t k = 0; k < bins; ++k) {
    Complex sum = 0;
    for (int64_t n = 0; n < length && n < static_cast<int64_t>(in.size()); ++n) {
      const uint64_t turn = static_cast<uint64_t>(k) * static_cast<uint64_t>(n) % static_cast<uint64_t>(length);
      sum += in[static_cast<size_t>(n)] * std::polar(1.0, sign * 2 * kPi * static_cast<double>(turn) / static_cast<double>(length));
    }
    out[static_cast<size_t>(k)] = inverse ? sum / static_cast<double>(length) : sum;
  }
  return out;
}

// Signal values as complex numbers: x [..., 1] (real) or [..., 2].
std::vector<Complex> complex_values(const Tensor& x, const char* op) {
  if (x.ndim() < 2 || (x.size(-1) != 1 && x.size(-1) != 2))
    invalid(std::string(op) + ": the signal's last axis must be 1 (real) or 2 (complex)");
  const std::vector<double> v = host_reals(x);
  const bool real = x.size(-1) == 1;
  std::vector<Complex> out(v.size() / (real ? 1 : 2));
  for (size_t i = 0; i < out.size(); ++i) out[i] = real ? Complex(v[i], 0) : Complex(v[2 * i], v[2 * i + 1]);
  return out;
}

Tensor complex_tensor(const std::vector<Complex>& values, nnp::Shape shape, const Tensor& like) {
  std::vector<double> flat;
  flat.reserve(values.size() * 2);
  for (const Complex& c : values) flat.insert(flat.end(), {c.real(), c.imag()});
  shape.push_back(2);
  return nnp::from_vector(flat, shape, like.device()).to(like.dtype());
}

Tensors dft_op(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "DFT");
  const std::vector<Complex> values = complex_values(x, "DFT");
  const int32_t signal_rank = x.ndim() - 1;
  const int32_t axis = wrap(attr_int(a, "axis", 1), signal_rank, "DFT");
  const int64_t size = x.size(axis);
  const int64_t length = given(in, 1) && in[1].numel() > 0 ? host_ints(in[1]).at(0) : size;
  if (length < 1 || length > kMaxElements) invalid("DFT: dft_length is out of range");
  const bool inverse = attr_int(a, "inverse", 0) != 0, onesided = attr_int(a, "onesided", 0) != 0;
  const int64_t bins = onesided ? length / 2 + 1 : length;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= x.size(d);
  for (int32_t d = axis + 1; d < signal_rank; ++d) inner *= x.size(d);
  if (static_cast<double>(outer * inner) * static_cast<double>(bins) * static_cast<double>(length) > kMaxTerms)
    refuse("DFT: this transform is too long for nnplug's direct DFT");
  std::vector<Complex> out(static_cast<size_t>(outer * bins * inner));
  std::vector<Complex> line(static_cast<size_t>(size));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t n = 0; n < size; ++n) line[static_cast<size_t>(n)] = values[static_cast<size_t>((o * size + n) * inner + i)];
      const std::vector<Complex> transformed = dft(line, length, bins, inverse);
      for (int64_t k = 0; k < bins; ++k) out[static_cast<size_t>((o * bins + k) * inner + i)] = transformed[static_cast<size_t>(k)];
    }
  nnp::Shape shape;
  for (int32_t d = 0; d < signal_rank; ++d) shape.push_back(d == axis ? bins : x.size(d));
  return {complex_tensor(out, shape, x)};
}

// STFT: signal [batch, length, 1 | 2], frame_step, window, frame_length:
// [batch, frames, bins, 2], each frame times the window, transformed.
Tensors stft(const Tensors& in, const Node& a) {
  const Tensor& signal = need(in, 0, "STFT");
  if (signal.ndim() != 3) invalid("STFT: the signal must be [batch, length, 1 or 2]");
  const std::vector<Complex> values = complex_values(signal, "STFT");
  const int64_t step = host_ints(need(in, 1, "STFT")).at(0);
  const std::vector<double> window = given(in, 2) && in[2].numel() > 0 ? host_reals(in[2]) : std::vector<double>{};
  int64_t frame = given(in, 3) && in[3].numel() > 0 ? host_ints(in[3]).at(0) : static_cast<int64_t>(window.size());
  const int64_t batch = signal.size(0), length = signal.size(1);
  if (step < 1 || frame < 1 || frame > length || (!window.empty() && static_cast<int64_t>(window.size()) != frame))
    invalid("STFT: frame_step, frame_length and the window do not fit the signal");
  const bool onesided = attr_int(a, "onesided", 1) != 0;
  const int64_t bins = onesided ? frame / 2 + 1 : frame, frames = (length - frame) / step + 1;
  if (static_cast<double>(batch * frames) * static_cast<double>(bins) * static_cast<double>(frame) > kMaxTerms)
    refuse("STFT: this transform is too long for nnplug's direct DFT");
  std::vector<Complex> out;
  std::vector<Complex> piece(static_cast<size_t>(frame));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t n = 0; n < frame; ++n)
        piece[static_cast<size_t>(n)] = values[static_cast<size_t>(b * length + f * step + n)] *
                                        (window.empty() ? 1.0 : window[static_cast<size_t>(n)]);
      const std::vector<Complex> transformed = dft(piece, frame, bins, false);
      out.insert(out.end(), transformed.begin(), transformed.end());
    }
  return {complex_tensor(out, {batch, frames, bins}, signal)};
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters
// between mel-spaced frequencies, as ONNX's reference builds them.
Tensors mel_weight_matrix(const Tensors& in, const Node& a) {
  const char* op = "MelWeightMatrix";
  auto scalar = [&](size_t i) { return host_reals(need(in, i, op)).at(0); };
  const int64_t mel_bins = static_cast<int64_t>(scalar(0)), dft_length = static_cast<int64_t>(scalar(1));
  const double sample_rate = scalar(2), lower = scalar(3), upper = scalar(4);
  if (mel_bins < 1 || dft_length < 1 || mel_bins > 65536 || dft_length > kMaxElements || sample_rate <= 0)
    invalid(std::string(op) + ": num_mel_bins, dft_length or sample_rate is out of range");
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low_mel = to_mel(lower), high_mel = to_mel(upper);
  // The mel step spans num_mel_bins + 2 points divided into num_mel_bins + 2
  // parts, as ONNX 1.12's reference and ONNX Runtime build it (the filters'
  // last edge falls short of upper_edge_hertz).
  const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595) - 1);
    points[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
  }
  std::vector<double> out(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j < 0 || j >= spectrogram_bins) invalid(std::string(op) + ": a filter falls past the spectrogram's bins");
    out[static_cast<size_t>(j * mel_bins + i)] = v;
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = points[static_cast<size_t>(i)], centre = points[static_cast<size_t>(i + 1)],
                  right = points[static_cast<size_t>(i + 2)];
    if (centre == left)
      set(centre, i, 1);
    else
      for (int64_t j = left; j <= centre; ++j) set(j, i, static_cast<double>(j - left) / static_cast<double>(centre - left));
    for (int64_t j = centre; j < right; ++j) set(j, i, static_cast<double>(right - j) / static_cast<double>(right - centre));
  }
  return {nnp::from_vector(out, {spectrogram_bins, mel_bins}, need(in, 0, op).device())
              .to(dtype_of_onnx(attr_int(a, "output_datatype", 1), op))};
}

}  // namespace

void add_signal_ops(OpTable& t) {
  t.insert({{"DFT", dft_op}, {"MelWeightMatrix", mel_weight_matrix}, {"STFT", stft}});
}

}  // namespace nnp::library::onnx
