// nnp/data/csv.hpp - tabular data: a CSV file of rows "feature, ...,
// feature, label" (plain or gzip) as a TensorDataset of f32 features and i64
// class labels, read by libnnp's checked reader (see load_csv in nnp.h for
// what it refuses).
#pragma once

#include <memory>
#include <nnp/data/dataset.hpp>
#include <nnp/options.hpp>
#include <string>

namespace nnp::data {

struct CsvOptions {
  // The first row is a header whatever it holds (otherwise it is one when
  // every field is text).
  NNP_ARG(bool, header) = false;
  NNP_ARG(Device, device) = Device::cpu();
};

struct CsvData {
  Tensor features;  // f32 [rows, features]
  Tensor labels;    // i64 [rows]
  nnp_csv_info info{};
  std::shared_ptr<TensorDataset> dataset() const { return std::make_shared<TensorDataset>(features, labels); }
};

inline CsvData read_csv(const std::string& path, const CsvOptions& options = {}) {
  nnp_csv_options raw{};
  raw.struct_size = sizeof(raw);
  raw.header = options.header() ? NNP_CSV_HEADER_YES : NNP_CSV_HEADER_AUTO;
  CsvData out;
  out.info.struct_size = sizeof(out.info);
  nnp_tensor *features = nullptr, *labels = nullptr;
  check(api().load_csv(path.c_str(), &raw, options.device().raw(), &features, &labels, &out.info));
  out.features = Tensor::adopt(features);
  out.labels = Tensor::adopt(labels);
  return out;
}

}  // namespace nnp::data
