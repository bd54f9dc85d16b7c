// The nnplug subcommands. Each takes its own arguments (after the command
// name) and returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace nnplug {

using Args = std::vector<std::string>;

int run_devices(const Args& args);
int run_ops(const Args& args);
int run_plugins(const Args& args);
int run_conformance(const Args& args);
int run_summary(const Args& args);
int run_train(const Args& args);
int run_eval(const Args& args);
int run_bench(const Args& args);
int run_run(const Args& args);
int run_export(const Args& args);
int run_import(const Args& args);
int run_prune(const Args& args);
int run_quantize(const Args& args);
int run_profile(const Args& args);
int run_launch(const Args& args);

}  // namespace nnplug
