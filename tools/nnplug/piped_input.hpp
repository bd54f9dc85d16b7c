// Files a user names on the command line may be pipes (`--data <(zcat
// big.csv.gz)`, `--model <(generate-spec)`): nnplug reads its files more
// than once and at random places, and the core opens only regular files (a
// plugin or a file a stranger names must never block it), so a pipe named
// for an input option is first copied, once, to a private temporary file
// that lives until the command ends. Its name keeps the original's
// extension (".onnx", ".gz") for the commands that look at it.
#pragma once

#include <boost/program_options.hpp>

namespace nnplug {

// For each of --model, --data, --checkpoint and --resume that names a pipe,
// copies the pipe and points the option at the copy (before notify, so the
// command's own variable gets the copy). Throws nnp::Error naming the option
// when the pipe cannot be read or the copy written.
void copy_piped_inputs(boost::program_options::variables_map& vm);

}  // namespace nnplug
