// Printing tensors as PyTorch prints them: `std::cout << t` and `t.str()`
// give torch.Tensor's repr, character for character (torch/_tensor_str.py,
// default options: precision 4, linewidth 80, summarised past 1000 elements
// with 3 edge items): the shared width, the fixed, integer-valued ("1.") and
// scientific modes chosen from the non-zero finite values, line wrapping,
// and the device, dtype, size, requires_grad and grad_fn suffixes.
#pragma once

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace nnp {
namespace detail {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;
  int64_t edgeitems = 3;
  int linewidth = 80;
};

// PyTorch's name of a dtype ("torch.float64").
inline std::string torch_dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::f32: return "torch.float32";
    case Dtype::f64: return "torch.float64";
    case Dtype::f16: return "torch.float16";
    case Dtype::bf16: return "torch.bfloat16";
    case Dtype::i64: return "torch.int64";
    case Dtype::i32: return "torch.int32";
    case Dtype::u8: return "torch.uint8";
    case Dtype::i8: return "torch.int8";
    default: return "torch.bool";
  }
}

// An element read to the host: the value, and for integer dtypes the exact
// integer (a double holds only 53 bits).
struct Element {
  double real;
  int64_t integer;
};

// One element's text, as Python's format() writes it.
class ElementFormatter {
 public:
  ElementFormatter(Dtype dtype, const std::vector<Element>& values, const PrintOptions& options)
      : floating_(is_floating(dtype)), boolean_(dtype == Dtype::boolean), precision_(options.precision) {
    if (!floating_) {
      for (const Element& e : values) max_width_ = std::max(max_width_, plain(e.integer).size());
      return;
    }
    double lo = INFINITY, hi = 0;
    bool any = false;
    for (const Element& e : values) {
      const double v = e.real;
      if (!std::isfinite(v) || v == 0) continue;
      any = true;
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (!any) return;
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (const Element& e : values) {
      const double v = e.real;
      if (!std::isfinite(v) || v == 0) continue;
      if (sci_mode_)
        max_width_ = std::max(max_width_, scientific(v).size());
      else if (int_mode_)
        max_width_ = std::max(max_width_, whole(v).size() + 1);
      else
        max_width_ = std::max(max_width_, fixed(v).size());
    }
  }

  size_t width() const { return max_width_; }

  std::string format(const Element& e) const {
    const double v = e.real;
    std::string text;
    if (!floating_) {
      text = plain(e.integer);
    } else if (std::isnan(v)) {
      text = "nan";
    } else if (std::isinf(v)) {
      text = v > 0 ? "inf" : "-inf";
    } else if (sci_mode_) {
      text = scientific(v);
    } else if (int_mode_) {
      text = whole(v) + ".";
    } else {
      text = fixed(v);
    }
    return text.size() < max_width_ ? std::string(max_width_ - text.size(), ' ') + text : text;
  }

 private:
  std::string plain(int64_t v) const {
    if (boolean_) return v != 0 ? "True" : "False";
    return std::to_string(v);
  }
  // Python's "{:.4e}", "{:.0f}" and "{:.4f}" (C's printf agrees on finite values).
  std::string scientific(double v) const { return text_of("%.*e", precision_, v); }
  std::string fixed(double v) const { return text_of("%.*f", precision_, v); }
  static std::string whole(double v) { return text_of("%.*f", 0, v); }
  static std::string text_of(const char* pattern, int precision, double v) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, precision, v);
    return text;
  }

  bool floating_, boolean_;
  int precision_;
  bool int_mode_ = true, sci_mode_ = false;
  size_t max_width_ = 1;
};

// The elements of a 1-d host tensor.
inline std::vector<Element> host_values(const Tensor& row) {
  std::vector<Element> out;
  if (is_floating(row.dtype()))
    for (double v : row.to(Dtype::f64).to_vector<double>()) out.push_back({v, 0});
  else
    for (int64_t v : row.to(Dtype::i64).to_vector<int64_t>()) out.push_back({static_cast<double>(v), v});
  return out;
}

// The elements a summarised print shows (PyTorch's get_summarized_data).
inline void summarized_values(const Tensor& t, bool summarize, const PrintOptions& o, std::vector<Element>& out) {
  if (t.ndim() == 0) {
    for (const Element& e : host_values(t.reshape({1}))) out.push_back(e);
    return;
  }
  const int64_t n = t.size(0);
  const bool cut = summarize && n > 2 * o.edgeitems;
  if (t.ndim() == 1) {
    std::vector<Element> values =
        cut ? host_values(cat({t.slice(0, 0, o.edgeitems), t.slice(0, n - o.edgeitems, n)}, 0)) : host_values(t);
    out.insert(out.end(), values.begin(), values.end());
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == o.edgeitems) i = n - o.edgeitems;
    summarized_values(t.slice(0, i, i + 1).squeeze(0), summarize, o, out);
  }
}

