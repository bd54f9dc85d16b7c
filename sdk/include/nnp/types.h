/*
 * types.h - the types an application and a plugin share: the ABI version,
 * status codes, element types, devices, the op kinds of the kernel table and
 * of collectives, and the parameters of the fused kernels.
 *
 * A backend or communication-backend vendor reads this header and plugin.h;
 * an application reads nnp.h, which includes this one. Every struct starts
 * with `size_t struct_size` and grows only at the end; each released size
 * stands under its struct; what came after 1.0 says "(since 1.N)".
 *
 * This header is C99.
 */
#ifndef NNP_TYPES_H
#define NNP_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A change of major breaks compatibility; a minor only appends to tables and
 * structs (sdk/README.md, "ABI and versioning"). What came after 1.0 says
 * "(since 1.N)", one entry or a whole section ("---- since 1.N ----"); check
 * api->abi_minor, or struct_size, before using it. */
#define NNP_ABI_MAJOR 1
#define NNP_ABI_MINOR 29

/* The size of a struct up to and including `field`: how the size of each
 * released layout is written (NNP_API_SIZE_1_0, NNP_BACKEND_SIZE_1_0, ...),
 * so a reader checks struct_size against a name, not a number. */
#define NNP_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

/* The most dimensions a tensor may have. */
#define NNP_MAX_DIMS 8

#if defined(_WIN32)
#define NNP_EXPORT __declspec(dllexport)
#else
#define NNP_EXPORT __attribute__((visibility("default")))
#endif

/* ---- status codes ------------------------------------------------------ */

typedef int32_t nnp_status;
enum {
  NNP_OK = 0,
  NNP_INVALID_ARGUMENT = 1,
  NNP_SHAPE_MISMATCH = 2,
  NNP_DTYPE_MISMATCH = 3,
  NNP_DEVICE_MISMATCH = 4,
  NNP_OUT_OF_MEMORY = 5,
  NNP_DEVICE_ERROR = 6,
  NNP_NOT_FOUND = 7,
  NNP_UNIMPLEMENTED = 8,
  NNP_ABI_MISMATCH = 9,
  NNP_IO_ERROR = 10,
  NNP_CORRUPT_DATA = 11,
  NNP_INTERNAL = 12,
  /* (since 1.10) A collective or its rendezvous ran past its timeout: a peer
   * stalled, died or never came. The message names the group and rank. */
  NNP_TIMEOUT = 13,
  /* (since 1.10) A collective failed: a peer closed its connection, or the ranks
   * disagree (world size, rank, shapes). */
  NNP_COMM_ERROR = 14
};

/* ---- element types ----------------------------------------------------- */

typedef int32_t nnp_dtype;
enum {
  NNP_F32 = 0,
  NNP_F64 = 1,
  NNP_F16 = 2,
  NNP_BF16 = 3,
  NNP_I64 = 4,
  NNP_I32 = 5,
  NNP_U8 = 6,
  NNP_BOOL = 7,
  /* (since 1.7) Signed 8-bit integers: the values of quantized tensors (qint8,
   * and quint8 shifted by -128). Only backends whose nnp_kernels is at
   * least NNP_KERNELS_SIZE_1_7 are given them; the core refuses to place
   * one on an older backend. */
  NNP_I8 = 8,
  /* (since 1.17) 16-bit signed and 16-, 32- and 64-bit unsigned integers, for
   * storage, copies and conversions, comparisons and the integer ops (what
   * ONNX models hold in them). Only backends that declare them
   * (nnp_backend.dtypes) are given them. */
  NNP_I16 = 9,
  NNP_U16 = 10,
  NNP_U32 = 11,
  NNP_U64 = 12,
  NNP_DTYPE_COUNT = 13 /* number of dtypes this version knows */
};

/* (since 1.16) Sets of dtypes, one bit each (nnp_backend.dtypes,
 * nnp_backend_info.dtypes), named by the ABI version that defined them. */
