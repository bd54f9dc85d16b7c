// Parses a subcommand's arguments with Boost.Program_options, handling
// --help and usage errors the same way for every command.
#pragma once

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "piped_input.hpp"

namespace nnplug {

// An option that takes a whole number from 0 to 2^64 - 1 (--seed). Boost
// reads "-1" into an unsigned type as 2^64 - 1 and "1e3" as an error only
// sometimes; this takes decimal digits alone, in range, or refuses the value
// naming the option.
struct Unsigned {
  uint64_t value = 0;
};
inline std::ostream& operator<<(std::ostream& out, const Unsigned& u) { return out << u.value; }
inline void validate(boost::any& v, const std::vector<std::string>& values, Unsigned*, int) {
  namespace po = boost::program_options;
  po::validators::check_first_occurrence(v);
  const std::string& text = po::validators::get_single_string(values);
  errno = 0;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || errno == ERANGE || *end != '\0')
    throw po::invalid_option_value(text);
  v = Unsigned{static_cast<uint64_t>(parsed)};
}

// Returns the parsed variables, or an exit status when the command should
// stop (0 after --help, 2 after a usage error).
// positional (may be null): options that may also be given without their
// name (nnplug bench MODEL).
inline std::optional<int> parse_options(
    const char* command, const char* description, boost::program_options::options_description& options,
    const Args& args, boost::program_options::variables_map& vm,
    const boost::program_options::positional_options_description* positional = nullptr) {
  namespace po = boost::program_options;
  options.add_options()("help,h", "show this help");
  try {
    po::command_line_parser parser(args);
    parser.options(options);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    // --help answers before required options are checked (notify checks them).
    if (vm.count("help")) {
      std::cout << "usage: nnplug " << command << " [OPTIONS]\n" << description << "\n\n" << options;
      return 0;
    }
    copy_piped_inputs(vm);  // files named on the command line may be pipes
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
