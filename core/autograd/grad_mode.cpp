#include "grad_mode.hpp"

namespace nnp::core::autograd {
namespace {
// initial-exec: read on every op, so a plain %fs access.
thread_local bool enabled __attribute__((tls_model("initial-exec"))) = true;
}  // namespace

bool grad_enabled() { return enabled; }
void set_grad_enabled(bool value) { enabled = value; }

}  // namespace nnp::core::autograd