#define NNP_DTYPE_BIT(dtype) (1u << (dtype))
#define NNP_DTYPES_1_0 0xFFu                              /* f32 to bool */
#define NNP_DTYPES_1_7 (NNP_DTYPES_1_0 | NNP_DTYPE_BIT(NNP_I8)) /* and i8 */
#define NNP_DTYPES_1_17                                                                           \
  (NNP_DTYPES_1_7 | NNP_DTYPE_BIT(NNP_I16) | NNP_DTYPE_BIT(NNP_U16) | NNP_DTYPE_BIT(NNP_U32) | \
   NNP_DTYPE_BIT(NNP_U64)) /* and i16, u16, u32, u64 */

/* ---- devices ------------------------------------------------------------ */

/* A device is a loaded backend (its id in this process) and an index on it.
 * Ids are process-local: store device names ("cuda:0"), not ids. */
typedef struct nnp_device {
  int32_t backend;
  int32_t index;
} nnp_device;

typedef struct nnp_device_info {
  size_t struct_size;
  const char* backend;     /* "cpu", "cuda", ... */
  const char* description; /* e.g. the processor or GPU model */
  uint64_t total_memory;   /* bytes, 0 when unknown */
  int32_t score;           /* higher is preferred by "auto" */
} nnp_device_info;
#define NNP_DEVICE_INFO_SIZE_1_0 NNP_SIZE_THROUGH(nnp_device_info, score)

/* (since 1.28) What tensors hold on one device (memory_stats), as PyTorch's
 * torch.cuda.memory_stats counts it for every device: the bytes of the
 * storage nnplug allocated for tensors and has not freed, at the size the
 * core asked of the backend (a backend's own rounding and the blocks its
 * allocator keeps cached are not in it, nor memory nnplug did not allocate:
 * DLPack imports). */
typedef struct nnp_memory_stats {
  size_t struct_size;
  int64_t allocated_bytes;      /* held by tensors now */
  int64_t peak_allocated_bytes; /* the most held at once since the process began or reset_peak_memory_stats */
  int64_t allocations;          /* storages held now */
  int64_t total_allocations;    /* storages allocated since the process began */
} nnp_memory_stats;

/* Backend flags (nnp_backend.flags, nnp_backend_info.flags). */
enum {
  /* Device memory is ordinary host memory: tensor_data() may be read and
   * written by the CPU, and the core skips staging copies. */
  NNP_BACKEND_HOST_MEMORY = 1u << 0,
  /* (since 1.13) The optional sgd_step kernel steps in place: it takes param_out
   * identical to param and buffer_out identical to buffer, and never fails
   * on the views the core hands it (nnp_kernels.sgd_step in plugin.h). */
  NNP_BACKEND_SGD_IN_PLACE = 1u << 1,
  /* (since 1.24) In nnp_backend_info only, set by the core: the backend
   * compiles graphs (nnp_backend.capability, compile, execute, release).
   * A backend's own flags cannot claim it (the bit is cleared there). */
  NNP_BACKEND_COMPILES_GRAPHS = 1u << 2
};

/* (since 1.24) The required kernel slots by number, in the order of
 * plugin.h's NNP_KERNELS_REQUIRED_SLOTS, for nnp_backend.missing_kernels and
 * nnp_backend_info.missing_kernels. */
typedef int32_t nnp_kernel_slot;
enum {
  NNP_KERNEL_COPY = 0,
  NNP_KERNEL_FILL,
  NNP_KERNEL_UNARY,
  NNP_KERNEL_BINARY,
  NNP_KERNEL_WHERE,
  NNP_KERNEL_REDUCE,
  NNP_KERNEL_GEMM,
  NNP_KERNEL_SOFTMAX,
  NNP_KERNEL_INDEX_SELECT,
  NNP_KERNEL_GATHER,
  NNP_KERNEL_SCATTER_ADD,
  NNP_KERNEL_RANDOM,
  NNP_KERNEL_REQUIRED_COUNT
};
#define NNP_KERNEL_SLOT_BIT(slot) (1u << (slot))
/* The slot's name in nnp_kernels ("where"), or "?" for another number. */
static inline const char* nnp_kernel_slot_name(nnp_kernel_slot slot) {
  static const char* const names[NNP_KERNEL_REQUIRED_COUNT] = {
      "copy", "fill", "unary", "binary", "where", "reduce", "gemm", "softmax", "index_select", "gather", "scatter_add",
      "random"};
  return slot >= 0 && slot < NNP_KERNEL_REQUIRED_COUNT ? names[slot] : "?";
}

