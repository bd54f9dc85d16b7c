// libFuzzer target: `nnplug train`'s CSV reader (tools/nnplug/dataset.cpp) on
// arbitrary bytes, plain or gzip. A data set is refused with a message naming
// the file, or read whole with every value finite, every label a class
// index, and rows x features values.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <nnp/nnp.hpp>
#include <string>

#include "dataset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/nnp_fuzz_dataset_" + std::to_string(::getpid()) + ".csv";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  for (bool header : {false, true}) {
    try {
      nnplug::Dataset d = nnplug::load_csv(path, header);
      if (d.rows <= 0 || d.features <= 0 || d.x.size() != static_cast<size_t>(d.rows * d.features) ||
          d.y.size() != static_cast<size_t>(d.rows))
        __builtin_trap();
      for (float v : d.x)
        if (!std::isfinite(v)) __builtin_trap();
      for (int64_t label : d.y)
        if (label < 0 || label >= d.classes) __builtin_trap();
    } catch (const nnp::Error& e) {
      if (std::string(e.what()).find(path) == std::string::npos) __builtin_trap();  // the message names the file
    }
  }
  return 0;
}
