// Models of opsets before 13 are brought to 13 by ONNX's own shape inference
// and version converter (libonnx). Neither was written for files from
// strangers: fuzzing found models that pass onnx::checker and crash either
// one (a null type, an output that names no value). So they run in a child
// process of their own, forked for the one conversion: a crash, an abort or
// a hang there is an error here, naming the model, and the caller's process
// and its state are untouched.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace nnp::core::onnx {

struct UpgradeResult {
  bool converted = false;
  ::onnx::ModelProto model;  // converted: the model at the target opset
  std::string why;           // not converted: the converter's reason, or how its process ended
};

// `model` (checked by onnx::checker) at `opset`: shapes inferred first
// (where they cannot be, converted without them), as the converter's
// adapters read them. `label` names the model in messages.
UpgradeResult upgrade_in_child(const ::onnx::ModelProto& model, int opset, const std::string& label);

}  // namespace nnp::core::onnx
