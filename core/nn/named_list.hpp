// nnp_list: an ordered list of named tensors or modules (state dicts, the
// results of named_parameters and friends). It owns a reference to each entry.
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <vector>

#include "../error.hpp"
#include "module_ref.hpp"

struct nnp_list {
  struct Entry {
    std::string name;
    nnp::core::TensorRef tensor;
    nnp::core::ModuleRef module;
  };
  std::vector<Entry> entries;

  int32_t find(const std::string& name) const {
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].name == name) return static_cast<int32_t>(i);
    return -1;
  }
  void add(std::string name, nnp::core::TensorRef tensor) {
    entries.push_back({std::move(name), std::move(tensor), {}});
  }
  void add(std::string name, nnp::core::ModuleRef module) {
    entries.push_back({std::move(name), {}, std::move(module)});
  }
  // Removes entry i; out of range is refused, naming the operation.
  void remove(int32_t i, const char* op) {
    if (i < 0 || i >= static_cast<int32_t>(entries.size()))
      nnp::core::fail(NNP_INVALID_ARGUMENT, op, ": index ", i, " is out of range (", entries.size(), " entries)");
    entries.erase(entries.begin() + i);
  }
};