typedef struct nnp_backend_info {
  size_t struct_size;
  const char* name;
  const char* plugin_path; /* the shared library that registered it */
  int32_t score;
  int32_t device_count;
  /* When device_count is 0: why (the runtime's own error text), else "". */
  const char* unavailable_reason;
  uint32_t flags; /* NNP_BACKEND_* (since 1.1) */
  /* (since 1.16) What its kernels compute (nnp_backend.dtypes and
   * unary_ops as the core reads them: a backend that declares nothing has
   * ABI 1.0's sets, or 1.7's if built against 1.7 to 1.15). */
  uint32_t dtypes;
  uint32_t unary_ops;
  /* (since 1.24) The required kernel slots the backend declared it lacks
   * (nnp_backend.missing_kernels): their ops run on the cpu backend, the
   * operands copied through host memory. */
  uint32_t missing_kernels;
} nnp_backend_info;
#define NNP_BACKEND_INFO_SIZE_1_0 NNP_SIZE_THROUGH(nnp_backend_info, unavailable_reason)
#define NNP_BACKEND_INFO_SIZE_1_1 NNP_SIZE_THROUGH(nnp_backend_info, flags)
#define NNP_BACKEND_INFO_SIZE_1_16 NNP_SIZE_THROUGH(nnp_backend_info, unary_ops)
#define NNP_BACKEND_INFO_SIZE_1_24 NNP_SIZE_THROUGH(nnp_backend_info, missing_kernels)

/* One file the plugin loader looked at. Strings live until process exit. */
typedef struct nnp_plugin_info {
  size_t struct_size;
  const char* path;
  const char* name; /* "" when the plugin was refused before naming itself */
  const char* version;
  int32_t loaded;          /* 1 loaded, 0 refused */
  nnp_status status;       /* why it was refused */
  const char* reason;      /* "" when loaded */
  const char* description; /* the plugin's one-line description, or "" (since 1.1) */
} nnp_plugin_info;
#define NNP_PLUGIN_INFO_SIZE_1_0 NNP_SIZE_THROUGH(nnp_plugin_info, reason)
#define NNP_PLUGIN_INFO_SIZE_1_1 NNP_SIZE_THROUGH(nnp_plugin_info, description)

/* ---- collectives (since 1.10) ------------------------------------------------- */

/* A group of processes that run collectives together (PyTorch's process
 * group), through a communication backend: a plugin's nnp_comm. */
typedef struct nnp_process_group nnp_process_group;
/* A collective started asynchronously: wait for it, test it, release it. */
typedef struct nnp_work nnp_work;

/* How all_reduce and reduce_scatter combine the ranks' values. */
typedef int32_t nnp_comm_op;
enum {
  NNP_COMM_SUM = 0,
  NNP_COMM_AVG = 1, /* the sum divided by the world size; floating dtypes only */
  NNP_COMM_MAX = 2,
  NNP_COMM_MIN = 3
};

typedef struct nnp_process_group_options {
  size_t struct_size;
  const char* comm; /* the communication backend's name: "gloo", "nccl", a plugin's */
  int32_t rank;     /* 0 <= rank < world_size */
  int32_t world_size;
  /* Where the ranks meet: "file:///a/folder" (a folder every rank can
   * reach, one file a key), or "tcp://host:port" (rank 0 serves a key-value
   * store there; the others connect to it). */
  const char* init_method;
  /* Bounds the rendezvous and every collective's wait; 0 = 300000 (five
   * minutes, PyTorch's default). */
  int64_t timeout_ms;
  /* The device of the tensors to come ("cuda:1", LOCAL_RANK's GPU); NULL =
   * device 0 of the first loaded backend the communication backend serves. */
  const char* device;
  /* (since 1.16) The job's secret for a tcp:// store, the same on every
   * rank (16 to 4096 bytes): each connection proves it (HMAC-SHA256
   * challenge-response) before the store reads a request, and rank 0 serves
   * only the address the ranks use. NULL = the NNP_JOB_TOKEN environment
   * variable (`nnplug launch` sets it); a tcp:// store with neither is
   * refused. Unused by file:// stores. */
  const char* job_token;
} nnp_process_group_options;
#define NNP_PROCESS_GROUP_OPTIONS_SIZE_1_10 NNP_SIZE_THROUGH(nnp_process_group_options, device)
#define NNP_PROCESS_GROUP_OPTIONS_SIZE_1_16 NNP_SIZE_THROUGH(nnp_process_group_options, job_token)

