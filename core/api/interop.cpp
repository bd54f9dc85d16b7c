// Adapters: DLPack exchange.
#include "../interop/dlpack.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status to_dlpack(const nnp_tensor* t, DLManagedTensor** out) {
  return guard([&] {
    DLManagedTensor*& result = out_arg(out, "to_dlpack");
    result = interop::to_dlpack(tensor_arg(t, "to_dlpack"));
  });
}
nnp_status to_dlpack_versioned(const nnp_tensor* t, DLManagedTensorVersioned** out) {
  return guard([&] {
    DLManagedTensorVersioned*& result = out_arg(out, "to_dlpack_versioned");
    result = interop::to_dlpack_versioned(tensor_arg(t, "to_dlpack_versioned"));
  });
}
nnp_status from_dlpack(DLManagedTensor* src, nnp_tensor** out) {
  return handle_out(out, "from_dlpack", [&] { return interop::from_dlpack(src); });
}
nnp_status from_dlpack_versioned(DLManagedTensorVersioned* src, nnp_tensor** out) {
  return handle_out(out, "from_dlpack_versioned", [&] { return interop::from_dlpack_versioned(src); });
}

}  // namespace nnp::core::api
