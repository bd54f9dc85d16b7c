// Device names ("cpu", "cuda:1", "auto") and their validation.
#pragma once

#include <nnp/nnp.h>

#include <string>

namespace nnp::core {

nnp_device parse_device(const char* name);
std::string device_name(nnp_device device);
inline bool same_device(nnp_device a, nnp_device b) { return a.backend == b.backend && a.index == b.index; }
// Throws naming `what` unless device is a loaded backend's existing device.
void check_device(const char* what, nnp_device device);

}  // namespace nnp::core
