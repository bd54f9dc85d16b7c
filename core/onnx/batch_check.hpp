// Whether an exported graph's symbolic batch holds: the tracer sees ops, not
// where their integers came from, so a graph can carry this batch's size
// in a constant (an index, a divisor) while naming the axis "batch".
#pragma once

#include <string>
#include <vector>

#include "../nn/module.hpp"

namespace nnp::core::onnx {

// "" when the model at `draft`, imported and run on the inputs grown by one
// row along the batch (every input whose first size is the batch), gives
// the module's own outputs there; otherwise what differed. A graph the
// importer cannot read is not judged ("").
std::string batch_generic_failure(nn::Module& module, const std::vector<TensorRef>& inputs, const std::string& draft);

}  // namespace nnp::core::onnx
