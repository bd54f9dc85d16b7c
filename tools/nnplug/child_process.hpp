// Runs a command as a child process and reads its standard output line by
// line as it comes, so a parent survives what kills the child (a backend's
// crashing kernel) and can stop one that hangs.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nnplug {

struct ChildOutcome {
  bool started = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  std::string error;  // why it could not be started
};

// argv[0] is the program's path; the child's stderr is the parent's.
ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_seconds,
                       const std::function<void(const std::string& line)>& on_line);

}  // namespace nnplug
