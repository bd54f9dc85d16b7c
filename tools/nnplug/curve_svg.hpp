// The picture of a training run: loss and accuracy per epoch, as SVG.
#pragma once

#include <string>
#include <vector>

namespace nnplug {

struct EpochRecord {
  double train_loss;
  double train_accuracy;
  double test_accuracy;
};

// Writes an SVG with the loss (scaled to its maximum) and both accuracies.
void write_curves_svg(const std::string& path, const std::vector<EpochRecord>& epochs);

}  // namespace nnplug
