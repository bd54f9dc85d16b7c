// The arguments of a built-in layer's forward that takes more than one
// tensor (recurrent layers, attention, Transformers), read by position as
// Python binds them: an argument left out or given as None takes its
// default; too many, or one of the wrong kind, is refused naming it.
#pragma once

#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnp::library::layers {

using nnp::Tensor;

class CallArgs {
 public:
  // names: the forward's parameters in order, the first `required` of them
  // tensors that must be given.
  CallArgs(std::string type, const std::vector<nnp::Value>& args, std::vector<const char*> names, size_t required)
      : type_(std::move(type)), args_(args), names_(std::move(names)) {
    if (args_.size() < required || args_.size() > names_.size()) {
      std::string form;
      for (size_t i = 0; i < names_.size(); ++i) form += (i ? ", " : "") + std::string(names_[i]);
      throw Error(NNP_INVALID_ARGUMENT, type_ + ": forward takes " + std::to_string(required) + " to " +
                                            std::to_string(names_.size()) + " arguments (" + form + "), got " +
                                            std::to_string(args_.size()));
    }
    for (size_t i = 0; i < required; ++i)
      if (!args_[i].isTensor()) throw wrong(i, "a tensor");
  }
  bool given(size_t i) const { return i < args_.size() && !args_[i].isNone(); }
  // The tensor at i; undefined when left out or None.
  Tensor tensor(size_t i) const {
    if (!given(i)) return Tensor();
    if (!args_[i].isTensor()) throw wrong(i, "a tensor or None");
    return args_[i].toTensor();
  }
  bool boolean(size_t i, bool fallback) const {
    if (!given(i)) return fallback;
    if (!args_[i].isBool()) throw wrong(i, "a bool");
    return args_[i].toBool();
  }

 private:
  Error wrong(size_t i, const char* wanted) const {
    return Error(NNP_INVALID_ARGUMENT, type_ + ": argument " + std::to_string(i) + " (" + names_[i] + ") must be " +
                                           wanted + ", got " + args_[i].kindPhrase());
  }
  std::string type_;
  std::vector<nnp::Value> args_;  // a copy: callers pass temporaries (tensor_args)
  std::vector<const char*> names_;
};

// A call of tensors as a call of values (forward(std::vector<Tensor>)
// delegating to forward_values).
inline std::vector<nnp::Value> tensor_args(const std::vector<Tensor>& inputs) { return {inputs.begin(), inputs.end()}; }

}  // namespace nnp::library::layers
