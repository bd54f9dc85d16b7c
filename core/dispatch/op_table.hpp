// The ops the dispatcher knows, each described once: the name profiles and
// traces show, the autograd node it records (nullptr: none), and how an ONNX
// export writes it. The dispatcher takes every name from here, so an op that
// is not in the table cannot be dispatched, and one that is shows in both.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>

namespace nnp::core::dispatch {

// How the tracer writes an op (nnp_op_trace of nnp.h).
enum class TraceForm : int32_t {
  NODES = NNP_OP_TRACE_NODES,        // ONNX nodes, each tagged with the op's name
  CONSTANT = NNP_OP_TRACE_CONSTANT,  // a constant, named after the op, written where it is used
  REFUSED = NNP_OP_TRACE_REFUSED,    // no ONNX form: the export is refused naming the op
};

// X(id, name, backward node, trace form). The unary, binary and reduce
// blocks follow nnp_unary_op, nnp_binary_op and nnp_reduce_op.
#define NNP_DISPATCHED_OPS(X)                                                              \
  X(NEG, "neg", "NegBackward", NODES)                                                      \
  X(ABS, "abs", "AbsBackward", NODES)                                                      \
  X(EXP, "exp", "ExpBackward", NODES)                                                      \
  X(LOG, "log", "LogBackward", NODES)                                                      \
  X(SQRT, "sqrt", "SqrtBackward", NODES)                                                   \
  X(RSQRT, "rsqrt", "RsqrtBackward", NODES)                                                \
  X(SIN, "sin", "SinBackward", NODES)                                                      \
  X(COS, "cos", "CosBackward", NODES)                                                      \
  X(TANH, "tanh", "TanhBackward", NODES)                                                   \
  X(SIGMOID, "sigmoid", "SigmoidBackward", NODES)                                          \
  X(RELU, "relu", "ReluBackward", NODES)                                                   \
  X(GELU, "gelu", "GeluBackward", NODES)                                                   \
  X(SILU, "silu", "SiluBackward", NODES)                                                   \
  X(SIGN, "sign", "SignBackward", NODES)                                                   \
  X(ERF, "erf", "ErfBackward", NODES)                                                      \
  X(ROUND, "round", "RoundBackward", NODES)                                                \
  X(ADD, "add", "AddBackward", NODES)                                                      \
  X(SUB, "sub", "SubBackward", NODES)                                                      \
  X(MUL, "mul", "MulBackward", NODES)                                                      \
  X(DIV, "div", "DivBackward", NODES)                                                      \
  X(POW, "pow", "PowBackward", NODES)                                                      \
  X(MAXIMUM, "maximum", "MaximumBackward", NODES)                                          \
  X(MINIMUM, "minimum", "MinimumBackward", NODES)                                          \
  X(EQ, "eq", nullptr, NODES)                                                              \
  X(NE, "ne", nullptr, NODES)                                                              \
  X(LT, "lt", nullptr, NODES)                                                              \
  X(LE, "le", nullptr, NODES)                                                              \
  X(GT, "gt", nullptr, NODES)                                                              \
  X(GE, "ge", nullptr, NODES)                                                              \
  X(SUM, "sum", "SumBackward", NODES)                                                      \
  X(MEAN, "mean", "MeanBackward", NODES)                                                   \
  X(MAX, "max", "AmaxBackward", NODES)                                                     \
  X(MIN, "min", "AminBackward", NODES)                                                     \
  X(ARGMAX, "argmax", nullptr, NODES)                                                      \
  X(ARGMIN, "argmin", nullptr, NODES)                                                      \
  X(VAR, "var", "VarBackward", NODES)                                                      \
  X(WHERE, "where", "WhereBackward", NODES)                                                \
  X(SOFTMAX, "softmax", "SoftmaxBackward", NODES)                                          \
  X(LOG_SOFTMAX, "log_softmax", "LogSoftmaxBackward", NODES)                               \
  X(MATMUL, "matmul", "MmBackward", NODES)                                                 \
  X(CONV2D, "conv2d", "ConvolutionBackward0", NODES)                                       \
  X(MAX_POOL2D, "max_pool2d", nullptr, NODES)                                              \
  X(VIEW, "view", "ViewBackward", NODES)                                                   \
  X(RESHAPE, "reshape", "ReshapeBackward", NODES)                                          \
  X(SQUEEZE, "squeeze", "SqueezeBackward", NODES)                                          \
  X(UNSQUEEZE, "unsqueeze", "UnsqueezeBackward", NODES)                                    \
  X(TRANSPOSE, "transpose", "TransposeBackward", NODES)                                    \
  X(PERMUTE, "permute", "PermuteBackward", NODES)                                          \
  X(SLICE, "slice", "SliceBackward", NODES)                                                \
  X(EXPAND, "expand", "ExpandBackward", NODES)                                             \
  X(CONTIGUOUS, "contiguous", "ContiguousBackward", NODES)                                 \
  X(CLONE, "clone", "CloneBackward", NODES)                                                \
  X(TO, "to", "ToCopyBackward", NODES)                                                     \
  X(DETACH, "detach", nullptr, NODES)                                                      \
  X(COPY, "copy_", nullptr, REFUSED)                                                       \
  X(ASSIGN, "assign", "FillBackward", REFUSED)                                             \
  X(CAT, "cat", "CatBackward", NODES)                                                      \
  X(INDEX_SELECT, "index_select", "IndexSelectBackward", NODES)                            \
  X(GATHER, "gather", "GatherBackward", NODES)                                             \
  X(SCATTER_ADD, "scatter_add", "ScatterAddBackward", NODES)                               \
  X(FULL, "full", nullptr, CONSTANT)                                                       \
  X(ARANGE, "arange", nullptr, CONSTANT)                                                   \
  X(FROM_HOST, "from_host", nullptr, CONSTANT)                                             \
  X(RANDOM, "random", nullptr, REFUSED)                                                    \
  X(QUANTIZE_PER_TENSOR, "quantize_per_tensor", nullptr, REFUSED)                          \
  X(QUANTIZE_PER_CHANNEL, "quantize_per_channel", nullptr, REFUSED)                        \
  X(DEQUANTIZE_PER_TENSOR, "dequantize_per_tensor", nullptr, REFUSED)                      \
  X(DEQUANTIZE_PER_CHANNEL, "dequantize_per_channel", nullptr, REFUSED)                    \
  X(MATMUL_I8, "matmul_i8", nullptr, REFUSED)                                              \
  X(FAKE_QUANTIZE_PER_TENSOR, "fake_quantize_per_tensor_affine",                           \
    "FakeQuantizePerTensorAffineCachemaskBackward", REFUSED)                               \
  X(FAKE_QUANTIZE_PER_CHANNEL, "fake_quantize_per_channel_affine",                         \
    "FakeQuantizePerChannelAffineCachemaskBackward", REFUSED)                              \
  X(SGD_STEP, "sgd_step", nullptr, REFUSED)                                                \
  X(LAYER_NORM, "layer_norm", nullptr, NODES)                                              \
  X(GEMM_EPILOGUE, "gemm_epilogue", nullptr, NODES)                                        \
  X(QUANTIZED_MATMUL, "quantized_matmul", nullptr, REFUSED)                                \
  X(ELEMENTWISE_CHAIN, "elementwise_chain", nullptr, NODES)                                \
  X(ATTENTION, "attention", nullptr, NODES)                                                \
  X(CONV2D_PACKED, "conv2d_packed", nullptr, NODES)                                        \
  X(GEMM_PACKED, "gemm_packed", nullptr, NODES)                                            \
  X(QUANTIZED_CONV2D_PACKED, "quantized_conv2d_packed", nullptr, NODES)                    \
  X(ADD_LAYER_NORM, "add_layer_norm", nullptr, NODES)                                      \
  X(CONV2D_INTEGER_PACKED, "conv2d_integer_packed", nullptr, NODES)                        \
  X(DYNAMIC_QUANTIZE_LINEAR, "dynamic_quantize_linear", nullptr, NODES)                    \
  X(AMP_UNSCALE, "_amp_foreach_non_finite_check_and_unscale_", nullptr, REFUSED)

enum class OpId : int32_t {
#define NNP_OP_ID(id, name, backward, form) id,
  NNP_DISPATCHED_OPS(NNP_OP_ID)
#undef NNP_OP_ID
      COUNT
};

struct OpSchema {
  const char* name;
  const char* backward;  // nullptr: the op records no node
  TraceForm trace;
};

extern const OpSchema g_op_table[static_cast<int32_t>(OpId::COUNT)];

inline const OpSchema& schema(OpId id) { return g_op_table[static_cast<int32_t>(id)]; }
inline const char* op_name(OpId id) { return schema(id).name; }

// The blocks that follow the C enums; each checks its operand is in range.
OpId unary_id(nnp_unary_op op);
OpId binary_id(nnp_binary_op op);
OpId reduce_id(nnp_reduce_op op);

}  // namespace nnp::core::dispatch
