// NumPy's .npy format (numpy.lib.format, versions 1.0 to 3.0): the magic
// "\x93NUMPY", a major and a minor version byte, the header's length (2
// bytes little-endian in 1.0, 4 in 2.0 and 3.0), the header - a Python dict
// literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by a newline - then the array's bytes.
//
// The reader takes the little-endian and byte dtypes nnplug has (f2, f4, f8,
// i1, i2, i4, i8, u1, u2, u4, u8, b1), C or Fortran order; it parses the
// header strictly in one pass (the three keys once each, nothing else),
// checks every size for overflow and refuses a file whose data is shorter
// or longer than the header says, naming the file and the problem. The
// writer writes version 1.0 (2.0 where the header needs it), C order, as
// numpy.save does, atomically.
#pragma once

#include <string>

#include "../tensor.hpp"

namespace nnp::core::io {

// The largest header read: numpy.load's own default limit is 10,000 bytes.
constexpr uint64_t kMaxNpyHeader = 65536;

TensorRef load_npy(const std::string& path, nnp_device device);
void save_npy(const Tensor& t, const std::string& path);

}  // namespace nnp::core::io
