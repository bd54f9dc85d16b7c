// What a plugin file is, found out before it is opened: dlopen's own words
// for a wrong file mislead ("no such file" for another machine's library), a
// FIFO would block it, and a file cut short maps segments whose first touch
// is a SIGBUS. Every check fails with nnp::Error naming the reason.
#pragma once

#include <string>

namespace nnp::core {

// Refuses, with the reason, anything but a regular, readable ELF shared
// library for this machine whose loaded segments lie inside the file.
void check_plugin_file(const std::string& path);

// Whether the symbol at address is a function (calling data as code would
// crash the process); true when nothing is known about it.
bool is_function_symbol(void* address);

}  // namespace nnp::core
