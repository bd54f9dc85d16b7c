#include "case_tensor.hpp"

#include <nnp/half.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace nnp::suite {

namespace {

using P = ::onnx::TensorProto;

template <typename Stored, typename Field>
void store(const Field& field, std::string& bytes) {
  bytes.resize(static_cast<size_t>(field.size()) * sizeof(Stored));
  for (int i = 0; i < field.size(); ++i) {
    const Stored v = static_cast<Stored>(field.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(Stored), &v, sizeof(Stored));
  }
}

template <typename T>
T read(const HostTensor& t, size_t i) {
  T v;
  std::memcpy(&v, t.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

bool is_floating(int32_t e) {
  return e == P::FLOAT || e == P::DOUBLE || e == P::FLOAT16 || e == P::BFLOAT16;
}

struct DtypePair {
  int32_t elem;
  Dtype dtype;
};
constexpr DtypePair kPairs[] = {{P::FLOAT, Dtype::f32}, {P::DOUBLE, Dtype::f64}, {P::FLOAT16, Dtype::f16},
                                {P::BFLOAT16, Dtype::bf16}, {P::INT64, Dtype::i64}, {P::INT32, Dtype::i32},
                                {P::UINT8, Dtype::u8},     {P::INT8, Dtype::i8},   {P::BOOL, Dtype::boolean},
                                {P::INT16, Dtype::i16},    {P::UINT16, Dtype::u16}, {P::UINT32, Dtype::u32},
                                {P::UINT64, Dtype::u64}};

}  // namespace

size_t element_size(int32_t e) {
  switch (e) {
    case P::FLOAT:
    case P::INT32:
    case P::UINT32: return 4;
    case P::DOUBLE:
    case P::INT64:
    case P::UINT64:
    case P::COMPLEX64: return 8;
    case P::COMPLEX128: return 16;
    case P::FLOAT16:
    case P::BFLOAT16:
    case P::INT16:
    case P::UINT16: return 2;
    case P::INT8:
    case P::UINT8:
    case P::BOOL: return 1;
    default: return 0;
  }
}

const char* elem_name(int32_t e) {
  return P::DataType_IsValid(e) ? P::DataType_Name(static_cast<P::DataType>(e)).c_str() : "unknown";
}

int64_t numel(const HostTensor& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return n;
}

HostTensor from_proto(const P& t) {
  HostTensor out;
  out.elem_type = t.data_type();
  out.dims.assign(t.dims().begin(), t.dims().end());
  if (t.has_raw_data()) {
    out.bytes = t.raw_data();
    return out;
  }
  switch (t.data_type()) {
    case P::FLOAT:
    case P::COMPLEX64: store<float>(t.float_data(), out.bytes); break;
    case P::DOUBLE:
    case P::COMPLEX128: store<double>(t.double_data(), out.bytes); break;
    case P::INT64: store<int64_t>(t.int64_data(), out.bytes); break;
    case P::UINT32: store<uint32_t>(t.uint64_data(), out.bytes); break;
    case P::UINT64: store<uint64_t>(t.uint64_data(), out.bytes); break;
    case P::INT32: store<int32_t>(t.int32_data(), out.bytes); break;
    case P::INT16: store<int16_t>(t.int32_data(), out.bytes); break;
    case P::UINT16:
    case P::FLOAT16:
    case P::BFLOAT16: store<uint16_t>(t.int32_data(), out.bytes); break;
    case P::INT8: store<int8_t>(t.int32_data(), out.bytes); break;
    case P::UINT8:
    case P::BOOL: store<uint8_t>(t.int32_data(), out.bytes); break;
    default: break;  // strings: no bytes
  }
  return out;
}

Tensor to_nnp(const HostTensor& t) {
  for (const DtypePair& p : kPairs)
    if (p.elem == t.elem_type) {
      if (t.bytes.size() != static_cast<size_t>(numel(t)) * element_size(t.elem_type))
        throw Error(NNP_INVALID_ARGUMENT, "an input's bytes do not fill its shape");
      return Tensor::call(api().from_host, static_cast<const void*>(t.bytes.data()), t.dims.data(),
                          static_cast<int32_t>(t.dims.size()), static_cast<nnp_dtype>(p.dtype), Device::cpu().raw());
    }
  throw Error(NNP_UNIMPLEMENTED, std::string("an input of element type ") + elem_name(t.elem_type) +
                                     ", which nnplug has no dtype for");
}

HostTensor from_nnp(const Tensor& given) {
  const Tensor t = given.to(Device::cpu()).contiguous();
  HostTensor out;
  out.elem_type = -1;
  for (const DtypePair& p : kPairs)
    if (p.dtype == t.dtype()) out.elem_type = p.elem;
  for (int64_t d : t.shape()) out.dims.push_back(d);
  out.bytes.assign(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(numel(out)) * element_size(out.elem_type));
  return out;
}

double value_at(const HostTensor& t, size_t i) {
  switch (t.elem_type) {
    case P::FLOAT: return read<float>(t, i);
    case P::DOUBLE: return read<double>(t, i);
    case P::FLOAT16: return nnp_f16_to_float(read<uint16_t>(t, i));
    case P::BFLOAT16: return nnp_bf16_to_float(read<uint16_t>(t, i));
    case P::INT64: return static_cast<double>(read<int64_t>(t, i));
    case P::INT32: return read<int32_t>(t, i);
    case P::INT16: return read<int16_t>(t, i);
    case P::INT8: return read<int8_t>(t, i);
    case P::UINT64: return static_cast<double>(read<uint64_t>(t, i));
    case P::UINT32: return read<uint32_t>(t, i);
    case P::UINT16: return read<uint16_t>(t, i);
    case P::UINT8:
    case P::BOOL: return read<uint8_t>(t, i);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

std::string compare(const HostTensor& expected, const HostTensor& got) {
  if (expected.elem_type != got.elem_type)
    return std::string("element type ") + elem_name(got.elem_type) + " where " + elem_name(expected.elem_type) +
           " is expected";
  if (expected.dims != got.dims) {
    auto text = [](const std::vector<int64_t>& d) {
      std::string s = "[";
      for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
      return s + "]";
    };
    return "shape " + text(got.dims) + " where " + text(expected.dims) + " is expected";
  }
  const size_t item = element_size(expected.elem_type);
  if (item == 0) return std::string("element type ") + elem_name(expected.elem_type) + " is not compared";
  const size_t count = static_cast<size_t>(numel(expected));
  if (expected.bytes.size() != count * item || got.bytes.size() != count * item) return "bytes do not fill the shape";
  const bool floating = is_floating(expected.elem_type);
  // bfloat16 keeps 8 significant bits: two roundings of one value (ONNX
  // 1.12's data truncates, nnplug rounds to nearest even) may differ by one
  // unit in the last place, 2^-7 of the value at most.
  const double rtol = expected.elem_type == P::BFLOAT16 ? 1.0 / 128 : 1e-3;
  for (size_t i = 0; i < count; ++i) {
    bool same;
    if (floating) {
      const double want = value_at(expected, i), have = value_at(got, i);
      same = (std::isnan(want) && std::isnan(have)) || want == have ||
             (std::isfinite(want) && std::isfinite(have) && std::fabs(want - have) <= 1e-7 + rtol * std::fabs(want));
      if (!same)
        return "element " + std::to_string(i) + " is " + std::to_string(have) + " where " + std::to_string(want) +
               " is expected";
    } else {
      same = std::memcmp(expected.bytes.data() + i * item, got.bytes.data() + i * item, item) == 0;
      if (!same)
        return "element " + std::to_string(i) + " is " + std::to_string(value_at(got, i)) + " where " +
               std::to_string(value_at(expected, i)) + " is expected";
    }
  }
  return "";
}

}  // namespace nnp::suite
