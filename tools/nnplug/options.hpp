// Parses a subcommand's arguments with Boost.Program_options, handling
// --help and usage errors the same way for every command.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "commands.hpp"

namespace nnplug {

// Returns the parsed variables, or an exit status when the command should
// stop (0 after --help, 2 after a usage error).
inline std::optional<int> parse_options(const char* command, const char* description,
                                        boost::program_options::options_description& options, const Args& args,
                                        boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  options.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(options).run(), vm);
    // --help answers before required options are checked (notify checks them).
    if (vm.count("help")) {
      std::cout << "usage: nnplug " << command << " [OPTIONS]\n" << description << "\n\n" << options;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "nnplug " << command << ": " << e.what() << "\n\n"
              << "usage: nnplug " << command << " [OPTIONS]\n"
              << options;
    return 2;
  }
  return std::nullopt;
}

}  // namespace nnplug
