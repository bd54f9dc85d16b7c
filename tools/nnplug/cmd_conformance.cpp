// nnplug conformance: runs the backend conformance kit. Each family of checks
// runs in a child process by default, so a kernel that crashes or hangs is
// reported with its op, dtype and layout and the kit goes on with the next
// family; progress is printed as each family ends.
#include <signal.h>
#include <string.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nnp/nnp.hpp>

#include "child_process.hpp"
#include "conformance_kit.hpp"
#include "options.hpp"
#include "terminal_text.hpp"

namespace nnplug {
namespace {

namespace conformance = nnp::conformance;

// One line per case from a child: tabs separate the fields, none inside them.
std::string field(const std::string& text) {
  std::string out = printable(text, 400);
  for (char& c : out)
    if (c == '\t') c = ' ';
  return out;
}

// Every field, the empty last one too.
std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

// The backend's name, loading it first when it is given as a plugin path.
std::string backend_name(const std::string& backend) {
  if (backend.find('/') == std::string::npos && backend.find(".so") == std::string::npos) return backend;
  std::string path = std::filesystem::absolute(backend).string();
  nnp::check(nnp::api().load_plugin(path.c_str()));
  for (const nnp_backend_info& info : nnp::backends())
    if (std::filesystem::equivalent(info.plugin_path, path)) return info.name;
  throw nnp::Error(NNP_NOT_FOUND, path + " registered no backend");
}

// The child's side: one family, every case streamed as it is judged.
int run_family_child(const std::string& backend, const std::string& family) {
  conformance::Options options;
  options.family = family;
  options.on_start = [](const std::string& op, const std::string& dtype, const std::string& layout) {
    std::cout << "start\t" << field(op) << "\t" << field(dtype) << "\t" << field(layout) << std::endl;
  };
  options.on_case = [](const conformance::Case& c) {
    std::cout << "case\t" << (c.passed ? 1 : 0) << "\t" << c.worst << "\t" << field(c.op) << "\t" << field(c.dtype)
              << "\t" << field(c.layout) << "\t" << field(c.detail) << std::endl;
  };
  const conformance::Report report = conformance::run(backend_name(backend), options);
  if (!report.note.empty()) std::cout << "note\t" << field(report.note) << std::endl;
  return 0;
}

// The parent's side: every family in its own process.
conformance::Report run_isolated(const std::string& backend, const std::string& self, double timeout) {
  conformance::Report report;
  report.backend = backend;
  const std::vector<std::string> families = conformance::families();
  for (size_t i = 0; i < families.size(); ++i) {
    const std::string& family = families[i];
    // The line is printed whole once the family ends: what the child writes
    // to stderr (a sanitizer's report of its crash) cannot split it.
    const std::string head = "[" + std::to_string(i + 1) + "/" + std::to_string(families.size()) + "] " + family + ": ";
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> started;  // op, dtype, layout of the case under way
    int cases = 0, failed = 0;
    ChildOutcome outcome = run_child({self, "conformance", "--backend", backend, "--family", family, "--child"},
                                     timeout, [&](const std::string& line) {
                                       std::vector<std::string> f = split_tabs(line);
                                       if (f.size() == 4 && f[0] == "start") started = {f[1], f[2], f[3]};
                                       if (f.size() == 2 && f[0] == "note") report.note = f[1];
                                       if (f.size() < 7 || f[0] != "case") return;
                                       conformance::Case c;
                                       c.passed = f[1] == "1";
                                       c.worst = std::strtod(f[2].c_str(), nullptr);
                                       c.op = f[3];
                                       c.dtype = f[4];
                                       c.layout = f[5];
                                       c.detail = f[6];
                                       ++cases;
                                       (c.passed ? report.passed : report.failed)++;
                                       failed += c.passed ? 0 : 1;
                                       report.cases.push_back(std::move(c));
                                       started.clear();
                                     });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (outcome.started && outcome.exit_code == 0) {
      std::cout << head << cases << " cases, " << failed << " failed (" << static_cast<int>(seconds * 10) / 10.0
                << " s)" << std::endl;
      continue;
    }
    // It crashed, hung or failed to run: one failed case says where.
    conformance::Case c;
    c.op = started.empty() ? family : started[0];
    c.dtype = started.empty() ? "-" : started[1];
    c.layout = started.empty() ? "(the family's set-up)" : started[2];
    c.detail = !outcome.started    ? "could not run the family in a child process: " + outcome.error
               : outcome.timed_out ? "hung: no result within " + std::to_string(static_cast<int>(timeout)) + " s"
               : outcome.signal    ? std::string("the backend crashed (") + strsignal(outcome.signal) + ", signal " +
                                      std::to_string(outcome.signal) + ") during this case"
                                : "the family's process failed (exit status " + std::to_string(outcome.exit_code) + ")";
    ++report.failed;
    std::cout << head << cases << " cases, then "
              << (outcome.timed_out ? "HUNG"
                  : outcome.signal  ? "CRASHED"
                                    : "FAILED")
              << " in " << printable(c.op) << " " << printable(c.dtype) << " " << printable(c.layout) << "; going on"
              << std::endl;
    report.cases.push_back(std::move(c));
  }
  return report;
}

}  // namespace

int run_conformance(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string backend = "cpu", family;
  bool verbose = false, in_process = false, child = false;
  double timeout = 600;
  options.add_options()("backend,b", po::value(&backend)->default_value("cpu"),
                        "backend name (cpu, cuda, ...) or path to a backend plugin .so")(
      "verbose,v", po::bool_switch(&verbose), "print every case, not only the per-op summary and failures")(
      "family", po::value(&family),
      "run one family of checks only (copy, unary, binary, where, reduce, matmul, softmax, indexing, random, "
      "semantics, timing, int8, conv, pool, optimizer, norm, compile, capture, autocast)")(
      "in-process", po::bool_switch(&in_process),
      "run in this process (faster to debug; a crashing kernel then ends the run)")(
      "timeout", po::value(&timeout)->default_value(600), "seconds a family may take before it counts as hung")(
      "child", po::bool_switch(&child), "(internal) run one family and stream its cases");
  po::variables_map vm;
  if (auto stop = parse_options("conformance",
                                "Runs every kernel of a backend on random inputs (dtypes, shapes, strides, "
                                "broadcasts) against the reference backend and prints a table. Each family of "
                                "checks runs in its own process: a kernel that crashes or hangs is reported with "
                                "its op, dtype and layout, and the run goes on.",
                                options, args, vm))
    return *stop;
  if (child) return run_family_child(backend, family);

  if (!backend.empty() && (backend.find('/') != std::string::npos || backend.find(".so") != std::string::npos))
    backend = std::filesystem::absolute(backend).string();
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  conformance::Report report;
  if (in_process || !family.empty() || ec) {
    conformance::Options kit_options;
    kit_options.family = family;
    report = conformance::run(backend_name(backend), kit_options);
  } else {
    backend_name(backend);  // a backend that cannot load is refused here, once
    report = run_isolated(backend, self, timeout);
  }
  conformance::print(report, std::cout, verbose);
  return report.failed == 0 ? 0 : 1;
}

}  // namespace nnplug
