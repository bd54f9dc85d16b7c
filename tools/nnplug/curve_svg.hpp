// The picture of a training run, as SVG: the train and test loss on a real
// loss axis above, the train and test accuracy (0-100 %) below, a legend,
// and epoch ticks thinned to about ten whatever the number of epochs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nnplug {

struct EpochRecord {
  int64_t epoch;  // counted from the run's first epoch, also after --resume
  double train_loss;
  double train_accuracy;
  double test_loss;
  double test_accuracy;
};

// Written to a temporary file and renamed over path.
void write_curves_svg(const std::string& path, const std::vector<EpochRecord>& epochs);

// A tick step of 1, 2 or 5 times a power of ten giving at most `ticks` steps
// over `span`.
double nice_step(double span, int ticks);

}  // namespace nnplug
