// Adapters: errors, names and versions.
#include "../dtype.hpp"
#include "../error.hpp"
#include "entries.hpp"

namespace nnp::core::api {

const char* last_error() { return last_error_message(); }
nnp_status last_status() { return last_error_status(); }
void set_error(nnp_status status, const char* message) { set_last_error(status, message); }
const char* status_name(nnp_status status) { return core::status_name(status); }
const char* dtype_name(nnp_dtype dtype) { return core::dtype_name(dtype); }
size_t dtype_size(nnp_dtype dtype) { return core::dtype_size(dtype); }
const char* version() { return NNP_VERSION_STRING; }

}  // namespace nnp::core::api
