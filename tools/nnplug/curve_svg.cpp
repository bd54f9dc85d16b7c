#include "curve_svg.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nnp/nnp.hpp>
#include <sstream>

namespace nnplug {

void write_curves_svg(const std::string& path, const std::vector<EpochRecord>& epochs) {
  const double width = 720, height = 400, left = 60, right = 150, top = 30, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double max_loss = 1e-12;
  for (const EpochRecord& e : epochs) max_loss = std::max(max_loss, e.train_loss);
  const size_t n = epochs.size();
  auto x_of = [&](size_t i) {
    return left + (n <= 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / static_cast<double>(n - 1));
  };
  auto y_of = [&](double fraction) { return top + plot_h * (1 - fraction); };
  auto polyline = [&](auto value, const char* color) {
    std::ostringstream points;
    for (size_t i = 0; i < n; ++i) points << x_of(i) << "," << y_of(value(epochs[i])) << " ";
    return "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"2\" points=\"" + points.str() +
           "\"/>\n";
  };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left
      << "\" y=\"20\" font-family=\"sans-serif\" font-size=\"14\">nnplug train: loss and accuracy per epoch</text>\n"
      << "<line x1=\"" << left << "\" y1=\"" << top + plot_h << "\" x2=\"" << left + plot_w << "\" y2=\""
      << top + plot_h << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + plot_h
      << "\" stroke=\"black\"/>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    double f = tick / 4.0;
    char label[32];
    std::snprintf(label, sizeof label, "%.0f%%", f * 100);
    svg << "<text x=\"" << left - 45 << "\" y=\"" << y_of(f) + 4 << "\" font-family=\"sans-serif\" font-size=\"11\">"
        << label << "</text>\n<line x1=\"" << left << "\" y1=\"" << y_of(f) << "\" x2=\"" << left + plot_w << "\" y2=\""
        << y_of(f) << "\" stroke=\"#ddd\"/>\n";
  }
  for (size_t i = 0; i < n; ++i)
    svg << "<text x=\"" << x_of(i) - 4 << "\" y=\"" << top + plot_h + 18
        << "\" font-family=\"sans-serif\" font-size=\"11\">" << i + 1 << "</text>\n";
  svg << "<text x=\"" << left + plot_w / 2 - 20 << "\" y=\"" << height - 10
      << "\" font-family=\"sans-serif\" font-size=\"12\">epoch</text>\n";
  svg << polyline([&](const EpochRecord& e) { return e.train_loss / max_loss; }, "#d62728");
  svg << polyline([](const EpochRecord& e) { return e.train_accuracy; }, "#1f77b4");
  svg << polyline([](const EpochRecord& e) { return e.test_accuracy; }, "#2ca02c");
  const char* names[] = {"train loss (scaled)", "train accuracy", "test accuracy"};
  const char* colors[] = {"#d62728", "#1f77b4", "#2ca02c"};
  for (int i = 0; i < 3; ++i)
    svg << "<rect x=\"" << width - right + 10 << "\" y=\"" << top + 20 * i << "\" width=\"12\" height=\"12\" fill=\""
        << colors[i] << "\"/><text x=\"" << width - right + 28 << "\" y=\"" << top + 20 * i + 10
        << "\" font-family=\"sans-serif\" font-size=\"11\">" << names[i] << "</text>\n";
  svg << "</svg>\n";
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << svg.str();
    if (!out) throw nnp::Error(NNP_IO_ERROR, "cannot write " + path);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw nnp::Error(NNP_IO_ERROR, "cannot write " + path);
}

}  // namespace nnplug
