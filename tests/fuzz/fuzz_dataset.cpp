// libFuzzer target: libnnp's CSV reader (core/io/csv.cpp, through
// nnp::data::read_csv as `nnplug train` uses it) on arbitrary bytes, plain or
// gzip. A data set is refused with a message naming
// the file, or read whole with every value finite, every label a class
// index, and rows x features values.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <nnp/nnp.hpp>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/nnp_fuzz_dataset_" + std::to_string(::getpid()) + ".csv";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  for (bool header : {false, true}) {
    try {
      nnp::data::CsvData d = nnp::data::read_csv(path, nnp::data::CsvOptions().header(header));
      const int64_t rows = d.info.rows, features = d.info.features;
      if (rows <= 0 || features <= 0 || d.features.shape() != nnp::Shape{rows, features} ||
          d.labels.shape() != nnp::Shape{rows})
        __builtin_trap();
      for (float v : d.features.to_vector<float>())
        if (!std::isfinite(v)) __builtin_trap();
      for (int64_t label : d.labels.to_vector<int64_t>())
        if (label < 0 || label >= d.info.classes) __builtin_trap();
    } catch (const nnp::Error& e) {
      if (std::string(e.what()).find(path) == std::string::npos) __builtin_trap();  // the message names the file
    }
  }
  return 0;
}