inline std::string vector_text(const Tensor& t, int indent, bool summarize, const ElementFormatter& f,
                               const PrintOptions& o) {
  const int64_t n = t.size(0);
  const size_t element_length = f.width() + 2;
  const size_t per_line = std::max<size_t>(1, static_cast<size_t>(std::max(0, o.linewidth - indent)) / element_length);
  std::vector<std::string> data;
  auto add = [&](const Tensor& part) {
    for (const Element& e : host_values(part)) data.push_back(f.format(e));
  };
  if (summarize && n > 2 * o.edgeitems) {
    add(t.slice(0, 0, o.edgeitems));
    data.push_back(" ...");
    add(t.slice(0, n - o.edgeitems, n));
  } else {
    add(t);
  }
  std::string out = "[";
  for (size_t i = 0; i < data.size(); ++i) {
    if (i > 0) out += i % per_line == 0 ? ",\n" + std::string(static_cast<size_t>(indent + 1), ' ') : ", ";
    out += data[i];
  }
  return out + "]";
}

inline std::string tensor_text(const Tensor& t, int indent, bool summarize, const ElementFormatter& f,
                               const PrintOptions& o) {
  if (t.ndim() == 0) return f.format(host_values(t.reshape({1}))[0]);
  if (t.ndim() == 1) return vector_text(t, indent, summarize, f, o);
  const int64_t n = t.size(0);
  std::vector<std::string> slices;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * o.edgeitems && i == o.edgeitems) {
      slices.push_back("...");
      i = n - o.edgeitems;
    }
    slices.push_back(tensor_text(t.slice(0, i, i + 1).squeeze(0), indent + 1, summarize, f, o));
  }
  const std::string separator =
      "," + std::string(static_cast<size_t>(t.ndim() - 1), '\n') + std::string(static_cast<size_t>(indent + 1), ' ');
  std::string out = "[";
  for (size_t i = 0; i < slices.size(); ++i) out += (i ? separator : "") + slices[i];
  return out + "]";
}

// PyTorch's names for the usual backward nodes end in a version number
// ("AddBackward0"); nnplug's name the op only.
inline std::string torch_grad_fn_name(const std::string& name) {
  const std::string suffix = "Backward";
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0
             ? name + "0"
             : name;
}

}  // namespace detail

// torch.Tensor's repr of t (no gradient is recorded; nothing of t changes).
inline std::string to_string(const Tensor& tensor) {
  const detail::PrintOptions o;
  NoGradGuard no_grad;
  const Tensor t = tensor.detach().to(Device::cpu());
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  const Device device = tensor.device();
  if (device.name() != "cpu:0") suffixes.push_back("device='" + device.name() + "'");
  std::string body;
  if (t.numel() == 0) {
    if (t.ndim() != 1) {
      std::string size = "size=(";
      for (int32_t i = 0; i < t.ndim(); ++i) size += (i ? ", " : "") + std::to_string(t.size(i));
      suffixes.push_back(size + (t.ndim() == 1 ? ",)" : ")"));
    }
    if (t.dtype() != Dtype::f32) suffixes.push_back("dtype=" + detail::torch_dtype_name(t.dtype()));
    body = "[]";
  } else {
    if (t.dtype() != Dtype::f32 && t.dtype() != Dtype::i64 && t.dtype() != Dtype::boolean)
      suffixes.push_back("dtype=" + detail::torch_dtype_name(t.dtype()));
    const bool summarize = t.numel() > o.threshold;
    std::vector<detail::Element> shown;
    detail::summarized_values(t, summarize, o, shown);
    const detail::ElementFormatter formatter(t.dtype(), shown, o);
    body = detail::tensor_text(t, indent, summarize, formatter, o);
  }
  const std::string grad_fn = tensor.grad_fn_name();
  if (!grad_fn.empty())
    suffixes.push_back("grad_fn=<" + detail::torch_grad_fn_name(grad_fn) + ">");
  else if (tensor.requires_grad())
    suffixes.push_back("requires_grad=True");
  // PyTorch's _add_suffixes: a suffix goes on a new line when it would pass
  // the line width.
  std::string out = prefix + body;
  const size_t newline = out.rfind('\n');
  size_t last_line = out.size() - (newline == std::string::npos ? static_cast<size_t>(-1) : newline) + 1;
  for (const std::string& suffix : suffixes) {
    if (last_line + suffix.size() + 2 > static_cast<size_t>(o.linewidth)) {
      out += ",\n" + std::string(static_cast<size_t>(indent), ' ') + suffix;
      last_line = static_cast<size_t>(indent) + suffix.size();
    } else {
      out += ", " + suffix;
      last_line += suffix.size() + 2;
    }
  }
  return out + ")";
}

inline std::string Tensor::str() const { return to_string(*this); }

inline std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << to_string(t); }

}  // namespace nnp
