// Where `nnplug train` writes, so that a run never silently replaces the work
// of another: without --out, the first free of nnplug-run, nnplug-run-2, ...;
// with --out, a folder that holds no run yet, unless --force or the run is
// resumed from a checkpoint in that folder.
#pragma once

#include <string>

namespace nnplug {

// The folder to write into (created), or nnp::Error (NNP_INVALID_ARGUMENT)
// naming the run it would replace.
std::string choose_run_folder(const std::string& out, bool out_given, bool force, const std::string& resume);

}  // namespace nnplug
