// nnp_list: an ordered list of named entries - tensors or modules (state
// dicts, the results of named_parameters and friends), or values (the
// arguments and results of a module's forward). It owns a reference to each
// tensor and module.
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <vector>

#include "../error.hpp"
#include "module_ref.hpp"

// The kind of a value in a sentence ("a string", "None"), for messages.
inline const char* value_kind_phrase(nnp_value_kind kind) {
  switch (kind) {
    case NNP_VALUE_NONE: return "None";
    case NNP_VALUE_TENSOR: return "a tensor";
    case NNP_VALUE_MODULE: return "a module";
    case NNP_VALUE_INT: return "an int";
    case NNP_VALUE_FLOAT: return "a float";
    case NNP_VALUE_BOOL: return "a bool";
    case NNP_VALUE_STRING: return "a string";
    default: return "a value of unknown kind";
  }
}

struct nnp_list {
  struct Entry {
    std::string name;
    nnp::core::TensorRef tensor;
    nnp::core::ModuleRef module;
    // A value that is neither (kind INT, FLOAT, BOOL or STRING).
    nnp_value_kind scalar_kind = NNP_VALUE_NONE;
    int64_t integer = 0;  // INT, and BOOL as 0 or 1
    double real = 0;
    std::string text;

    nnp_value_kind kind() const {
      if (tensor) return NNP_VALUE_TENSOR;
      if (module) return NNP_VALUE_MODULE;
      return scalar_kind;
    }
  };
  std::vector<Entry> entries;

  int32_t find(const std::string& name) const {
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].name == name) return static_cast<int32_t>(i);
    return -1;
  }
  void add(std::string name, nnp::core::TensorRef tensor) {
    Entry& e = entries.emplace_back();
    e.name = std::move(name);
    e.tensor = std::move(tensor);
  }
  void add(std::string name, nnp::core::ModuleRef module) {
    Entry& e = entries.emplace_back();
    e.name = std::move(name);
    e.module = std::move(module);
  }
  // A scalar value: INT or BOOL in integer, FLOAT in real, STRING in text.
  Entry& add_scalar(std::string name, nnp_value_kind kind) {
    Entry& e = entries.emplace_back();
    e.name = std::move(name);
    e.scalar_kind = kind;
    return e;
  }
  // Removes entry i; out of range is refused, naming the operation.
  void remove(int32_t i, const char* op) {
    if (i < 0 || i >= static_cast<int32_t>(entries.size()))
      nnp::core::fail(NNP_INVALID_ARGUMENT, op, ": index ", i, " is out of range (", entries.size(), " entries)");
    entries.erase(entries.begin() + i);
  }
};
