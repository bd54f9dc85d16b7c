// One case of ONNX's own backend test suite (Debian's libonnx-testdata: a
// folder with model.onnx and test_data_set_0/{input,output}_N.pb), run by
// nnplug or by ONNX Runtime and compared with the expected outputs as ONNX's
// runner compares them: shapes and element types equal, integers exact,
// floating values within rtol 1e-3 and atol 1e-7, NaN equal to NaN.
//   onnx_case CASE_DIR                 nnplug (nnp::onnx::load, call_values)
//   onnx_case --runtime ort CASE_DIR   ONNX Runtime, through tests/onnx_runtime/run_case.js
// Prints one line, "VERDICT: why", and exits with the verdict's code:
// 0 pass, 10 wrong, 11 refused at load, 12 refused at run, 13 not tensors
// (sequence, map or optional inputs or outputs). A crash or a hang is the
// caller's to see (run_suite.py runs each case in its own process with a
// timeout). Random ops (dropout in training mode, bernoulli) are checked for
// their statistics, not their values (random_case.hpp).
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "case_tensor.hpp"
#include "random_case.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using nnp::suite::HostTensor;

enum Verdict { kPass = 0, kWrong = 10, kRefusedAtLoad = 11, kRefusedAtRun = 12, kNotTensors = 13 };

const char* verdict_name(Verdict v) {
  switch (v) {
    case kPass: return "pass";
    case kWrong: return "wrong";
    case kRefusedAtLoad: return "refused at load";
    case kRefusedAtRun: return "refused at run";
    case kNotTensors: return "not tensors";
  }
  return "?";
}

[[noreturn]] void finish(Verdict v, const std::string& why) {
  std::string line = why.substr(0, 600);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::printf("%s: %s\n", verdict_name(v), line.c_str());
  std::fflush(stdout);
  std::_Exit(v);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The case's inputs and expected outputs (test_data_set_0), in file order.
std::vector<HostTensor> read_set(const fs::path& folder, const char* prefix) {
  std::vector<HostTensor> out;
  for (int i = 0;; ++i) {
    const fs::path file = folder / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(file)) break;
    ::onnx::TensorProto t;
    if (!t.ParseFromString(read_file(file))) finish(kNotTensors, file.string() + " is not a TensorProto");
    out.push_back(nnp::suite::from_proto(t));
  }
  return out;
}

// Whether every graph input and output is a tensor (not a sequence, map or optional).
std::string non_tensor_value(const ::onnx::ModelProto& model) {
  auto check = [](const ::onnx::ValueInfoProto& v) { return v.type().has_tensor_type() ? "" : v.name(); };
  for (const auto& v : model.graph().input())
    if (!check(v).empty()) return "input '" + v.name() + "' is not a tensor";
  for (const auto& v : model.graph().output())
    if (!check(v).empty()) return "output '" + v.name() + "' is not a tensor";
  return "";
}

// nnplug's run: load (refusals here are "at load"), call (refusals "at run").
std::vector<HostTensor> run_nnplug(const fs::path& model, const std::vector<HostTensor>& inputs) {
  nnp::nn::ModuleHandle module;
  try {
    module = nnp::onnx::load(model.string());
  } catch (const std::exception& e) {
    finish(kRefusedAtLoad, e.what());
  }
  std::vector<HostTensor> out;
  try {
    module.eval();
    std::vector<nnp::Value> args;
    for (const HostTensor& t : inputs) args.emplace_back(nnp::suite::to_nnp(t));
    nnp::nn::Outputs results = module.call_values(args);
    for (const nnp::Value& v : results) {
      if (!v.isTensor()) finish(kRefusedAtRun, "an output is not a tensor");
      out.push_back(nnp::suite::from_nnp(v.toTensor()));
    }
  } catch (const std::exception& e) {
    finish(kRefusedAtRun, e.what());
  }
  return out;
}

