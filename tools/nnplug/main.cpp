// nnplug: the command-line tool. `nnplug COMMAND --help` describes each one.
#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <nnp/nnp.hpp>

#include "commands.hpp"
#include "terminal_text.hpp"

namespace {

struct Command {
  const char* summary;
  std::function<int(const nnplug::Args&)> run;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"devices", {"list the devices of every loaded backend", nnplug::run_devices}},
      {"plugins", {"list the plugins found, loaded and refused (with reasons)", nnplug::run_plugins}},
      {"conformance", {"check a backend's kernels against the reference backend", nnplug::run_conformance}},
      {"summary", {"print a model spec's tree, output shapes and parameter counts", nnplug::run_summary}},
      {"train", {"train a model on a data set (default: a CNN on the digits)", nnplug::run_train}},
      {"eval", {"report a checkpoint's accuracy", nnplug::run_eval}},
      {"bench", {"time a model's inference, compiled and as written (p50/p90/p99)", nnplug::run_bench}},
      {"run", {"run a model on inputs from .npy or safetensors files, write its outputs", nnplug::run_run}},
      {"export", {"write a checkpoint's model as an ONNX file (torch.onnx.export)", nnplug::run_export}},
      {"import", {"read an ONNX file into a model spec and weights", nnplug::run_import}},
      {"prune", {"prune a checkpoint's weights (torch.nn.utils.prune)", nnplug::run_prune}},
      {"quantize", {"quantize a checkpoint's model to int8 (torch.ao.quantization)", nnplug::run_quantize}},
      {"profile", {"profile forward and backward of a model spec (torch.profiler)", nnplug::run_profile}},
      {"launch", {"start the ranks of a data-parallel job (torchrun)", nnplug::run_launch}},
      {"ops", {"list the ops of the dispatcher, their backward nodes and ONNX forms", nnplug::run_ops}},
  };
  return table;
}

void usage(std::ostream& out) {
  out << "usage: nnplug COMMAND [OPTIONS]\n       nnplug --version\n\ncommands:\n";
  for (const auto& [name, command] : commands())
    out << "  " << name << std::string(14 - name.size(), ' ') << command.summary << "\n";
  out << "\nRun 'nnplug COMMAND --help' for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) reached while writing makes the write fail
  // with EFBIG, which names the file, instead of killing the process and
  // leaving its temporary file behind.
  ::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return 0;
  }
  if (name == "--version" || name == "-V") {
    const nnp_api& api = nnp::api();
    std::cout << "nnplug " << api.version() << " (ABI " << api.abi_major << "." << api.abi_minor << ")\n";
    return 0;
  }
  auto it = commands().find(name);
  if (it == commands().end()) {
    std::cerr << "nnplug: unknown command '" << nnplug::printable(name) << "'\n\n";
    usage(std::cerr);
    return 2;
  }
  try {
    return it->second.run(nnplug::Args(argv + 2, argv + argc));
  } catch (const nnp::Error& e) {
    std::cerr << "nnplug " << name << ": " << nnplug::printable(e.what(), 1 << 16, true) << "\n";
    return 1;
  } catch (const std::exception& e) {  // a runtime failure, not a usage error (those return 2 above)
    std::cerr << "nnplug " << name << ": " << nnplug::printable(e.what(), 1 << 16, true) << "\n";
    return 1;
  }
}
