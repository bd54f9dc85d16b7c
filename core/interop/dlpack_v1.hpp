// DLPack 1.0's additions over the 0.6 header Debian ships (libdlpack-dev):
// the versioned managed tensor and the bool type code. Their layout is
// DLPack's ABI, copied from the 1.0 specification; a newer dlpack.h that
// defines them already wins.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>

#ifndef DLPACK_MAJOR_VERSION  // dlpack.h before 1.0

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << UINT64_C(0))
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << UINT64_C(1))

extern "C" {
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}

#endif

namespace nnp::core::interop {
// kDLBool joined DLDataTypeCode in DLPack 0.8.
constexpr uint8_t kDLBoolCode = 6;
}  // namespace nnp::core::interop