// ONNX Runtime's run, in node (tests/onnx_runtime/run_case.js): the inputs
// and outputs travel as raw little-endian files in a scratch folder.
std::vector<HostTensor> run_ort(const fs::path& model, const std::vector<HostTensor>& inputs) {
  const char* client = std::getenv("NNP_ORT_CLIENT_DIR");
  if (!client) finish(kRefusedAtLoad, "NNP_ORT_CLIENT_DIR is not set");
  char scratch_template[] = "/tmp/nnp_ort_case_XXXXXX";
  if (!mkdtemp(scratch_template)) finish(kRefusedAtLoad, "cannot make a scratch folder");
  const fs::path scratch(scratch_template);
  json request = {{"model", model.string()}, {"inputs", json::array()}, {"folder", scratch.string()}};
  ::onnx::ModelProto proto;
  proto.ParseFromString(read_file(model));
  std::vector<std::string> names;
  for (const auto& v : proto.graph().input()) {
    bool initialiser = false;
    for (const auto& t : proto.graph().initializer()) initialiser |= t.name() == v.name();
    if (!initialiser) names.push_back(v.name());
  }
  for (size_t i = 0; i < inputs.size() && i < names.size(); ++i) {
    const std::string file = (scratch / ("in_" + std::to_string(i) + ".bin")).string();
    std::ofstream(file, std::ios::binary) << inputs[i].bytes;
    request["inputs"].push_back({{"name", names[i]},
                                 {"elem_type", inputs[i].elem_type},
                                 {"dims", inputs[i].dims},
                                 {"file", file}});
  }
  std::ofstream(scratch / "request.json") << request.dump();
  const std::string command = "node '" + std::string(client) + "/run_case.js' '" + (scratch / "request.json").string() +
                              "' > '" + (scratch / "response.json").string() + "' 2>/dev/null";
  const int status = std::system(command.c_str());
  json response;
  try {
    response = json::parse(read_file(scratch / "response.json"));
  } catch (const std::exception&) {
    fs::remove_all(scratch);
    if (WIFSIGNALED(status)) std::raise(WTERMSIG(status));
    finish(kRefusedAtRun, "ONNX Runtime's client gave no answer (exit " + std::to_string(status) + ")");
  }
  if (response.contains("error")) {
    fs::remove_all(scratch);
    finish(response.value("stage", "") == "load" ? kRefusedAtLoad : kRefusedAtRun, response["error"].get<std::string>());
  }
  std::vector<HostTensor> out;
  for (const json& o : response["outputs"]) {
    HostTensor t;
    t.elem_type = o["elem_type"].get<int32_t>();
    t.dims = o["dims"].get<std::vector<int64_t>>();
    t.bytes = read_file(o["file"].get<std::string>());
    out.push_back(std::move(t));
  }
  fs::remove_all(scratch);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string runtime = "nnplug";
  int arg = 1;
  if (argc == 4 && std::string(argv[1]) == "--runtime") {
    runtime = argv[2];
    arg = 3;
  }
  if (arg != argc - 1 || (runtime != "nnplug" && runtime != "ort")) {
    std::fprintf(stderr, "usage: onnx_case [--runtime nnplug|ort] CASE_DIR\n");
    return 2;
  }
  const fs::path folder(argv[arg]);
  const fs::path model = folder / "model.onnx";
  ::onnx::ModelProto proto;
  if (!proto.ParseFromString(read_file(model))) finish(kRefusedAtLoad, "model.onnx does not parse");
  if (const std::string why = non_tensor_value(proto); !why.empty()) finish(kNotTensors, why);
  std::vector<HostTensor> inputs = read_set(folder / "test_data_set_0", "input_");
  std::vector<HostTensor> expected = read_set(folder / "test_data_set_0", "output_");
  // ONNX 1.12 wrote bfloat16 data as uint16 (NumPy has no bfloat16): the
  // model's declared type says what the bits are.
  auto declared = [](const auto& values, std::vector<HostTensor>& data, const std::vector<std::string>& skip) {
    size_t i = 0;
    for (const ::onnx::ValueInfoProto& v : values) {
      if (std::find(skip.begin(), skip.end(), v.name()) != skip.end()) continue;
      if (i < data.size() && data[i].elem_type == ::onnx::TensorProto::UINT16 &&
          v.type().tensor_type().elem_type() == ::onnx::TensorProto::BFLOAT16)
        data[i].elem_type = ::onnx::TensorProto::BFLOAT16;
      ++i;
    }
  };
  std::vector<std::string> initialisers;
  for (const auto& t : proto.graph().initializer()) initialisers.push_back(t.name());
  declared(proto.graph().input(), inputs, initialisers);
  declared(proto.graph().output(), expected, {});
  const std::vector<HostTensor> got = runtime == "ort" ? run_ort(model, inputs) : run_nnplug(model, inputs);
  if (got.size() < expected.size())
    finish(kWrong, std::to_string(got.size()) + " outputs for " + std::to_string(expected.size()));
  const std::string name = folder.filename().string();
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string why = nnp::suite::is_random_case(name)
                                ? nnp::suite::check_random_output(name, i, inputs, expected[i], got[i])
                                : nnp::suite::compare(expected[i], got[i]);
    if (!why.empty()) finish(kWrong, "output " + std::to_string(i) + ": " + why);
  }
  finish(kPass, std::to_string(expected.size()) + " outputs agree");
}
