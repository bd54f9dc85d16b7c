// The backend conformance kit: runs every kernel of a backend through the
// public API on random inputs of many dtypes, shapes, strides and
// broadcasts, and compares each result with the reference backend's.
//
// Built only on nnp.hpp, so a vendor can run it on their backend with
// `nnplug conformance --backend /path/to/libvendor.so`.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace nnp::conformance {

// |actual - expected| <= atol + rtol * |expected| for every element; NaN
// must match NaN, infinities must match exactly.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

struct Case {
  std::string op;
  std::string dtype;
  std::string layout;  // what the inputs look like: shapes, strides, broadcast
  bool passed = false;
  double worst = 0;    // largest |error| / (atol + rtol * |expected|); <= 1 passes
  std::string detail;  // first mismatch or error text
};

struct Report {
  std::string backend;
  std::vector<Case> cases;
  int passed = 0;
  int failed = 0;
  std::string note;  // what was skipped and why ("" when nothing was)
};

// Stated tolerances per dtype (element-wise ops; GEMM and reductions scale
// atol with the number of terms summed).
Tolerance tolerance_for(const std::string& dtype);

// The kit's families of checks, in the order run() runs them: "copy",
// "unary", "binary", "where", "reduce", "matmul", "softmax", "indexing",
// "random", "semantics", "timing", "int8", "conv", "pool", "optimizer", "norm", "compile" (graph mode
// against eager reference: a backend's claims, nnp_backend 1.24), "capture" (captured training
// steps replayed against reference: the optional kernels a tape's passes call, 1.26). Each starts from its own seed, so a family run alone sees the
// inputs it sees in a whole run.
std::vector<std::string> families();

struct Options {
  std::string family;  // run only this family ("": all)
  // Called before each case runs: where a crashing backend was, for the
  // isolated runs of `nnplug conformance` (a crash kills the process).
  std::function<void(const std::string& op, const std::string& dtype, const std::string& layout)> on_start;
  // Called after each case is judged (progress; results as they come).
  std::function<void(const Case&)> on_case;
};

Report run(const std::string& backend, const Options& options = {});
void print(const Report& report, std::ostream& out, bool verbose);

}  // namespace nnp::conformance
