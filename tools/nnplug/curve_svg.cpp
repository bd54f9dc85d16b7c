#include "curve_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nnp/nnp.hpp>
#include <sstream>

namespace nnplug {

double nice_step(double span, int ticks) {
  if (!(span > 0)) return 1;
  const double raw = span / ticks, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

namespace {

struct Panel {
  double top, height, low, high;  // the data range shown
  double y(double v) const { return top + height * (1 - (v - low) / (high - low)); }
};

std::string text(double x, double y, const std::string& s, const char* anchor = "start") {
  std::ostringstream out;
  out << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"" << anchor
      << "\" font-family=\"sans-serif\" font-size=\"11\">" << s << "</text>\n";
  return out.str();
}

}  // namespace

void write_curves_svg(const std::string& path, const std::vector<EpochRecord>& epochs) {
  const double width = 760, left = 70, right = 170, plot_w = width - left - right;
  const double first = epochs.empty() ? 1 : static_cast<double>(epochs.front().epoch);
  const double last = epochs.empty() ? 1 : static_cast<double>(epochs.back().epoch);
  auto x_of = [&](double epoch) {
    return last > first ? left + plot_w * (epoch - first) / (last - first) : left + plot_w / 2;
  };
  double max_loss = 0;
  for (const EpochRecord& e : epochs) max_loss = std::max({max_loss, e.train_loss, e.test_loss});
  const double loss_step = nice_step(max_loss > 0 ? max_loss : 1, 5);
  const Panel loss{40, 190, 0, loss_step * std::ceil((max_loss > 0 ? max_loss : 1) / loss_step)};
  const Panel accuracy{290, 150, 0, 1};
  const double height = accuracy.top + accuracy.height + 50;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">nnplug train: loss and "
      << "accuracy per epoch</text>\n";
  auto axes = [&](const Panel& p, double step, const std::function<std::string(double)>& label, const char* name) {
    for (double v = p.low; v <= p.high + step / 2; v += step) {
      svg << "<line x1=\"" << left << "\" y1=\"" << p.y(v) << "\" x2=\"" << left + plot_w << "\" y2=\"" << p.y(v)
          << "\" stroke=\"#ddd\"/>\n"
          << text(left - 6, p.y(v) + 4, label(v), "end");
    }
    svg << "<line x1=\"" << left << "\" y1=\"" << p.top << "\" x2=\"" << left << "\" y2=\"" << p.top + p.height
        << "\" stroke=\"black\"/>\n<line x1=\"" << left << "\" y1=\"" << p.top + p.height << "\" x2=\"" << left + plot_w
        << "\" y2=\"" << p.top + p.height << "\" stroke=\"black\"/>\n"
        << "<text transform=\"translate(14," << p.top + p.height / 2 << ") rotate(-90)\" text-anchor=\"middle\" "
        << "font-family=\"sans-serif\" font-size=\"12\">" << name << "</text>\n";
  };
  axes(
      loss, loss_step,
      [](double v) {
        char s[32];
        std::snprintf(s, sizeof s, "%g", v);
        return std::string(s);
      },
      "loss");
  axes(
      accuracy, 0.25, [](double v) { return std::to_string(static_cast<int>(std::lround(v * 100))) + "%"; },
      "accuracy");
  // Epoch ticks: about ten, on whole epochs.
  const double step = std::max(1.0, nice_step(last - first, 10));
  for (double e = std::ceil(first / step) * step; e <= last; e += step)
    svg << text(x_of(e), accuracy.top + accuracy.height + 16, std::to_string(static_cast<int64_t>(e)), "middle");
  svg << text(left + plot_w / 2, height - 10, "epoch", "middle");

  struct Curve {
    const Panel* panel;
    double EpochRecord::*value;
    const char* color;
    const char* dash;
    const char* name;
  };
  const Curve curves[] = {{&loss, &EpochRecord::train_loss, "#d62728", "", "train loss"},
                          {&loss, &EpochRecord::test_loss, "#d62728", "6,4", "test loss"},
                          {&accuracy, &EpochRecord::train_accuracy, "#1f77b4", "", "train accuracy"},
                          {&accuracy, &EpochRecord::test_accuracy, "#2ca02c", "6,4", "test accuracy"}};
  int row = 0;
  for (const Curve& c : curves) {
    std::ostringstream points;
    for (const EpochRecord& e : epochs)
      points << x_of(static_cast<double>(e.epoch)) << "," << c.panel->y(e.*c.value) << " ";
    svg << "<polyline fill=\"none\" stroke=\"" << c.color << "\" stroke-width=\"2\" stroke-dasharray=\"" << c.dash
        << "\" points=\"" << points.str() << "\"/>\n";
    const double ly = loss.top + 10 + 20 * row++;
    svg << "<line x1=\"" << width - right + 12 << "\" y1=\"" << ly << "\" x2=\"" << width - right + 36 << "\" y2=\""
        << ly << "\" stroke=\"" << c.color << "\" stroke-width=\"2\" stroke-dasharray=\"" << c.dash << "\"/>\n"
        << text(width - right + 42, ly + 4, c.name);
  }
  svg << "</svg>\n";
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << svg.str();
    if (!out) throw nnp::Error(NNP_IO_ERROR, "cannot write " + path);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw nnp::Error(NNP_IO_ERROR, "cannot write " + path);
}

}  // namespace nnplug
