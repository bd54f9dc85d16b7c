// nnplug export: a checkpoint's model (or a model spec's, freshly
// initialised) written as an ONNX file, traced on random inputs of the
// per-sample shape with a symbolic batch axis (nnp::onnx::export_model).
// The file takes the inputs the model takes: features already multiplied by
// the checkpoint's input scale.
#include <cstdio>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>

#include "checkpoint.hpp"
#include "options.hpp"
#include "training.hpp"

namespace nnplug {

int run_export(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string checkpoint, model_path, input_shape, out;
  int64_t batch = 3, opset = 17;
  bool fixed_batch = false;
  options.add_options()("checkpoint,c", po::value(&checkpoint), "checkpoint written by nnplug train")(
      "model,m", po::value(&model_path),
      "model spec (JSON file): the checkpoint's weights in it, or fresh ones without --checkpoint")(
      "input-shape", po::value(&input_shape), "per-sample input shape, e.g. 1,28,28 (default: the checkpoint's)")(
      "batch", po::value(&batch)->default_value(3), "batch size of the trace (not 1: it tells the batch apart)")(
      "opset", po::value(&opset)->default_value(17), "ONNX opset, 13 to 17")(
      "fixed-batch", po::bool_switch(&fixed_batch), "write the traced batch size instead of a symbolic one")(
      "out,o", po::value(&out)->required(), "the ONNX file to write");
  po::variables_map vm;
  if (auto stop =
          parse_options("export", "Writes a checkpoint's or a model spec's model as an ONNX file.", options, args, vm))
    return *stop;
  if (checkpoint.empty() && model_path.empty()) {
    std::fprintf(stderr, "nnplug export: give --checkpoint, --model, or both\n");
    return 2;
  }
  if (batch < 1) {
    std::fprintf(stderr, "nnplug export: --batch %lld must be at least 1\n", static_cast<long long>(batch));
    return 2;
  }
  nnp::nn::ModuleHandle model;
  float scale = 1;
  if (!checkpoint.empty()) {
    TrainCheckpoint c = load_train_checkpoint(checkpoint);
    scale = c.scale;
    model = model_path.empty() ? nnp::nn::model_from_spec(c.model_spec) : build_model(model_path);
    model.load_state_dict(c.model);
    if (input_shape.empty()) input_shape = c.input_shape;
  } else {
    model = build_model(model_path);
  }
  if (input_shape.empty()) {
    std::fprintf(stderr, "nnplug export: give --input-shape (the per-sample shape, e.g. 1,28,28)\n");
    return 2;
  }
  nnp::Shape shape = parse_shape(input_shape, "--input-shape");
  shape.insert(shape.begin(), batch);
  nnp::onnx::ExportOptions o;
  o.opset = opset;
  o.fixed_batch = fixed_batch;
  nnp::onnx::export_model(model, {nnp::randn(shape)}, out, o);
  std::printf("wrote %s: input \"input\" %s (features times the input scale %s), opset %lld%s\n", out.c_str(),
              nnp::detail::shape_text(shape).c_str(), nnp::nn::format_float(scale).c_str(),
              static_cast<long long>(opset), fixed_batch ? ", fixed batch" : ", batch axis 0 symbolic");
  return 0;
}

}  // namespace nnplug
