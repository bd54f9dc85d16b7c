#include "dtype.hpp"

#include "error.hpp"

namespace nnp::core {

const char* dtype_name(nnp_dtype dtype) {
  static const char* const names[NNP_DTYPE_COUNT] = {"f32", "f64",  "f16", "bf16", "i64", "i32", "u8",
                                                      "bool", "i8", "i16", "u16", "u32", "u64"};
  return is_valid_dtype(dtype) ? names[dtype] : nullptr;
}

void check_dtype(const char* what, nnp_dtype dtype) {
  if (!is_valid_dtype(dtype))
    fail(NNP_INVALID_ARGUMENT, what, ": unknown dtype ", dtype, " (use one of NNP_F32 ... NNP_U64)");
}

}  // namespace nnp::core
