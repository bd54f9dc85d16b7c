// The one-line progress display of `nnplug train` on a terminal: fitted to
// the terminal's width (the bar shrinks, then goes), with the time left.
#pragma once

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nnplug {

inline int terminal_columns() {
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const int n = std::atoi(columns);
    if (n > 0) return n;
  }
  return 80;
}

// "1:05", "12:00:07"
inline std::string clock_text(double seconds) {
  const long long s = seconds > 0 && seconds < 1e9 ? static_cast<long long>(seconds + 0.5) : 0;
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
  return text;
}

// The line for `columns` columns: "epoch 3/15 [====>   ] loss 0.1234  acc 95.1%  2100/s  ETA 0:12".
inline std::string progress_line(int columns, long long epoch, long long epochs, double fraction, double loss,
                                 double accuracy, double rate, double eta_seconds) {
  char head[64], tail[128];
  std::snprintf(head, sizeof head, "epoch %lld/%lld", epoch, epochs);
  std::snprintf(tail, sizeof tail, " loss %.4f  acc %5.1f%%  %.0f/s  ETA %s", loss, accuracy * 100, rate,
                clock_text(eta_seconds).c_str());
  std::string line = head;
  const int bar = columns - 1 - static_cast<int>(line.size() + std::string(tail).size()) - 3;
  if (bar >= 8) {
    const int filled = static_cast<int>(bar * (fraction < 0 ? 0 : fraction > 1 ? 1 : fraction));
    line += " [" + std::string(static_cast<size_t>(filled), '=') +
            (filled < bar ? ">" + std::string(static_cast<size_t>(bar - filled - 1), ' ') : "") + "]";
  }
  line += tail;
  if (static_cast<int>(line.size()) > columns - 1) line.resize(static_cast<size_t>(columns > 1 ? columns - 1 : 0));
  return line;
}

}  // namespace nnplug