/* One registered communication backend. Strings live until process exit. */
typedef struct nnp_comm_info {
  size_t struct_size;
  const char* name;
  const char* plugin_path;
  const char* backends; /* the device backends whose tensors it moves: "cpu,reference" */
  /* (since 1.11) NULL when groups can be formed, else why not (no device, no runtime). */
  const char* unavailable_reason;
} nnp_comm_info;
#define NNP_COMM_INFO_SIZE_1_10 NNP_SIZE_THROUGH(nnp_comm_info, backends)
#define NNP_COMM_INFO_SIZE_1_11 NNP_SIZE_THROUGH(nnp_comm_info, unavailable_reason)

/* ---- operations --------------------------------------------------------- */

typedef int32_t nnp_unary_op;
enum {
  NNP_UNARY_NEG = 0,
  NNP_UNARY_ABS,
  NNP_UNARY_EXP,
  NNP_UNARY_LOG,
  NNP_UNARY_SQRT,
  NNP_UNARY_RSQRT,
  NNP_UNARY_SIN,
  NNP_UNARY_COS,
  NNP_UNARY_TANH,
  NNP_UNARY_SIGMOID,
  NNP_UNARY_RELU,
  NNP_UNARY_GELU, /* exact (erf) form, PyTorch's default */
  NNP_UNARY_SILU,
  NNP_UNARY_SIGN,
  NNP_UNARY_ERF,
  /* (since 1.7) To the nearest integer, ties to even (torch.round). Only asked
   * of floating dtypes, and only of backends whose nnp_kernels is at least
   * NNP_KERNELS_SIZE_1_7. */
  NNP_UNARY_ROUND,
  NNP_UNARY_COUNT
};
/* (since 1.16) Sets of unary ops, one bit each (nnp_backend.unary_ops). */
#define NNP_UNARY_OP_BIT(op) (1u << (op))
#define NNP_UNARY_OPS_1_0 0x7FFFu                                  /* neg to erf */
#define NNP_UNARY_OPS_1_7 (NNP_UNARY_OPS_1_0 | NNP_UNARY_OP_BIT(NNP_UNARY_ROUND)) /* and round */

typedef int32_t nnp_binary_op;
enum {
  NNP_BINARY_ADD = 0,
  NNP_BINARY_SUB,
  NNP_BINARY_MUL,
  NNP_BINARY_DIV,
  NNP_BINARY_POW,
  NNP_BINARY_MAXIMUM,
  NNP_BINARY_MINIMUM,
  NNP_BINARY_EQ, /* comparisons produce NNP_BOOL */
  NNP_BINARY_NE,
  NNP_BINARY_LT,
  NNP_BINARY_LE,
  NNP_BINARY_GT,
  NNP_BINARY_GE,
  NNP_BINARY_COUNT
};

typedef int32_t nnp_reduce_op;
enum {
  NNP_REDUCE_SUM = 0,
  NNP_REDUCE_MEAN,
  NNP_REDUCE_MAX,
  NNP_REDUCE_MIN,
  NNP_REDUCE_ARGMAX, /* produces NNP_I64 */
  NNP_REDUCE_ARGMIN, /* produces NNP_I64 */
  NNP_REDUCE_VAR,    /* uses the correction argument (1 = unbiased) */
  NNP_REDUCE_COUNT
};

typedef int32_t nnp_random_kind;
enum {
  NNP_RANDOM_UNIFORM = 0, /* [a, b) */
  NNP_RANDOM_NORMAL,      /* mean a, standard deviation b */
  NNP_RANDOM_INT,         /* integers in [a, b) */
  NNP_RANDOM_COUNT
};

