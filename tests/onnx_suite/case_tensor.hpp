// A test case's tensor on the host, as ONNX describes it (element type,
// dims, little-endian bytes): read from a TensorProto, given to nnplug,
// read back from nnplug, and compared as ONNX's backend test runner does.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnp::suite {

struct HostTensor {
  int32_t elem_type = 0;  // ::onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  std::string bytes;
};

// Bytes per element of an ONNX element type (0 for strings and unknowns).
size_t element_size(int32_t elem_type);
const char* elem_name(int32_t elem_type);

HostTensor from_proto(const ::onnx::TensorProto& t);
// nnplug's tensor for t (throws NNP_UNIMPLEMENTED for a type nnplug lacks).
Tensor to_nnp(const HostTensor& t);
HostTensor from_nnp(const Tensor& t);

// Element i as a double (for floating types and statistics).
double value_at(const HostTensor& t, size_t i);
int64_t numel(const HostTensor& t);

// "" when got matches expected (equal types and shapes, integers exact,
// floating values within rtol 1e-3 (bfloat16: one unit in its last place,
// 2^-7) and atol 1e-7, NaN equal to NaN), else what differs.
std::string compare(const HostTensor& expected, const HostTensor& got);

}  // namespace nnp::suite
