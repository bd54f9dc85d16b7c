#include "profile_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "../error.hpp"

namespace nnp::core::profiler {
namespace {

const char* category(nnp_profile_event_kind kind) {
  switch (kind) {
    case NNP_PROFILE_MODULE: return "module";
    case NNP_PROFILE_SCOPE: return "user_annotation";
    case NNP_PROFILE_BACKWARD: return "backward";
    case NNP_PROFILE_COPY: return "memcpy";  // PyTorch's trace names its copies so
    default: return "op";
  }
}

// PyTorch's format: 1.234s, 12.345ms, 123.456us.
std::string time_text(double ns) {
  char buf[32];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  return buf;
}

std::string bytes_text(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes), magnitude = std::fabs(b);
  if (magnitude >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f Gb", b / (1024.0 * 1024 * 1024));
  else if (magnitude >= 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f Mb", b / (1024.0 * 1024));
  else if (magnitude >= 1024.0)
    std::snprintf(buf, sizeof buf, "%.2f Kb", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%lld b", static_cast<long long>(bytes));
  return buf;
}

std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

}  // namespace

std::string chrome_trace(const std::vector<Event>& events) {
  nlohmann::json trace_events = nlohmann::json::array();
  for (const Event& e : events) {
    if (e.end_ns < 0) continue;
    nlohmann::json args = nlohmann::json::object();
    if (!e.shapes.empty()) args["Input Dims"] = e.shapes;
    if (!e.dtypes.empty()) args["Input type"] = e.dtypes;
    if (!e.device.empty()) args["Device"] = e.device;
    if (e.bytes_allocated) args["Bytes allocated"] = e.bytes_allocated;
    if (e.bytes_freed) args["Bytes freed"] = e.bytes_freed;
    if (e.device_us >= 0) args["Device time (us)"] = e.device_us;
    trace_events.push_back({{"ph", "X"},
                            {"name", e.name},
                            {"cat", category(e.kind)},
                            {"ts", static_cast<double>(e.start_ns) / 1000.0},
                            {"dur", static_cast<double>(e.end_ns - e.start_ns) / 1000.0},
                            {"pid", static_cast<int64_t>(::getpid())},
                            {"tid", e.thread},
                            {"args", args}});
  }
  nlohmann::json trace = {{"traceEvents", trace_events}, {"displayTimeUnit", "ms"}};
  return trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void save_chrome_trace(const std::vector<Event>& events, const std::string& path) {
  const std::string text = chrome_trace(events);
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    fail(NNP_IO_ERROR, "profile_save_chrome_trace: cannot create ", temporary, " (", std::strerror(errno), ")");
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fflush(file) == 0 && ok;
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    fail(NNP_IO_ERROR, "profile_save_chrome_trace: writing ", path, " failed (", reason, ")");
  }
}

std::vector<int64_t> self_times_ns(const std::vector<Event>& events) {
  std::vector<int64_t> self(events.size(), 0);
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].end_ns >= 0) self[i] = events[i].end_ns - events[i].start_ns;
  for (const Event& e : events)
    if (e.end_ns >= 0 && e.parent >= 0) self[static_cast<size_t>(e.parent)] -= e.end_ns - e.start_ns;
  return self;
}

std::string summary_table(const std::vector<Event>& events, const std::string& sort_by, int32_t row_limit) {
  static const char* const keys[] = {"self_cpu_time_total", "cpu_time_total", "device_time_total",
                                     "self_cpu_memory_usage", "count"};
  const std::string key = sort_by.empty() ? "self_cpu_time_total" : sort_by;
  if (std::find(std::begin(keys), std::end(keys), key) == std::end(keys))
    fail(NNP_INVALID_ARGUMENT, "profile_summary: cannot sort by '", key,
         "'; use self_cpu_time_total, cpu_time_total, device_time_total, self_cpu_memory_usage or count");
  struct Row {
    std::string name;
    int64_t calls = 0, self_ns = 0, total_ns = 0, memory = 0;
    double device_us = 0;
    bool timed = false;
  };
  std::map<std::string, Row> rows;
  std::vector<int64_t> self = self_times_ns(events);
  int64_t self_total = 0;
  bool any_device = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.end_ns < 0) continue;
    Row& row = rows[e.name];
    row.name = e.name;
    row.calls += 1;
    row.self_ns += self[i];
    row.total_ns += e.end_ns - e.start_ns;
    row.memory += e.bytes_allocated - e.bytes_freed;
    if (e.device_us >= 0) {
      row.device_us += e.device_us;
      row.timed = any_device = true;
    }
    self_total += self[i];
  }
  std::vector<Row> sorted;
  for (auto& [name, row] : rows) sorted.push_back(row);
  auto value = [&](const Row& r) -> double {
    if (key == "cpu_time_total") return static_cast<double>(r.total_ns);
    if (key == "device_time_total") return r.device_us;
    if (key == "self_cpu_memory_usage") return static_cast<double>(r.memory);
    if (key == "count") return static_cast<double>(r.calls);
    return static_cast<double>(r.self_ns);
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Row& a, const Row& b) { return value(a) > value(b); });
  if (row_limit > 0 && sorted.size() > static_cast<size_t>(row_limit)) sorted.resize(static_cast<size_t>(row_limit));

  std::vector<std::string> header = {"Name",      "Self CPU %",   "Self CPU", "CPU total %",
                                     "CPU total", "CPU time avg", "Self Mem", "# of Calls"};
  if (any_device) header.insert(header.end() - 2, "Device total");
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : sorted) {
    std::vector<std::string> line = {r.name,
                                     percent(static_cast<double>(r.self_ns), static_cast<double>(self_total)),
                                     time_text(static_cast<double>(r.self_ns)),
                                     percent(static_cast<double>(r.total_ns), static_cast<double>(self_total)),
                                     time_text(static_cast<double>(r.total_ns)),
                                     time_text(static_cast<double>(r.total_ns) / static_cast<double>(r.calls)),
                                     bytes_text(r.memory),
                                     std::to_string(r.calls)};
    if (any_device) line.insert(line.end() - 2, r.timed ? time_text(r.device_us * 1000.0) : "-");
    cells.push_back(line);
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
    width[c] = std::min<size_t>(width[c], c == 0 ? 60 : 20) + 2;
  }
  auto rule = [&] {
    std::string out;
    for (size_t c = 0; c < width.size(); ++c) out += std::string(width[c] - 2, '-') + "  ";
    return out + "\n";
  };
  auto format = [&](const std::vector<std::string>& line) {
    std::string out;
    for (size_t c = 0; c < line.size(); ++c) {
      std::string cell = line[c].size() > width[c] - 2 ? line[c].substr(0, width[c] - 5) + "..." : line[c];
      if (c == 0)
        out += cell + std::string(width[c] - cell.size(), ' ');
      else
        out += std::string(width[c] - 2 - cell.size(), ' ') + cell + "  ";
    }
    return out + "\n";
  };
  std::string out = rule() + format(header) + rule();
  for (const auto& line : cells) out += format(line);
  out += rule() + "Self CPU time total: " + time_text(static_cast<double>(self_total)) + "\n";
  return out;
}

}  // namespace nnp::core::profiler