/* (since 1.9) The geometry of a 2-D convolution (nnp_kernels.conv2d, nnp_api.conv2d_fused). */
typedef struct nnp_conv2d_params {
  size_t struct_size;
  int64_t stride[2];   /* height, width; >= 1 */
  int64_t padding[2];  /* zeros before and after, per spatial axis; >= 0 */
  int64_t dilation[2]; /* >= 1 */
  int64_t groups;      /* >= 1, dividing both channel counts */
  /* (since 1.18) What each output becomes after the bias: NNP_ACTIVATION_NONE,
   * or NNP_ACTIVATION_RELU (max(0, v); a NaN stays NaN). Read only where
   * struct_size >= NNP_CONV2D_PARAMS_SIZE_1_18 (NONE otherwise), and only where
   * no gradient is recorded: graph mode fuses a ReLU into the convolution
   * before it. */
  int64_t activation;
} nnp_conv2d_params;
#define NNP_CONV2D_PARAMS_SIZE_1_9 NNP_SIZE_THROUGH(nnp_conv2d_params, groups)
#define NNP_CONV2D_PARAMS_SIZE_1_18 NNP_SIZE_THROUGH(nnp_conv2d_params, activation)
/* (since 1.18) What a fused kernel applies to each output as it writes it
 * (nnp_conv2d_params.activation, nnp_kernels.gemm_epilogue). */
enum { NNP_ACTIVATION_NONE = 0, NNP_ACTIVATION_RELU = 1 };

/* (since 1.22) The quantization around a static int8 convolution
 * (nnp_kernels.quantized_conv2d_packed): how its f32 input becomes int8
 * offsets, and how its f32 result is rounded to the output's quint8 grid
 * (PyTorch's fake quantization, each step rounded to f32). */
typedef struct nnp_quantized_conv2d_params {
  size_t struct_size;
  float input_inv_scale;     /* 1 / the input's scale: positive, finite */
  int32_t input_offset_min;  /* -(the input's zero point): -128 to 0 */
  float output_scale;        /* positive, finite */
  float output_inv_scale;    /* 1.0f / output_scale */
  int32_t output_zero_point; /* within [output_min, output_max] */
  int32_t output_min;        /* the quantized output's range, within 0 to */
  int32_t output_max;        /* 255; output_min is the zero point with a fused ReLU */
} nnp_quantized_conv2d_params;
#define NNP_QUANTIZED_CONV2D_PARAMS_SIZE_1_22 NNP_SIZE_THROUGH(nnp_quantized_conv2d_params, output_max)

/* (since 1.19) One step of an elementwise chain (nnp_kernels.elementwise_chain):
 * a unary op of operand a, or a binary op of a and b. An operand i below
 * the chain's input count is input i; n_inputs + s is the value of step s,
 * an earlier step. */
typedef struct nnp_elementwise_step {
  int32_t kind; /* NNP_STEP_UNARY (op is an nnp_unary_op) or NNP_STEP_BINARY (an nnp_binary_op) */
  int32_t op;
  int32_t a, b; /* b: unused by a unary step */
} nnp_elementwise_step;
enum { NNP_STEP_UNARY = 0, NNP_STEP_BINARY = 1 };

/* (since 1.10) The windows of a 2-D max pooling (nnp_kernels.max_pool2d, nnp_api.max_pool2d_fused). */
typedef struct nnp_pool2d_params {
  size_t struct_size;
  int64_t kernel[2];   /* height, width; >= 1 */
  int64_t stride[2];   /* >= 1 */
  int64_t padding[2];  /* implicit -inf before and after, per axis; >= 0 */
  int64_t dilation[2]; /* >= 1 */
} nnp_pool2d_params;
#define NNP_POOL2D_PARAMS_SIZE_1_10 NNP_SIZE_THROUGH(nnp_pool2d_params, dilation)

/* (since 1.12) One step of torch.optim.SGD for one parameter (nnp_kernels.sgd_step, nnp_api.sgd_step_fused). */
typedef struct nnp_sgd_params {
  size_t struct_size;
  double lr;
  double momentum;  /* 0: no momentum buffer */
  double dampening;
  double weight_decay;
  int32_t nesterov; /* 0 or 1 */
  int32_t maximize; /* 0 or 1 */
} nnp_sgd_params;
#define NNP_SGD_PARAMS_SIZE_1_12 NNP_SIZE_THROUGH(nnp_sgd_params, maximize)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNP_TYPES_H */
