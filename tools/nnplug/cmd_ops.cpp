// nnplug ops: the ops of the core's dispatcher (nnp_api.op_info), each with
// the autograd node it records and how an ONNX export writes it.
#include <iomanip>
#include <iostream>
#include <nnp/nnp.hpp>

#include "options.hpp"
#include "terminal_text.hpp"

namespace nnplug {
namespace {

const char* trace_form(nnp_op_trace trace) {
  switch (trace) {
    case NNP_OP_TRACE_NODES: return "nodes";
    case NNP_OP_TRACE_CONSTANT: return "constant";
    case NNP_OP_TRACE_REFUSED: return "refused";
  }
  return "?";
}

}  // namespace

int run_ops(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  po::variables_map vm;
  if (auto stop = parse_options("ops",
                                "Lists the ops every call reaches its kernel through: the name profiles and traces "
                                "show, the autograd node a differentiable call records, and the ONNX form (nodes "
                                "tagged with the op's name, a constant named after it, or refused).",
                                options, args, vm))
    return *stop;
  const nnp_api& api = nnp::api();
  std::cout << std::left << std::setw(34) << "op" << std::setw(48) << "backward" << "onnx\n";
  for (int32_t i = 0; i < api.op_count(); ++i) {
    nnp_op_info info{};
    info.struct_size = sizeof info;
    nnp::check(api.op_info(i, &info));
    std::cout << std::setw(34) << printable(info.name) << std::setw(48)
              << (*info.backward ? printable(info.backward) : std::string("-")) << trace_form(info.trace) << "\n";
  }
  return 0;
}

}  // namespace nnplug
