// What the file-reader fuzz targets share: libnnp's table, the cpu device,
// and the fuzzer's bytes written to a file of this process that the reader
// under test opens.
#pragma once

#include <nnp/nnp.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

inline const nnp_api* fuzz_api() {
  static const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  return api;
}

inline nnp_device fuzz_cpu() {
  nnp_device cpu;
  if (fuzz_api()->device_parse("cpu", &cpu) != NNP_OK) __builtin_trap();
  return cpu;
}

// "/tmp/nnp_fuzz_<pid><suffix>" holding the bytes, or "" where it cannot be written.
inline std::string fuzz_input_file(const uint8_t* data, size_t size, const std::string& suffix) {
  const std::string path = "/tmp/nnp_fuzz_" + std::to_string(getpid()) + suffix;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return "";
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  return path;
}
