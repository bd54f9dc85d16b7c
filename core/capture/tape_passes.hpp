// What a tape can do better than the eager step it recorded, knowing the
// whole step: a replay runs the tape these passes rewrote. Each pass keeps
// every value the step leaves behind (parameters, gradients, optimizer
// state, results) and rewrites only what touches the step's private
// temporaries - blocks made during the capture that nothing but the tape
// holds, which no one can read between replays:
//   - a copy out of a temporary is dropped, its producer writing the copy's
//     destination instead (the gradient a backward clones into .grad);
//   - a product, the bias added to it and a ReLU after it become one
//     gemm_epilogue call where the backend has that kernel (each layer's
//     forward: two passes over the activations fewer);
//   - ReLU's backward (le against a zero, where) and the column sums of
//     its result after it (a Linear's bias gradient) become one
//     relu_backward call where the backend has that kernel, and the zeros
//     nothing compares with any more are not filled.
#pragma once

#include "tape.hpp"

namespace nnp::core::capture {

// Rewrites tape.calls; returns how many calls it removed.
size_t optimize_tape(Tape& tape);

}  // namespace nnp::core::capture
