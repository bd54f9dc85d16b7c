/*
 * nnp.h - the nnplug C API.
 *
 * Everything an application or a plugin does with nnplug goes through one
 * versioned function table, obtained with nnp_get_api(). The rules that keep
 * this table stable across releases and compilers:
 *   - every struct that crosses the boundary starts with `size_t struct_size`
 *     and only ever grows at the end; a field is read only when struct_size
 *     covers it;
 *   - plain C only: opaque handles, fixed-width integers, `const char*`,
 *     arrays with counts, function pointers with a `void* user_data`;
 *   - every fallible call returns an nnp_status; the message that goes with a
 *     failure is read with last_error() on the same thread;
 *   - handles are reference counted; every handle a call hands out is a new
 *     reference the caller releases;
 *   - every output pointer argument is required unless its comment says it
 *     may be NULL: a NULL one is refused with NNP_INVALID_ARGUMENT naming it;
 *   - a pointer a call returns (not a handle) says how long it lives: until
 *     process exit, while its owner lives, or until the owner changes.
 *
 * What a backend or plugin vendor needs beyond plugin.h is in types.h
 * (versions, statuses, dtypes, devices, op kinds); this header adds the
 * application's table. This header is C99.
 */
#ifndef NNP_NNP_H
#define NNP_NNP_H

#include <stddef.h>
#include <stdint.h>

#include "types.h" /* the types an application and a vendor share */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_tensor nnp_tensor;
typedef struct nnp_hook_handle nnp_hook_handle;
typedef struct nnp_function_ctx nnp_function_ctx;

/* A tensor hook: sees a gradient as it is computed; may set *replacement to
 * a new reference that replaces it (leave it NULL to keep the gradient). */
typedef nnp_status (*nnp_tensor_hook_fn)(const nnp_tensor* grad, nnp_tensor** replacement, void* user_data);

/* (since 1.11) A leaf's hook that runs after backward has accumulated into the
 * leaf's .grad (PyTorch's register_post_accumulate_grad_hook): it sees the
 * leaf itself and reads the new .grad through grad(). */
typedef nnp_status (*nnp_post_accumulate_grad_hook_fn)(nnp_tensor* leaf, void* user_data);

/* (since 1.11) A callback queued during backward, run once the whole backward has
 * finished (PyTorch's queue_callback); it may queue more. */
typedef nnp_status (*nnp_autograd_callback_fn)(void* user_data);

/* A custom autograd function: forward computes outputs from inputs (no
 * history is recorded inside it); backward maps output gradients to input
 * gradients. Both may keep tensors with function_save. */
typedef struct nnp_function {
  size_t struct_size;
  const char* name; /* shown as the outputs' grad_fn, e.g. "MyExpBackward" */
  /* outputs[i] must be set to new references. */
  nnp_status (*forward)(nnp_function_ctx* ctx, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                        int32_t n_outputs, void* user_data);
  /* grad_inputs[i]: a new reference shaped like inputs[i], or NULL for none. */
  nnp_status (*backward)(nnp_function_ctx* ctx, const nnp_tensor* const* grad_outputs, int32_t n_outputs,
                         nnp_tensor** grad_inputs, int32_t n_inputs, void* user_data);
  /* Called once when nothing refers to the function any more, or when
   * function_apply refuses its arguments; may be NULL. */
  void (*release)(void* user_data);
} nnp_function;
#define NNP_FUNCTION_SIZE_1_0 NNP_SIZE_THROUGH(nnp_function, release)

/* ---- modules --------------------------------------------------------------- */

typedef struct nnp_module nnp_module;
typedef struct nnp_optimizer nnp_optimizer;
typedef struct nnp_step nnp_step; /* (since 1.25) a captured training step */
/* An ordered list of named entries (tensors or modules), e.g. a state dict,
 * or of values (since 1.3: the arguments and results of a module's forward).
 * Pointers read from it are borrowed and stay valid while the list lives. */
typedef struct nnp_list nnp_list;

/* What one entry of a list holds (since 1.3). An empty slot (a NULL tensor) is
 * NONE, Python's None. */
typedef int32_t nnp_value_kind;
enum {
  NNP_VALUE_NONE = 0,
  NNP_VALUE_TENSOR = 1,
  NNP_VALUE_MODULE = 2,
  NNP_VALUE_INT = 3,   /* int64_t */
  NNP_VALUE_FLOAT = 4, /* double */
  NNP_VALUE_BOOL = 5,
  NNP_VALUE_STRING = 6 /* NUL-terminated UTF-8, copied into the list */
};

/* What a module written outside the core provides; the core owns the tree
 * and calls back through this. nnp.hpp builds one for C++ subclasses. */
typedef struct nnp_module_vtable {
  size_t struct_size;
  /* *output receives a new reference. */
  nnp_status (*forward)(void* self, nnp_module* module, const nnp_tensor* const* inputs, int32_t n_inputs,
                        nnp_tensor** output);
  /* The text inside "Type(...)" when printed; size query as device_name. May be NULL. */
  nnp_status (*extra_repr)(void* self, char* buf, size_t size, size_t* needed);
  /* Called once when the last reference to the module goes. May be NULL. */
  void (*destroy)(void* self);
  /* Extra state saved under "<prefix>_extra_state". Both may be NULL. */
  nnp_status (*get_extra_state)(void* self, nnp_tensor** out);
  nnp_status (*set_extra_state)(void* self, const nnp_tensor* state);
  /* (since 1.3) forward with more than tensors (PyTorch's forward(x, act)): args
   * holds the positional arguments in order (tensors, numbers, bools,
   * strings, NONE; entry names are ""); append the results to outputs (one
   * or several entries of any kind). May be NULL. When set, it serves
   * module_call_values, and module_call too when forward is NULL (its result
   * must then be one tensor); forward, when set, still serves module_call. */
  nnp_status (*forward_values)(void* self, nnp_module* module, const nnp_list* args, nnp_list* outputs);
  /* (since 1.6) For a module used as a parametrization (register_parametrization):
   * the tensor(s) that forward maps to value, appended to outputs (one entry:
   * the original is one tensor, "original"; several: "original0", ...).
   * NULL, or NNP_UNIMPLEMENTED, means it has none (PyTorch's missing
   * right_inverse). */
  nnp_status (*right_inverse)(void* self, nnp_module* module, const nnp_tensor* value, nnp_list* outputs);
} nnp_module_vtable;
#define NNP_MODULE_VTABLE_SIZE_1_0 NNP_SIZE_THROUGH(nnp_module_vtable, set_extra_state)
#define NNP_MODULE_VTABLE_SIZE_1_3 NNP_SIZE_THROUGH(nnp_module_vtable, forward_values)
#define NNP_MODULE_VTABLE_SIZE_1_6 NNP_SIZE_THROUGH(nnp_module_vtable, right_inverse)

typedef int32_t nnp_module_hook_kind;
enum {
  /* a = inputs; replace[n_a] may receive new inputs. */
  NNP_HOOK_FORWARD_PRE = 0,
  /* a = inputs, b = {output}; replace[0] may receive a new output. */
  NNP_HOOK_FORWARD = 1,
  /* a = gradients of the outputs; replace[n_a] may receive new ones. */
  NNP_HOOK_BACKWARD_PRE = 2,
  /* a = gradients of the inputs, b = of the outputs; replace[n_a] may receive new input gradients. */
  NNP_HOOK_BACKWARD = 3
};
/* One signature for every module hook kind (see above); entries of replace
 * left NULL keep the original. When a module is called with values
 * (module_call_values), these hooks see its tensor arguments and tensor
 * results only, and a forward hook's replace has n_b entries, one per tensor
 * result. */
typedef nnp_status (*nnp_module_hook_fn)(nnp_module* module, const nnp_tensor* const* a, int32_t n_a,
                                         const nnp_tensor* const* b, int32_t n_b, nnp_tensor** replace,
                                         void* user_data);
/* (since 1.3) A forward hook that sees every argument, as PyTorch's do: for
 * NNP_HOOK_FORWARD_PRE args are the arguments and outputs is NULL; for
 * NNP_HOOK_FORWARD, outputs are the results. Set *replace to a new list (the
 * core releases it) to replace the arguments (pre-hook) or the results, or
 * leave it NULL to keep them. */
typedef nnp_status (*nnp_module_values_hook_fn)(nnp_module* module, const nnp_list* args, const nnp_list* outputs,
                                                nnp_list** replace, void* user_data);

/* (since 1.6) How torch.nn.utils.prune picks the entries of a mask to zero. */
typedef int32_t nnp_prune_method;
enum {
  NNP_PRUNE_IDENTITY = 0,            /* the mask stays as it is (all ones at first) */
  NNP_PRUNE_RANDOM_UNSTRUCTURED = 1, /* amount entries at random */
  NNP_PRUNE_L1_UNSTRUCTURED = 2,     /* the amount entries of least magnitude */
  NNP_PRUNE_RANDOM_STRUCTURED = 3,   /* amount channels along dim at random */
  NNP_PRUNE_LN_STRUCTURED = 4,       /* the amount channels along dim of least Ln norm */
  NNP_PRUNE_CUSTOM_FROM_MASK = 5     /* the zeros of mask */
};
/* (since 1.6) One pruning step. Zero-fill it, set struct_size, then the fields the
 * method reads. The amount is a fraction in [0, 1] of the entries (channels)
 * not yet pruned, rounded half to even as Python's round(), or, with
 * amount_is_count, a number of them (PyTorch's float and int amounts). */
typedef struct nnp_prune_spec {
  size_t struct_size;
  nnp_prune_method method;
  int32_t amount_is_count;
  double amount;
  /* LN_STRUCTURED: the norm's order, any real or +-INFINITY (2 is 'fro'). */
  double n;
  /* The structured methods: the dimension whose channels go (negative counts from the end). */
  int64_t dim;
  /* L1_UNSTRUCTURED, LN_STRUCTURED: scores ranked instead of the tensor's
   * values (its shape); NULL ranks the tensor itself. */
  const nnp_tensor* importance_scores;
  /* CUSTOM_FROM_MASK: the mask (the tensor's shape; zeros prune). */
  const nnp_tensor* mask;
} nnp_prune_spec;
#define NNP_PRUNE_SPEC_SIZE_1_6 NNP_SIZE_THROUGH(nnp_prune_spec, mask)


/* (since 1.14) How an ONNX export writes an op (nnp_op_info.trace). */
typedef enum nnp_op_trace {
  NNP_OP_TRACE_NODES = 0,    /* ONNX nodes, each with the op's name as its doc_string */
  NNP_OP_TRACE_CONSTANT = 1, /* a constant named after the op, written where a node reads it */
  NNP_OP_TRACE_REFUSED = 2   /* no ONNX form: the export fails naming the op */
} nnp_op_trace;

/* (since 1.14) One op of the core's dispatcher. Every op call reaches its
 * kernel through the dispatcher, which names the call after its op in
 * profiles (nnp_profile_event.name) and traces (nnp_op_trace). */
typedef struct nnp_op_info {
  size_t struct_size;   /* set by the caller: the fields it knows are filled */
  const char* name;     /* "matmul"; valid until process exit */
  const char* backward; /* the autograd node a differentiable call records ("MmBackward"), or "" */
  nnp_op_trace trace;
} nnp_op_info;
#define NNP_OP_INFO_SIZE_1_14 NNP_SIZE_THROUGH(nnp_op_info, trace)

/* (since 1.6) The profiler (PyTorch's torch.profiler): what one event is. */
typedef struct nnp_profile nnp_profile;
typedef int32_t nnp_profile_event_kind;
enum {
  NNP_PROFILE_OP = 0,      /* one core op (matmul, mul, sum, ...), in forward or backward */
  NNP_PROFILE_MODULE = 1,  /* a module's call: "nn.Module: Linear" */
  NNP_PROFILE_SCOPE = 2,   /* a record_function scope (profiler_push_scope) */
  NNP_PROFILE_BACKWARD = 3, /* an autograd node's backward: "autograd::engine::evaluate_function: MulBackward" */
  /* (since 1.24) bytes copied between a device and the host for another
   * backend: a kernel the device's backend lacks, run on the fallback.
   * "copy halfway:0 -> host: where (4096 bytes)" */
  NNP_PROFILE_COPY = 4
};
typedef struct nnp_profiler_options {
  size_t struct_size;
  int32_t record_shapes;  /* ops' input shapes and dtypes */
  int32_t profile_memory; /* bytes each event allocates and frees */
  int32_t device_time;    /* ops' device time, where the backend has timing events */
} nnp_profiler_options;
#define NNP_PROFILER_OPTIONS_SIZE_1_6 NNP_SIZE_THROUGH(nnp_profiler_options, device_time)
typedef struct nnp_profile_event {
  size_t struct_size;
  /* The strings live as long as the profile. */
  const char* name;
  nnp_profile_event_kind kind;
  int32_t thread;          /* 0, 1, ... in order of each thread's first event */
  int64_t start_ns;        /* since profiler_start */
  int64_t duration_ns;     /* -1: still open when the profiler stopped */
  int64_t parent;          /* index of the enclosing event on the same thread, or -1 */
  const char* shapes;      /* an op's input shapes, "[[2,3],[3]]"; "" otherwise */
  const char* dtypes;      /* "f32, f32" */
  const char* device;      /* "cpu:0" */
  int64_t bytes_allocated; /* by the event itself, not its children */
  int64_t bytes_freed;
  double device_us; /* time on the device (backend timing events); -1: not measured */
} nnp_profile_event;
#define NNP_PROFILE_EVENT_SIZE_1_6 NNP_SIZE_THROUGH(nnp_profile_event, device_us)

typedef int32_t nnp_state_hook_kind;
enum {
  NNP_STATE_DICT_PRE = 0,      /* before state_dict collects; a = NULL */
  NNP_STATE_DICT_POST = 1,     /* after; a = the state dict (may be edited) */
  NNP_LOAD_STATE_DICT_PRE = 2, /* before load_state_dict checks; a = the incoming state (may be edited) */
  NNP_LOAD_STATE_DICT_POST = 3 /* after; a = missing keys, b = unexpected keys (may be edited) */
};
typedef nnp_status (*nnp_state_hook_fn)(nnp_module* module, nnp_list* a, nnp_list* b, const char* prefix,
                                        void* user_data);

typedef int32_t nnp_container_kind;
enum { NNP_SEQUENTIAL = 0, NNP_MODULE_LIST = 1, NNP_MODULE_DICT = 2, NNP_PARAMETER_LIST = 3, NNP_PARAMETER_DICT = 4 };

/* ---- layer types --------------------------------------------------------- */

/* Attribute values a layer type takes (from code or a JSON model spec). */
typedef int32_t nnp_attr_type;
enum {
  NNP_ATTR_INT = 0,
  NNP_ATTR_FLOAT = 1,
  NNP_ATTR_BOOL = 2,
  NNP_ATTR_STRING = 3,
  NNP_ATTR_INTS = 4, /* a list of integers, e.g. kernel_size [3,3] */
  /* (since 1.4) a list of integers or a word, e.g. a convolution's padding: 1,
   * [1, 2] or "same". Given values keep their own type (INTS or STRING). */
  NNP_ATTR_INTS_OR_STRING = 5,
  /* (since 1.5) a list of numbers, e.g. a loss's class weights [1, 0.5] or
   * Adam's betas [0.9, 0.999]; integers given convert. */
  NNP_ATTR_FLOATS = 6,
  /* (since 1.5) PyTorch's None, given for an optional attribute (attrs_set_none,
   * null in a model spec): the layer sees the attribute absent, its default
   * not applied (BatchNorm's momentum None, a cumulative average). A
   * declaration never has this type. */
  NNP_ATTR_NONE = 7
};

/* A set of named attribute values. */
typedef struct nnp_attrs nnp_attrs;
/* (since 1.8) The ONNX graph an export is writing; handed to a layer type's
 * to_onnx and valid only during that call. */
typedef struct nnp_onnx_graph nnp_onnx_graph;

typedef struct nnp_attr_def {
  size_t struct_size;
  const char* name;
  nnp_attr_type type;
  int32_t required; /* 1: no default; the spec must give it */
  /* Default as JSON text ("1e-05", "true", "[1, 1]", "\"zeros\""); NULL when required. */
  const char* default_value;
  const char* doc; /* one line */
} nnp_attr_def;
#define NNP_ATTR_DEF_SIZE_1_0 NNP_SIZE_THROUGH(nnp_attr_def, doc)

/* A layer type of the registry ("nn.Linear", "acme.Swish"). */
typedef struct nnp_layer_type {
  size_t struct_size;
  const char* name;
  const char* doc; /* one line */
  const nnp_attr_def* attrs;
  int32_t attr_count;
  /* attrs holds every declared attribute (defaults filled in, types checked).
   * *out receives a new module. */
  nnp_status (*create)(const nnp_attrs* attrs, void* user_data, nnp_module** out);
  void* user_data;
  /* (since 1.8) Writes one call of a module this type created into the ONNX graph
   * an export is building: nodes (api->onnx_graph_add_node) that compute the
   * values named outputs from the values named inputs (the call's tensor
   * arguments and results, in order). attrs: what the module was created
   * with. May be NULL: the call is then exported as one node in the vendor's
   * domain (op type: the name after the last '.', domain: the name before it)
   * carrying attrs, which import turns back into this layer. Returning
   * NNP_UNIMPLEMENTED does the same for this call only. */
  nnp_status (*to_onnx)(nnp_onnx_graph* graph, nnp_module* module, const nnp_attrs* attrs, const char* const* inputs,
                        int32_t n_inputs, const char* const* outputs, int32_t n_outputs, void* user_data);
} nnp_layer_type;
#define NNP_LAYER_TYPE_SIZE_1_0 NNP_SIZE_THROUGH(nnp_layer_type, user_data)
#define NNP_LAYER_TYPE_SIZE_1_8 NNP_SIZE_THROUGH(nnp_layer_type, to_onnx)

/* ---- optimizer algorithms (since 1.15) ----------------------------------------- */

/* One optimizer's update rule (torch.optim's SGD, Adam, ...; a plugin's
 * "acme.Lion"). The core keeps the optimizer itself: parameter groups and
 * their options, each parameter's state, the all-or-nothing step, zero_grad
 * and state dicts; for each parameter with a gradient, a step calls update. */
typedef struct nnp_optimizer_algorithm {
  size_t struct_size;
  /* The kind optimizer_create takes: a plugin's is "<vendor>.<Name>". */
  const char* kind;
  const char* doc; /* one line */
  /* The options a parameter group has (PyTorch's keywords: "lr", "momentum",
   * "beta1", ...; bools as 0 or 1) and their defaults, option_count of each.
   * Callbacks receive a group's values in this order. */
  const char* const* option_names;
  const double* option_defaults;
  int32_t option_count;
  /* The state entries that are host numbers (0-d f64 tensors on the CPU, as
   * PyTorch's "step"): they stay on the host when the parameter moves to
   * another device or dtype. NULL-terminated; may be NULL. */
  const char* const* host_state;
  /* Checks a group's options before a group is made or its options loaded;
   * fails (api->set_error) naming the option and its valid range. May be
   * NULL: every value is accepted. */
  nnp_status (*check_options)(const double* options, void* user_data);
  /* One parameter's step, run without grad recording: param's new value into
   * *out, a new tensor (not param itself). state: the parameter's named
   * tensors, empty at its first step; update replaces entries (list_remove,
   * list_append_tensor) and changes no tensor in place, so a step that fails
   * later (another parameter's) is discarded whole. */
  nnp_status (*update)(const nnp_tensor* param, const nnp_tensor* grad, const double* options, nnp_list* state,
                       void* user_data, nnp_tensor** out);
  void* user_data;
} nnp_optimizer_algorithm;
#define NNP_OPTIMIZER_ALGORITHM_SIZE_1_15 NNP_SIZE_THROUGH(nnp_optimizer_algorithm, user_data)

/* ---- graph ops (since 1.15) ------------------------------------------------------ */

/* An operator of ONNX's default domain that an imported graph runs
 * (nn.GraphModule's op nodes: "Relu", "Reshape", "Gemm", ...). nnplug's
 * own come from its built-in library; a plugin adds one nnplug lacks, and
 * ONNX import then accepts models that use it. */
typedef struct nnp_graph_op {
  size_t struct_size;
  const char* op_type; /* ONNX's name: letters, digits and '_' */
  const char* doc;     /* one line */
  /* Runs one node: inputs (n_inputs of them; an omitted optional input is
   * NULL), attrs: the node's attributes under ONNX's names (INT, FLOAT,
   * STRING, INTS, FLOATS; a tensor attribute, such as ConstantOfShape's
   * value, as FLOATS of its values and INT "<name>.elem_type", ONNX's
   * TensorProto data type), n_outputs: how many outputs the node names.
   * Appends at least n_outputs tensors to outputs. Runs under the caller's
   * grad mode: ops composed from the table's are recorded by autograd, so
   * an imported model trains. */
  nnp_status (*run)(const nnp_tensor* const* inputs, int32_t n_inputs, const nnp_attrs* attrs, int32_t n_outputs,
                    nnp_list* outputs, void* user_data);
  void* user_data;
  /* (since 1.20) Bit i set: run reads input i only as values on the host (a
   * shape, axes, pads, a count: copy_to_host), never as device data, as
   * ONNX Runtime's kernels mark their CPU inputs. A compiled graph on a GPU
   * then hands run a cpu copy of a constant there, made once per plan,
   * instead of waiting for the device on every call. Inputs past 63 and
   * ops registered before 1.20: 0, every input where the graph holds it. */
  uint64_t host_inputs;
} nnp_graph_op;
#define NNP_GRAPH_OP_SIZE_1_15 NNP_SIZE_THROUGH(nnp_graph_op, user_data)
#define NNP_GRAPH_OP_SIZE_1_20 NNP_SIZE_THROUGH(nnp_graph_op, host_inputs)

/* ---- tabular data (since 1.2) ------------------------------------------------- */

/* How load_csv treats the first row: as a header when every field is text
 * (AUTO), or always (YES). */
typedef int32_t nnp_csv_header;
#define NNP_CSV_HEADER_AUTO 0
#define NNP_CSV_HEADER_YES 1

typedef struct nnp_csv_options {
  size_t struct_size;
  nnp_csv_header header;
} nnp_csv_options;
#define NNP_CSV_OPTIONS_SIZE_1_2 NNP_SIZE_THROUGH(nnp_csv_options, header)

/* What load_csv read. */
typedef struct nnp_csv_info {
  size_t struct_size;
  int64_t rows;
  int64_t features;
  int64_t classes;            /* largest label + 1 */
  int64_t largest_label_line; /* the line (from 1) of the first row with that label */
  int32_t header_skipped;     /* 1: the first row was a header */
} nnp_csv_info;
#define NNP_CSV_INFO_SIZE_1_2 NNP_SIZE_THROUGH(nnp_csv_info, header_skipped)

/* ---- ONNX (since 1.8) ---------------------------------------------------------- */

/* How onnx_export writes a model. Zeroed fields take the defaults. */
typedef struct nnp_onnx_export_options {
  size_t struct_size;
  int64_t opset;                   /* the default domain's opset: 0 means 17; 13 to 17 are written */
  int32_t fixed_batch;             /* 1: every dimension as traced; 0: axis 0 of the inputs is "batch" */
  const char* const* input_names;  /* n_inputs names, or NULL: "input", "input1", ... */
  const char* const* output_names; /* n_output_names names, or NULL: "output", "output1", ... */
  int32_t n_output_names;
} nnp_onnx_export_options;
#define NNP_ONNX_EXPORT_OPTIONS_SIZE_1_8 NNP_SIZE_THROUGH(nnp_onnx_export_options, n_output_names)

/* (since 1.19) How module_compile captures a module. Zeroed fields take the defaults. */
typedef struct nnp_compile_options {
  size_t struct_size;
  int32_t fixed_batch; /* 1: every size of every input is fixed; 0: dimension 0 (the batch) may change */
  /* (since 1.24) On a device whose backend compiles graphs (nnp_backend
   * .capability ...): the device that runs the nodes the backend does not
   * claim ("cpu", "cuda:1", or the device itself); NULL: "cpu". */
  const char* fallback;
} nnp_compile_options;
#define NNP_COMPILE_OPTIONS_SIZE_1_19 NNP_SIZE_THROUGH(nnp_compile_options, fixed_batch)
#define NNP_COMPILE_OPTIONS_SIZE_1_24 NNP_SIZE_THROUGH(nnp_compile_options, fallback)

/* ---- the table ---------------------------------------------------------- */

typedef struct nnp_api nnp_api;
typedef struct nnp_plugin_host nnp_plugin_host;
struct nnp_backend;
struct nnp_comm; /* plugin.h (since 1.10) */
/* DLPack's exchange structs (dlpack/dlpack.h: 0.6 and later, and 1.0's
 * versioned form); nnp.h needs only their names. */
struct DLManagedTensor;
struct DLManagedTensorVersioned;

struct nnp_api {
  /* ---- since 1.0 ---- */
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;

  /* -- errors and names -- */
  /* This thread's last failure message; valid until the next failing call
   * on this thread. */
  const char* (*last_error)(void);
  nnp_status (*last_status)(void);
  /* For plugins: record a failure to be returned to the caller. */
  void (*set_error)(nnp_status status, const char* message);
  /* status_name, dtype_name and version return static strings. */
  const char* (*status_name)(nnp_status status);
  const char* (*dtype_name)(nnp_dtype dtype); /* "f32", ...; NULL if unknown */
  size_t (*dtype_size)(nnp_dtype dtype);      /* bytes per element; 0 if unknown */
  const char* (*version)(void);               /* "0.1.0" */

  /* -- plugins, backends, devices -- */
  /* Load one plugin now (absolute path). Discovery of the search folders
   * happens once, on the first call that needs a backend. */
  nnp_status (*load_plugin)(const char* path);
  int32_t (*plugin_count)(void);
  /* The strings of plugin_info, backend_info and device_info live until
   * process exit (plugins are never unloaded). */
  nnp_status (*plugin_info)(int32_t i, nnp_plugin_info* out);
  int32_t (*backend_count)(void);
  nnp_status (*backend_info)(int32_t i, nnp_backend_info* out);
  /* Search folders in order, joined with ':' into buf; needed gets the
   * length including the terminating NUL. */
  nnp_status (*plugin_search_path)(char* buf, size_t size, size_t* needed);
  /* "cpu", "cuda:1", "reference:0" or "auto" (the best device by score). */
  nnp_status (*device_parse)(const char* name, nnp_device* out);
  nnp_status (*device_name)(nnp_device device, char* buf, size_t size, size_t* needed);
  nnp_status (*device_info)(nnp_device device, nnp_device_info* out);
  nnp_status (*synchronize)(nnp_device device);

  /* -- plugin registration (only valid inside a plugin's init) -- */
  nnp_status (*register_backend)(nnp_plugin_host* host, const struct nnp_backend* backend);

  /* -- tensor handles -- */
  void (*tensor_retain)(nnp_tensor* t);
  void (*tensor_release)(nnp_tensor* t); /* NULL is ignored */
  int32_t (*tensor_ndim)(const nnp_tensor* t);
  /* shape and strides: ndim entries, valid while t lives (they never change). */
  const int64_t* (*tensor_shape)(const nnp_tensor* t);
  const int64_t* (*tensor_strides)(const nnp_tensor* t); /* in elements */
  int64_t (*tensor_offset)(const nnp_tensor* t);         /* into storage, elements */
  int64_t (*tensor_numel)(const nnp_tensor* t);
  nnp_dtype (*tensor_dtype)(const nnp_tensor* t);
  nnp_device (*tensor_device)(const nnp_tensor* t);
  int32_t (*tensor_is_contiguous)(const nnp_tensor* t);
  /* Address of the first element on the tensor's device (for kernels);
   * valid while t lives. */
  void* (*tensor_data)(const nnp_tensor* t);

  /* -- creation -- */
  nnp_status (*empty)(const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device, nnp_tensor** out);
  nnp_status (*full)(const int64_t* shape, int32_t ndim, double value, nnp_dtype dtype, nnp_device device,
                     nnp_tensor** out);
  nnp_status (*arange)(double start, double end, double step, nnp_dtype dtype, nnp_device device, nnp_tensor** out);
  /* Copies numel * dtype_size bytes of row-major host data. */
  nnp_status (*from_host)(const void* data, const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device,
                          nnp_tensor** out);
  /* Philox4x32-10 keyed by the device's (seed, offset) (see
   * device_manual_seed); each call advances the offset by the number of
   * elements drawn. */
  nnp_status (*random)(nnp_random_kind kind, double a, double b, const int64_t* shape, int32_t ndim, nnp_dtype dtype,
                       nnp_device device, nnp_tensor** out);
  void (*manual_seed)(uint64_t seed);                      /* every device's; the offsets go to 0 */
  void (*get_rng_state)(uint64_t* seed, uint64_t* offset); /* the host's (cpu:0); either may be NULL */
  void (*set_rng_state)(uint64_t seed, uint64_t offset);

  /* -- data movement -- */
  /* Copies the tensor, row-major, in its own dtype, into host memory of
   * `bytes` bytes (must equal numel * dtype_size). */
  nnp_status (*copy_to_host)(const nnp_tensor* t, void* dst, size_t bytes);
  /* Copies src into dst (broadcasting src to dst's shape, converting dtype,
   * across devices). dst's storage is written in place. */
  nnp_status (*copy_into)(nnp_tensor* dst, const nnp_tensor* src);
  nnp_status (*to)(const nnp_tensor* t, nnp_device device, nnp_dtype dtype, nnp_tensor** out);

  /* -- views (share storage) -- */
  nnp_status (*view)(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out);
  nnp_status (*reshape)(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out);
  nnp_status (*transpose)(const nnp_tensor* t, int32_t dim0, int32_t dim1, nnp_tensor** out);
  nnp_status (*permute)(const nnp_tensor* t, const int32_t* dims, int32_t ndim, nnp_tensor** out);
  nnp_status (*slice)(const nnp_tensor* t, int32_t dim, int64_t start, int64_t end, int64_t step, nnp_tensor** out);
  nnp_status (*expand)(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out);
  /* all_dims != 0 squeezes every size-1 dimension and ignores dim. */
  nnp_status (*squeeze)(const nnp_tensor* t, int32_t dim, int32_t all_dims, nnp_tensor** out);
  nnp_status (*unsqueeze)(const nnp_tensor* t, int32_t dim, nnp_tensor** out);
  nnp_status (*contiguous)(const nnp_tensor* t, nnp_tensor** out);
  nnp_status (*clone)(const nnp_tensor* t, nnp_tensor** out);

  /* -- compute -- */
  nnp_status (*unary)(nnp_unary_op op, const nnp_tensor* x, nnp_tensor** out);
  nnp_status (*binary)(nnp_binary_op op, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
  nnp_status (*where)(const nnp_tensor* cond, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
  /* ndims == 0 reduces every dimension. correction is used by VAR only. */
  nnp_status (*reduce)(nnp_reduce_op op, const nnp_tensor* x, const int32_t* dims, int32_t ndims, int32_t keepdim,
                       double correction, nnp_tensor** out);
  nnp_status (*matmul)(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
  nnp_status (*softmax)(const nnp_tensor* x, int32_t dim, int32_t log, nnp_tensor** out);
  nnp_status (*cat)(const nnp_tensor* const* tensors, int32_t count, int32_t dim, nnp_tensor** out);
  nnp_status (*index_select)(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out);
  nnp_status (*gather)(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out);
  /* out = x with src added at index along dim (out of place). */
  nnp_status (*scatter_add)(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, const nnp_tensor* src,
                            nnp_tensor** out);

  /* -- autograd -- */
  /* Leaves only; floating dtypes only. */
  nnp_status (*set_requires_grad)(nnp_tensor* t, int32_t requires_grad);
  int32_t (*requires_grad)(const nnp_tensor* t);
  int32_t (*is_leaf)(const nnp_tensor* t);
  nnp_status (*grad)(const nnp_tensor* t, nnp_tensor** out);     /* *out is NULL when there is none */
  nnp_status (*set_grad)(nnp_tensor* t, const nnp_tensor* grad); /* NULL clears */
  nnp_status (*retain_grad)(nnp_tensor* t);
  nnp_status (*detach)(const nnp_tensor* t, nnp_tensor** out);
  const char* (*grad_fn_name)(const nnp_tensor* t); /* "" for leaves; valid while t lives */
  /* grad NULL means ones (single-element t only). */
  nnp_status (*backward)(const nnp_tensor* t, const nnp_tensor* grad, int32_t retain_graph);
  /* Grad mode of the calling thread; returns the previous setting. */
  int32_t (*set_grad_enabled)(int32_t enabled);
  int32_t (*is_grad_enabled)(void);
  nnp_status (*register_tensor_hook)(nnp_tensor* t, nnp_tensor_hook_fn fn, void* user_data,
                                     void (*release)(void* user_data), nnp_hook_handle** out);
  /* Removing is idempotent; release frees the handle (and does not remove). */
  void (*hook_remove)(nnp_hook_handle* handle);
  void (*hook_release)(nnp_hook_handle* handle);
  /* Runs fn on inputs; outputs[n_outputs] receive new references. */
  nnp_status (*function_apply)(const nnp_function* fn, void* user_data, const nnp_tensor* const* inputs,
                               int32_t n_inputs, nnp_tensor** outputs, int32_t n_outputs);
  nnp_status (*function_save)(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count);
  int32_t (*function_saved_count)(const nnp_function_ctx* ctx);
  nnp_status (*function_saved)(const nnp_function_ctx* ctx, int32_t i, nnp_tensor** out);

  /* -- lists -- */
  nnp_status (*list_create)(nnp_list** out);
  void (*list_release)(nnp_list* list);
  int32_t (*list_size)(const nnp_list* list);
  const char* (*list_name)(const nnp_list* list, int32_t i);
  nnp_tensor* (*list_tensor)(const nnp_list* list, int32_t i);  /* NULL for modules and empty slots */
  nnp_module* (*list_module)(const nnp_list* list, int32_t i);  /* NULL for tensors */
  int32_t (*list_find)(const nnp_list* list, const char* name); /* index, or -1 */
  nnp_status (*list_append_tensor)(nnp_list* list, const char* name, const nnp_tensor* t);
  nnp_status (*list_remove)(nnp_list* list, int32_t i);

  /* -- modules -- */
  nnp_status (*module_create)(const char* type_name, const nnp_module_vtable* vtable, void* self, nnp_module** out);
  nnp_status (*container_create)(nnp_container_kind kind, nnp_module** out);
  void (*module_retain)(nnp_module* m);
  void (*module_release)(nnp_module* m);
  /* The object behind `self` is gone: calling the module fails from now on. */
  void (*module_detach_self)(nnp_module* m);
  const char* (*module_type_name)(const nnp_module* m); /* valid while m lives */
  /* t may be NULL (a name that holds nothing). */
  nnp_status (*register_parameter)(nnp_module* m, const char* name, nnp_tensor* t, int32_t requires_grad);
  nnp_status (*register_buffer)(nnp_module* m, const char* name, nnp_tensor* t, int32_t persistent);
  nnp_status (*register_module)(nnp_module* m, const char* name, nnp_module* child);
  /* Dotted paths ("net.l1.weight"); *out NULL when the name holds nothing. */
  nnp_status (*get_parameter)(const nnp_module* m, const char* path, nnp_tensor** out);
  nnp_status (*get_buffer)(const nnp_module* m, const char* path, nnp_tensor** out);
  nnp_status (*get_submodule)(const nnp_module* m, const char* path, nnp_module** out);
  nnp_status (*named_parameters)(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                                 nnp_list** out);
  nnp_status (*named_buffers)(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                              nnp_list** out);
  nnp_status (*named_children)(const nnp_module* m, nnp_list** out);
  nnp_status (*named_modules)(const nnp_module* m, const char* prefix, int32_t remove_duplicate, nnp_list** out);
  /* fn on every submodule (children first) then on m. */
  nnp_status (*module_apply)(nnp_module* m, nnp_status (*fn)(nnp_module* module, void* user_data), void* user_data);
  nnp_status (*module_train)(nnp_module* m, int32_t mode);
  int32_t (*module_is_training)(const nnp_module* m);
  nnp_status (*module_requires_grad)(nnp_module* m, int32_t requires_grad);
  nnp_status (*module_zero_grad)(nnp_module* m, int32_t set_to_none);
  /* device NULL keeps devices; dtype -1 keeps dtypes (only floating tensors change dtype). */
  nnp_status (*module_to)(nnp_module* m, const nnp_device* device, nnp_dtype dtype);
  nnp_status (*module_to_empty)(nnp_module* m, nnp_device device);
  /* Runs the hooks and forward. */
  nnp_status (*module_call)(nnp_module* m, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** out);
  nnp_status (*module_register_hook)(nnp_module* m, nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                     void (*release)(void* user_data), int32_t prepend, nnp_hook_handle** out);
  /* Hooks every module runs, before its own (register_module_forward_hook & co). */
  nnp_status (*register_global_module_hook)(nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                            void (*release)(void* user_data), nnp_hook_handle** out);
  nnp_status (*module_repr)(const nnp_module* m, char* buf, size_t size, size_t* needed);
  nnp_status (*state_dict)(nnp_module* m, const char* prefix, int32_t keep_vars, nnp_list** out);
  /* All or nothing. missing/unexpected (may be NULL) receive the key lists. */
  nnp_status (*load_state_dict)(nnp_module* m, const nnp_list* state, int32_t strict, int32_t assign,
                                nnp_list** missing, nnp_list** unexpected);
  nnp_status (*register_state_hook)(nnp_module* m, nnp_state_hook_kind kind, nnp_state_hook_fn fn, void* user_data,
                                    void (*release)(void* user_data), nnp_hook_handle** out);

  /* -- files (safetensors: PyTorch's dtype names and key names) -- */
  /* Atomic: the previous file stays intact until the new one is complete. */
  nnp_status (*save_safetensors)(const nnp_list* tensors, const char* path, const char* const* metadata_keys,
                                 const char* const* metadata_values, int32_t metadata_count);
  nnp_status (*load_safetensors)(const char* path, nnp_device device, nnp_list** out);
  /* One __metadata__ value; NNP_NOT_FOUND when the key is absent. */
  nnp_status (*safetensors_metadata)(const char* path, const char* key, char* buf, size_t size, size_t* needed);
  /* state_dict to a file, tagged {"format": "pt", "nnplug": "<version>"}. */
  nnp_status (*module_save)(nnp_module* m, const char* path);
  /* load_state_dict from a file: all or nothing, any refusal leaves m
   * unchanged. missing/unexpected may be NULL. */
  nnp_status (*module_load)(nnp_module* m, const char* path, int32_t strict, nnp_list** missing, nnp_list** unexpected);

  /* -- attributes -- */
  nnp_status (*attrs_create)(nnp_attrs** out);
  void (*attrs_release)(nnp_attrs* attrs);
  nnp_status (*attrs_set_int)(nnp_attrs* attrs, const char* name, int64_t value);
  nnp_status (*attrs_set_float)(nnp_attrs* attrs, const char* name, double value);
  nnp_status (*attrs_set_bool)(nnp_attrs* attrs, const char* name, int32_t value);
  nnp_status (*attrs_set_string)(nnp_attrs* attrs, const char* name, const char* value);
  nnp_status (*attrs_set_ints)(nnp_attrs* attrs, const char* name, const int64_t* values, int32_t count);
  /* Getters fail with NNP_NOT_FOUND (absent) or NNP_DTYPE_MISMATCH (another type); an INT reads as FLOAT too. */
  nnp_status (*attrs_get_int)(const nnp_attrs* attrs, const char* name, int64_t* out);
  nnp_status (*attrs_get_float)(const nnp_attrs* attrs, const char* name, double* out);
  nnp_status (*attrs_get_bool)(const nnp_attrs* attrs, const char* name, int32_t* out);
  /* The string lives as long as attrs. */
  nnp_status (*attrs_get_string)(const nnp_attrs* attrs, const char* name, const char** out);
  /* *count (may be NULL) receives the length; values (may be NULL) receives
   * up to capacity entries. */
  nnp_status (*attrs_get_ints)(const nnp_attrs* attrs, const char* name, int64_t* values, int32_t capacity,
                               int32_t* count);

  /* -- the layer registry -- */
  /* host: a plugin's init host, or NULL when an application registers. */
  nnp_status (*register_layer_type)(nnp_plugin_host* host, const nnp_layer_type* type);
  int32_t (*layer_type_count)(void);
  /* The type's description; its strings live until process exit. */
  nnp_status (*layer_type_info)(int32_t i, nnp_layer_type* out);
  /* Creates a layer by type name, checking attrs against its declaration. */
  nnp_status (*layer_create)(const char* type, const nnp_attrs* attrs, nnp_module** out);

  /* -- optimizers (torch.optim) -- */
  /* kind: "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "RMSprop" (from 1.15
   * any registered kind: optimizer_kind_info). params: the
   * first group's tensors (names are ignored); options: PyTorch's keyword
   * arguments as attributes (lr, momentum, ...; Adam's betas as beta1, beta2, or
   * from 1.5 as PyTorch's list "betas" [0.9, 0.999]; Rprop's etas and step_sizes too). */
  nnp_status (*optimizer_create)(const char* kind, const nnp_list* params, const nnp_attrs* options,
                                 nnp_optimizer** out);
  void (*optimizer_release)(nnp_optimizer* opt);
  /* options override the optimizer's defaults for this group. */
  nnp_status (*optimizer_add_param_group)(nnp_optimizer* opt, const nnp_list* params, const nnp_attrs* options);
  int32_t (*optimizer_group_count)(const nnp_optimizer* opt);
  nnp_status (*optimizer_get_option)(const nnp_optimizer* opt, int32_t group, const char* name, double* out);
  nnp_status (*optimizer_set_option)(nnp_optimizer* opt, int32_t group, const char* name, double value);
  nnp_status (*optimizer_step)(nnp_optimizer* opt);
  nnp_status (*optimizer_zero_grad)(nnp_optimizer* opt, int32_t set_to_none);
  /* PyTorch's layout flattened to names: "state.<i>.<name>" and
   * "param_groups.<g>.<option>" (0-d f64), "param_groups.<g>.params" (i64). */
  nnp_status (*optimizer_state_dict)(const nnp_optimizer* opt, nnp_list** out);
  /* All or nothing: group structure and state shapes are checked first. */
  nnp_status (*optimizer_load_state_dict)(nnp_optimizer* opt, const nnp_list* state);
  /* Scales gradients so their total norm is at most max_norm; *total (may be
   * NULL) gets the norm before. */
  nnp_status (*clip_grad_norm)(const nnp_list* params, double max_norm, double norm_type, double* total);

  /* -- model specs -- */
  /* Builds a module from JSON: {"type": "nn.Sequential", "children": [{"type":
   * "nn.Linear", "in_features": 64, "out_features": 10}, ...]}. Containers take
   * "children" (a list, or an object for nn.ModuleDict); every other key is an
   * attribute of the layer type. Errors name the place in the spec. */
  nnp_status (*model_from_spec)(const char* json, nnp_module** out);
  nnp_status (*model_from_spec_file)(const char* path, nnp_module** out);

  /* ---- since 1.1 ---- */

  /* -- custom kernels -- */
  /* The stream kernels on `device` run on (cudaStream_t, hipStream_t), NULL
   * for backends without streams. A layer's own kernel queues its work on it
   * so it is ordered with the core's. The first call for a device is its
   * first use (the device context is created). The stream lives until
   * process exit. */
  nnp_status (*device_stream)(nnp_device device, void** out);
  /* The name of the plugin that registered layer type i ("core" for the
   * built-in layers, "application" for types an application registered);
   * the string lives until process exit. */
  nnp_status (*layer_type_plugin)(int32_t i, const char** out);

  /* -- DLPack: zero-copy exchange with other libraries -- */
  /* *out shares t's memory and holds a reference to it (and so to the
   * backend plugin that owns it) until the consumer calls its deleter, which
   * may happen on any thread, after t is released. The device's queued work
   * is finished before the call returns. Refused for tensors that require
   * grad (detach first). to_dlpack (DLPack 0.6 structs) cannot express bool;
   * to_dlpack_versioned (since 1.0) can. */
  nnp_status (*to_dlpack)(const nnp_tensor* t, struct DLManagedTensor** out);
  nnp_status (*to_dlpack_versioned)(const nnp_tensor* t, struct DLManagedTensorVersioned** out);
  /* *out views src's memory on the matching device (kDLCPU: the "cpu"
   * backend, or another host-memory backend; kDLCUDA: "cuda"; kDLROCM:
   * "rocm"). On success nnplug owns src and calls its deleter when the last
   * tensor viewing it is gone; on failure src is untouched and still the
   * caller's. */
  nnp_status (*from_dlpack)(struct DLManagedTensor* src, nnp_tensor** out);
  nnp_status (*from_dlpack_versioned)(struct DLManagedTensorVersioned* src, nnp_tensor** out);

  /* -- tabular data (since 1.2) -- */
  /* A CSV file of rows "feature, ..., feature, label" (plain or gzip; spaces
   * and tabs around fields ignored) as f32 features [rows, features] and i64
   * class labels [rows] on `device`. Read in one pass; NaN, infinities,
   * features outside the f32 range, labels that are not integers in
   * [0, 2^31), ragged rows and lines over 16 MB are refused with
   * NNP_CORRUPT_DATA naming the file, line and column; a path that is not a
   * regular file with NNP_IO_ERROR. options and info may be NULL. */
  nnp_status (*load_csv)(const char* path, const nnp_csv_options* options, nnp_device device, nnp_tensor** features,
                         nnp_tensor** labels, nnp_csv_info* info);

  /* -- in-place writes with autograd (since 1.2) -- */
  /* What PyTorch's in-place ops do (add_, copy_, fill_, ...): writes value,
   * broadcast to dst's shape and converted to its dtype and device, into
   * dst's data; dst's version counter goes up, so a backward that saved dst
   * and runs later fails naming itself instead of using the new values.
   * When autograd records, dst's history continues from value's (an
   * in-place add is assign(dst, dst + other)); the values dst had get no
   * gradient. dst a view (made by a view op in grad mode, 1.3): its base's
   * history becomes PyTorch's CopySlices (the old gradient outside the view,
   * value's inside) and dst's a view of it; other views of the base follow
   * the base when next used. Refused: a leaf that requires grad, or a view
   * of one, while grad mode is on, and a tensor whose elements share memory
   * (an expanded view) (NNP_INVALID_ARGUMENT); an alias (detach(), a view
   * made under no_grad) while autograd records (NNP_UNIMPLEMENTED; clone
   * first). copy_into stays the plain copy it was. */
  nnp_status (*assign)(nnp_tensor* dst, const nnp_tensor* value);

  /* ---- since 1.3 ---- */

  /* -- values in lists -- */
  /* The kind of entry i, or -1 when i is out of range. */
  nnp_value_kind (*list_kind)(const nnp_list* list, int32_t i);
  nnp_status (*list_append_int)(nnp_list* list, const char* name, int64_t value);
  nnp_status (*list_append_float)(nnp_list* list, const char* name, double value);
  nnp_status (*list_append_bool)(nnp_list* list, const char* name, int32_t value);
  /* value is copied; NULL is refused. */
  nnp_status (*list_append_string)(nnp_list* list, const char* name, const char* value);
  /* Read entry i as Python converts: list_int takes INT and BOOL, list_float
   * INT, FLOAT and BOOL, list_bool only BOOL; any other kind (or an index out
   * of range) is NNP_INVALID_ARGUMENT naming the kind found. */
  nnp_status (*list_int)(const nnp_list* list, int32_t i, int64_t* out);
  nnp_status (*list_float)(const nnp_list* list, int32_t i, double* out);
  nnp_status (*list_bool)(const nnp_list* list, int32_t i, int32_t* out);
  /* NULL unless entry i is a STRING; valid while the list lives. */
  const char* (*list_string)(const nnp_list* list, int32_t i);

  /* -- calling with values -- */
  /* module(*args): runs the hooks and forward with any positional values
   * (entry names must be ""); *out receives a new list of the results. A
   * module without forward_values takes tensors only and gives one. */
  nnp_status (*module_call_values)(nnp_module* m, const nnp_list* args, nnp_list** out);
  /* Hooks that see every argument (nnp_module_values_hook_fn); kind is
   * NNP_HOOK_FORWARD_PRE or NNP_HOOK_FORWARD. They run in one order with the
   * module's tensor hooks of the same kind (registration order, prepend
   * first). */
  nnp_status (*module_register_values_hook)(nnp_module* m, nnp_module_hook_kind kind, nnp_module_values_hook_fn fn,
                                            void* user_data, void (*release)(void* user_data), int32_t prepend,
                                            nnp_hook_handle** out);
  nnp_status (*register_global_module_values_hook)(nnp_module_hook_kind kind, nnp_module_values_hook_fn fn,
                                                   void* user_data, void (*release)(void* user_data),
                                                   nnp_hook_handle** out);

  /* -- the default generator of each device -- */
  /* Every device has its own Philox stream (seed, offset), as PyTorch's
   * per-device default generators: random ops on a device draw from its
   * stream only. manual_seed seeds every device (and those first used
   * later) with offset 0, so the same seed gives the same numbers on every
   * device; get_rng_state/set_rng_state are the host's (cpu:0) stream, as
   * torch.get_rng_state. These read and write one device's stream, as
   * torch.cuda.manual_seed and torch.cuda.get_rng_state do. */
  nnp_status (*device_manual_seed)(nnp_device device, uint64_t seed);
  nnp_status (*device_get_rng_state)(nnp_device device, uint64_t* seed, uint64_t* offset); /* either may be NULL */
  nnp_status (*device_set_rng_state)(nnp_device device, uint64_t seed, uint64_t offset);

  /* ---- since 1.5 ---- */

  /* -- attribute lists of numbers, and None -- */
  nnp_status (*attrs_set_floats)(nnp_attrs* attrs, const char* name, const double* values, int32_t count);
  /* As attrs_get_ints; an INTS value reads as floats too. */
  nnp_status (*attrs_get_floats)(const nnp_attrs* attrs, const char* name, double* values, int32_t capacity,
                                 int32_t* count);
  /* Gives `name` PyTorch's None (NNP_ATTR_NONE): layer_create then leaves
   * the attribute out, default included; a required one is refused. */
  nnp_status (*attrs_set_none)(nnp_attrs* attrs, const char* name);

  /* ---- since 1.6 ---- */

  /* -- pruning, stored as torch.nn.utils.prune stores it -- */
  /* Prunes parameter `name` of m: the first time, the parameter becomes
   * "<name>_orig", a buffer "<name>_mask" (the tensor's dtype, 1 keeps, 0
   * prunes) is added, and a forward pre-hook recomputes <name> = orig * mask
   * before each call; the tensor the layer registered under <name> is the one
   * that shows the pruned values (PyTorch's module.<name>), and "<name>_orig"
   * is a new leaf holding the original (its gradient and hooks move there).
   * Pruning again combines masks as PyTorch's PruningContainer: the new
   * method sees only the entries (unstructured) or channels (structured)
   * still kept. All or nothing: a refused spec changes nothing. */
  nnp_status (*prune)(nnp_module* m, const char* name, const nnp_prune_spec* spec);
  /* global_unstructured: ranks the n tensors (modules[i].names[i]) together
   * and prunes each with its part of the mask (as custom_from_mask). spec's
   * method must be unstructured (IDENTITY, RANDOM_ or L1_UNSTRUCTURED).
   * importance_scores: NULL, or n entries (each NULL or the tensor's shape). */
  nnp_status (*prune_global)(nnp_module* const* modules, const char* const* names, int32_t n,
                             const nnp_prune_spec* spec, const nnp_tensor* const* importance_scores);
  /* Makes the pruning permanent: <name> is a parameter again holding orig *
   * mask; "<name>_orig", "<name>_mask" and the hook go. */
  nnp_status (*prune_remove)(nnp_module* m, const char* name);
  /* 1 when m or a module under it has a pruned tensor. */
  int32_t (*prune_is_pruned)(const nnp_module* m);

  /* -- parametrizations, stored as torch.nn.utils.parametrize stores them -- */
  /* Makes m's parameter or buffer `name` the output of `parametrization` (a
   * module: forward maps the original to the value, and right_inverse, when
   * it has one, the value to the original). The first one on m adds the
   * child "parametrizations" (a ModuleDict) and renames m's type
   * "Parametrized<Type>"; its entry <name> is a ParametrizationList holding
   * "original" (or "original0", ...) and the parametrizations "0", "1", ...
   * The tensor the layer registered under <name> shows the value, computed
   * before each call of m. Unless unsafe, a parametrization may not change
   * the dtype or shape. */
  nnp_status (*register_parametrization)(nnp_module* m, const char* name, nnp_module* parametrization, int32_t unsafe);
  /* Undoes every parametrization of `name`: with leave_parametrized, <name>
   * becomes a parameter (or buffer) holding the current value; otherwise it
   * holds the original (one tensor only). */
  nnp_status (*remove_parametrizations)(nnp_module* m, const char* name, int32_t leave_parametrized);
  /* 1 when m has a parametrization on `name`, or on anything when name is NULL. */
  int32_t (*is_parametrized)(const nnp_module* m, const char* name);
  /* module.<name> = value for a parametrized name: the originals become
   * right_inverse(value), through the parametrizations in reverse. */
  nnp_status (*parametrization_assign)(nnp_module* m, const char* name, const nnp_tensor* value);
  /* parametrize.cached(): between enter and the matching exit (they nest, and
   * count for every thread) a parametrized value is computed once. */
  void (*parametrize_cache_enter)(void);
  void (*parametrize_cache_exit)(void);
  /* getattr(module, path): the parameter, buffer or computed (pruned or
   * parametrized) tensor at "a.b.name"; a parametrized one is computed now.
   * *out receives a new reference. */
  nnp_status (*module_get_tensor)(nnp_module* m, const char* path, nnp_tensor** out);

  /* -- the profiler -- */
  /* Starts recording on every thread (options NULL: everything on); a
   * second start before stop is NNP_INVALID_ARGUMENT. */
  nnp_status (*profiler_start)(const nnp_profiler_options* options);
  /* Stops, waits for the devices' timing events, and gives the events. */
  nnp_status (*profiler_stop)(nnp_profile** out);
  int32_t (*profiler_is_active)(void);
  /* record_function: a named scope on the calling thread, nested in what is
   * open there; pop closes the innermost one pushed. Without an active
   * profiler both do nothing and succeed. */
  nnp_status (*profiler_push_scope)(const char* name);
  nnp_status (*profiler_pop_scope)(void);
  void (*profile_release)(nnp_profile* profile);
  int64_t (*profile_event_count)(const nnp_profile* profile);
  /* Fills *out (set out->struct_size first) with event i. */
  nnp_status (*profile_event)(const nnp_profile* profile, int64_t i, nnp_profile_event* out);
  /* Chrome Trace Event JSON (Perfetto, chrome://tracing): complete events
   * ("ph": "X") per thread, nested by time. Written atomically. */
  nnp_status (*profile_save_chrome_trace)(const nnp_profile* profile, const char* path);
  /* PyTorch's key_averages().table(): one row per name with calls, self and
   * total host time, device time and memory, sorted by sort_by
   * ("self_cpu_time_total" (NULL), "cpu_time_total", "device_time_total",
   * "self_cpu_memory_usage", "count"); row_limit <= 0: every row. Size
   * query as device_name. */
  nnp_status (*profile_summary)(const nnp_profile* profile, const char* sort_by, int32_t row_limit, char* buf,
                                size_t size, size_t* needed);

  /* -- quantization (since 1.7), as PyTorch computes it:
   *    q = clamp(round_half_even(x * (1.0f / float(scale))) + zero_point)
   *    x = (float(q) - zero_point) * float(scale)
   * The values are plain integer tensors: NNP_U8 for quint8 ([0, 255]),
   * NNP_I8 for qint8 ([-128, 127]). Per channel, scales (floating) and
   * zero_points (integer) are 1-D with one entry per index of x's axis. -- */
  nnp_status (*quantize_per_tensor)(const nnp_tensor* x, double scale, int64_t zero_point, nnp_dtype dtype,
                                    nnp_tensor** out);
  nnp_status (*quantize_per_channel)(const nnp_tensor* x, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                     int64_t axis, nnp_dtype dtype, nnp_tensor** out);
  /* The f32 values of integer tensor q. */
  nnp_status (*dequantize_per_tensor)(const nnp_tensor* q, double scale, int64_t zero_point, nnp_tensor** out);
  nnp_status (*dequantize_per_channel)(const nnp_tensor* q, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                       int64_t axis, nnp_tensor** out);
  /* Quantize then dequantize within [quant_min, quant_max], differentiable
   * with the straight-through estimator (the gradient passes where the
   * value was not clamped): torch.fake_quantize_per_*_affine. */
  nnp_status (*fake_quantize_per_tensor)(const nnp_tensor* x, double scale, int64_t zero_point, int64_t quant_min,
                                         int64_t quant_max, nnp_tensor** out);
  nnp_status (*fake_quantize_per_channel)(const nnp_tensor* x, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                          int64_t axis, int64_t quant_min, int64_t quant_max, nnp_tensor** out);
  /* out = a @ b^T for i8 a [M, K] and b [N, K]: exact int32 sums, on the
   * backend's gemm_i8 kernel or, without one, its floating gemm. K <= 65536. */
  nnp_status (*matmul_i8)(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);

  /* -- ONNX (since 1.8) -- */
  /* Traces module (in eval mode, without gradients; its mode is restored)
   * on the example inputs and writes an ONNX model to path: parameters and
   * buffers are initialisers named by their state-dict keys, layers with a
   * lowering become the matching ONNX nodes, other work the ops it ran. The
   * file passes onnx::checker with shape inference before it is written.
   * options may be NULL. */
  nnp_status (*onnx_export)(nnp_module* module, const nnp_tensor* const* inputs, int32_t n_inputs, const char* path,
                            const nnp_onnx_export_options* options);
  /* Inside a to_onnx call: appends a node. domain NULL or "" is ONNX's own;
   * attributes may be NULL (ints, floats, strings, bools as ints, lists). */
  nnp_status (*onnx_graph_add_node)(nnp_onnx_graph* graph, const char* op_type, const char* domain,
                                    const char* const* inputs, int32_t n_inputs, const char* const* outputs,
                                    int32_t n_outputs, const nnp_attrs* attributes);
  /* A constant (an initialiser holding value's current contents); *name is
   * its name, valid while the graph lives. */
  nnp_status (*onnx_graph_add_constant)(nnp_onnx_graph* graph, const nnp_tensor* value, const char* name_hint,
                                        const char** name);
  /* The name of module's parameter or buffer `tensor` ("weight") in the
   * graph: the initialiser named by its state-dict key. */
  nnp_status (*onnx_graph_tensor_name)(nnp_onnx_graph* graph, nnp_module* module, const char* tensor,
                                       const char** name);
  /* A name no other value has, for an intermediate result. */
  nnp_status (*onnx_graph_new_name)(nnp_onnx_graph* graph, const char* hint, const char** name);
  /* The opset of ONNX's own domain being written. */
  int64_t (*onnx_graph_opset)(const nnp_onnx_graph* graph);
  /* Reads an ONNX model (torch.onnx.export's, nnplug's, or a stranger's) into
   * a new nn.GraphModule: Conv, Gemm, pooling and LSTM nodes become built-in
   * layers, nodes in a plugin's domain that plugin's layers, the rest ops it
   * runs; initialisers become parameters (trainable) and buffers. Refuses,
   * naming the node, ops it does not run, malformed graphs, and external data
   * outside the model's folder. */
  nnp_status (*onnx_load)(const char* path, nnp_module** out);
  /* The layer type and attributes a module was created with through the
   * layer registry (layer_create, a model spec, onnx_load): *type is valid
   * while the module lives, *attrs a new copy (release it). NNP_NOT_FOUND for
   * a module the registry did not make (a container made in code, a custom
   * module). Either output may be NULL. */
  nnp_status (*module_layer_attrs)(const nnp_module* m, const char** type, nnp_attrs** attrs);

  /* -- collectives (since 1.10): torch.distributed -- */
  /* Registers a communication backend (plugin.h); only inside a plugin's
   * init, as register_backend. */
  nnp_status (*register_comm)(nnp_plugin_host* host, const struct nnp_comm* comm);
  int32_t (*comm_count)(void);
  nnp_status (*comm_info)(int32_t i, nnp_comm_info* out);
  /* Joins a group: blocks until every rank has joined (or the timeout),
   * refusing a rank whose world size or backend differs from rank 0's. */
  nnp_status (*process_group_new)(const nnp_process_group_options* options, nnp_process_group** out);
  /* Leaves the group; collectives still running are waited for first. */
  void (*process_group_release)(nnp_process_group* group);
  int32_t (*process_group_rank)(const nnp_process_group* group);
  int32_t (*process_group_size)(const nnp_process_group* group);
  /* Collectives over contiguous tensors on a device that the group's
   * backend serves, every rank calling the same ones in the same order.
   * With work == NULL the call returns when the collective is done;
   * otherwise it returns once started, *work the handle, and the tensors
   * must be left alone (the core keeps them alive) until it completes.
   * all_reduce and broadcast work in place; all_gather's output holds
   * world_size inputs one after another (all_gather_into_tensor),
   * reduce_scatter's input world_size outputs (reduce_scatter_tensor). */
  nnp_status (*comm_all_reduce)(nnp_process_group* group, nnp_tensor* tensor, nnp_comm_op op, nnp_work** work);
  nnp_status (*comm_broadcast)(nnp_process_group* group, nnp_tensor* tensor, int32_t root, nnp_work** work);
  nnp_status (*comm_all_gather)(nnp_process_group* group, const nnp_tensor* input, nnp_tensor* output, nnp_work** work);
  nnp_status (*comm_reduce_scatter)(nnp_process_group* group, const nnp_tensor* input, nnp_tensor* output,
                                    nnp_comm_op op, nnp_work** work);
  nnp_status (*comm_barrier)(nnp_process_group* group, nnp_work** work);
  /* Waits for the collective: its own status, or NNP_TIMEOUT after
   * timeout_ms (< 0: the group's timeout). */
  nnp_status (*work_wait)(nnp_work* work, int64_t timeout_ms);
  /* *done = 1 once it has completed (wait then gives its status at once). */
  nnp_status (*work_test)(nnp_work* work, int32_t* done);
  /* Waits (the group's timeout) if still running, then frees the handle. */
  void (*work_release)(nnp_work* work);

  /* ---- since 1.11: autograd hooks for gradient reducers (DistributedDataParallel) */
  /* Registers fn on a leaf that requires grad; it runs each time backward
   * has accumulated into the leaf's .grad, after the leaf's tensor hooks. */
  nnp_status (*register_post_accumulate_grad_hook)(nnp_tensor* leaf, nnp_post_accumulate_grad_hook_fn fn,
                                                   void* user_data, void (*release)(void* user_data),
                                                   nnp_hook_handle** out);
  /* Only while a backward runs on this thread (from a hook): fn runs after
   * every node of that backward, callbacks in the order queued; a failing
   * callback fails the backward. release (may be NULL) frees user_data
   * after the callback ran or the backward failed before it. */
  nnp_status (*autograd_queue_callback)(nnp_autograd_callback_fn fn, void* user_data, void (*release)(void* user_data));

  /* ---- since 1.12: listings that start no device runtime ---- */
  /* As backend_info, without asking the backend for its devices (for a GPU
   * backend that opens its runtime): device_count is -1 and
   * unavailable_reason "". For listing what is loaded (`nnplug plugins`). */
  nnp_status (*backend_summary)(int32_t i, nnp_backend_info* out);
  /* As comm_info, without asking the backend whether it can work here:
   * unavailable_reason is NULL. */
  nnp_status (*comm_summary)(int32_t i, nnp_comm_info* out);

  /* ---- since 1.14: the dispatcher's ops ---- */
  /* (since 1.14) How many ops the dispatcher knows, and the i-th of them
   * (0 <= i < op_count(); NNP_NOT_FOUND beyond). `nnplug ops` lists them. */
  int32_t (*op_count)(void);
  nnp_status (*op_info)(int32_t i, nnp_op_info* out);
  /* (since 1.14) The backend's fused 2-D convolution, the path the built-in
   * Conv layers take: x [N, C, H, W], w [O, C/groups, kH, kW], bias [O] or
   * NULL, all f32 on one device. Recorded by autograd where the backend also
   * has conv2d_backward. *out is NULL (and the status NNP_OK) where no fused
   * kernel applies - the backend has none, another dtype, a size it does not
   * take - and the caller composes the convolution from other ops, as
   * nnp/functional/conv.hpp does. */
  nnp_status (*conv2d_fused)(const nnp_tensor* x, const nnp_tensor* w, const nnp_tensor* bias,
                             const nnp_conv2d_params* p, nnp_tensor** out);
  /* (since 1.14) The backend's fused 2-D max pooling of x [N, C, H, W] (f32)
   * into out_h x out_w windows the caller chose (ceil_mode included), and,
   * when indices is not NULL, each maximum's position within its plane. Not
   * recorded by autograd: where x requires grad, take the indices and gather
   * (nnp/functional/pooling.hpp does). *values is NULL where no fused kernel
   * applies (no kernel, another dtype, x requires grad under grad mode). */
  nnp_status (*max_pool2d_fused)(const nnp_tensor* x, const nnp_pool2d_params* p, int64_t out_h, int64_t out_w,
                                 nnp_tensor** values, nnp_tensor** indices);

  /* ---- since 1.15: optimizer algorithms and graph ops ---- */
  /* (since 1.15) Registers an update rule under its kind (host: a plugin's
   * init host, or NULL when an application registers); the built-in kinds
   * ("SGD", "Adam", ...) come from nnplug's library the same way. A kind
   * registered twice is refused. */
  nnp_status (*register_optimizer)(nnp_plugin_host* host, const nnp_optimizer_algorithm* algorithm);
  /* (since 1.15) How many kinds optimizer_create knows, and the i-th (its
   * strings live until process exit; NNP_NOT_FOUND beyond the count). */
  int32_t (*optimizer_kind_count)(void);
  nnp_status (*optimizer_kind_info)(int32_t i, nnp_optimizer_algorithm* out);
  /* (since 1.15) One SGD step through the parameter's backend's fused kernel
   * (nnp_kernels.sgd_step), the path the built-in SGD takes: the new
   * parameter into *param_out and, with momentum, the new buffer into
   * *buffer_out (buffer: the previous one, NULL at the first step). New
   * tensors; nothing is changed in place. *param_out is NULL (status NNP_OK)
   * where no fused kernel applies - the backend has none, a dtype other than
   * f32 and f64, mixed devices or a layout it does not take - and the caller
   * composes the step from other ops. */
  nnp_status (*sgd_step_fused)(const nnp_tensor* param, const nnp_tensor* grad, const nnp_tensor* buffer,
                               const nnp_sgd_params* p, nnp_tensor** param_out, nnp_tensor** buffer_out);
  /* (since 1.15) Registers an ONNX operator imported graphs run (host: a
   * plugin's init host, or NULL from an application); an op type registered
   * twice is refused. graph_op_info lists them (strings live until process
   * exit; NNP_NOT_FOUND beyond the count). */
  nnp_status (*register_graph_op)(nnp_plugin_host* host, const nnp_graph_op* op);
  int32_t (*graph_op_count)(void);
  nnp_status (*graph_op_info)(int32_t i, nnp_graph_op* out);
  /* (since 1.15) 1 when attrs holds a value (not NONE) under name, else 0
   * (attrs or name NULL included). Never fails and records no error: how an
   * op reading optional attributes on every call asks cheaply. */
  int32_t (*attrs_has)(const nnp_attrs* attrs, const char* name);
  /* (since 1.15) Every __metadata__ entry of a safetensors file, as STRING
   * values named by their keys, from one read of the header (checked as
   * load_safetensors checks it) and no tensor read: a program checks what it
   * needs before anything large is made, and asks once, not once per key. */
  nnp_status (*safetensors_metadata_all)(const char* path, nnp_list** out);

  /* ---- since 1.18: fused kernels for inference ---- */
  /* (since 1.18) The backend's fused layer normalization of x over its last
   * normalized_ndim dimensions (f32; weight and bias NULL or shaped as those
   * dimensions): one pass per row instead of the mean, variance, rsqrt and
   * products nnp/functional/normalization.hpp composes. Not recorded by
   * autograd. *out is NULL (status NNP_OK) where no fused kernel applies -
   * the backend has none, another dtype, mixed devices, or a gradient is
   * wanted (grad mode with x, weight or bias requiring grad) - and the
   * caller composes it. */
  nnp_status (*layer_norm_fused)(const nnp_tensor* x, const nnp_tensor* weight, const nnp_tensor* bias,
                                 int32_t normalized_ndim, double eps, nnp_tensor** out);

  /* ---- since 1.19 ---- */
  /* The GEMM of the quantized layers in one call: f32 x [M, K] quantized as
   * quantize_per_tensor(x, scale, 0, i8) and kept at or above -zero_point
   * (0 <= zero_point <= 128: the offsets of quint8 values from their zero
   * point), times i8 w [N, K] transposed in exact int32, each column then
   * rescaled and shifted: out[m, n] = float(sum) * col_scale[n] + bias[n]
   * (f32 col_scale [N]; bias f32 [N] or NULL). K <= 65536. The backend's
   * quantized_gemm kernel where it has one and no gradient is recorded
   * (nothing here has a gradient: out never requires grad), else the same
   * values from quantize_per_tensor, matmul_i8 and elementwise ops. */
  nnp_status (*quantized_matmul)(const nnp_tensor* x, double scale, int64_t zero_point, const nnp_tensor* w,
                                 const nnp_tensor* col_scale, const nnp_tensor* bias, nnp_tensor** out);
  /* Graph mode (torch.compile's role): module captured on example_inputs
   * (ONNX export's trace, read back as an nn.GraphModule whose plan folds
   * constants and fuses convolutions, products and elementwise chains) into
   * a new module, type OptimizedModule, whose child "_orig_mod" is module
   * itself (its state dict and parameters are module's). A call runs the
   * captured plan where its guards hold - the inputs' count, dtypes,
   * devices and sizes (dimension 0 may change unless options->fixed_batch or
   * the capture had to fix it), eval mode, no hooks on module, no gradient
   * wanted - and module itself otherwise; weights written or replaced since
   * the capture are captured again on the next call. A module that cannot be
   * captured (an op with no ONNX form) always runs itself: the call
   * succeeds, and module_compile_explain says why. options may be NULL. */
  nnp_status (*module_compile)(nnp_module* module, const nnp_tensor* const* example_inputs, int32_t n_inputs,
                               const nnp_compile_options* options, nnp_module** out);
  /* What a compiled module captured (or why it could not), its plan's
   * passes, and what its last call ran (the plan, or itself and why); as
   * module_repr returns text. */
  nnp_status (*module_compile_explain)(const nnp_module* compiled, char* buf, size_t size, size_t* needed);
  /* ---- since 1.20 ---- */
  /* NumPy's .npy files (numpy.save / numpy.load, format versions 1.0 to
   * 3.0): npy_load reads one array onto device (little-endian f2, f4, f8,
   * i1, i2, i4, i8, u1, u2, u4, u8 or b1; C or Fortran order), refusing a
   * malformed header, a size that overflows or data shorter or longer than
   * the header says with the file and the problem named; npy_save writes t
   * as numpy.save does (version 1.0, C order; bf16 is refused: numpy has no
   * such dtype), atomically. */
  nnp_status (*npy_load)(const char* path, nnp_device device, nnp_tensor** out);
  nnp_status (*npy_save)(const nnp_tensor* t, const char* path);
  /* ---- since 1.25 ---- */
  /* A training step captured once and replayed (nnp::compile_step; the idea
   * of CUDA graphs, on every backend). fn is the step - forward, loss,
   * backward and the optimizer's step, as eager code writes them - called
   * with user, the inputs and room for outputs: it writes up to
   * NNP_STEP_MAX_OUTPUTS new references into outputs, their count into
   * *n_outputs, and returns NNP_OK (or a failure status after set_error).
   * step_call runs it for real while recording the kernels it makes; once
   * two calls in a row made the same kernel calls on the same memory (the
   * first steps create gradients and optimizer state), later calls make the
   * recorded kernel calls alone on the new inputs: no autograd graph, no
   * allocation, no dispatch, and the same numbers as eager (random ops
   * draw from the generators as they would). A step that reads a value on
   * the host (item(), a condition), calls a collective or reaches a
   * tensor's memory directly, or whose kernels change from call to call (a
   * host-side value baked into them: Adam's step count, a learning rate set
   * every step) runs as written on every call; step_explain says why.
   * Inputs of other dtypes, devices or shapes, and host-side state changed
   * between calls (optimizer options, a parameter, buffer or gradient
   * replaced: not written in place) make the next call capture again.
   * Between calls, tensors the step writes in place (parameters, gradients,
   * optimizer state) hold what the last call wrote. step_call writes new
   * references to the step's results (no history) into outputs (capacity
   * entries) and their count into *n_outputs. release_user (may be NULL) is
   * called with user when the step is released. */
  nnp_status (*step_compile)(nnp_status (*fn)(void* user, nnp_tensor* const* inputs, int32_t n_inputs,
                                               nnp_tensor** outputs, int32_t* n_outputs),
                             void* user, void (*release_user)(void* user), nnp_step** out);
  nnp_status (*step_call)(nnp_step* step, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                          int32_t capacity, int32_t* n_outputs);
  /* What the step does now (replays N recorded kernel calls, captures, or
   * runs as written and why) and its calls so far; as module_repr. */
  nnp_status (*step_explain)(const nnp_step* step, char* buf, size_t size, size_t* needed);
  void (*step_release)(nnp_step* step);

  /* ---- since 1.27: mixed precision ---- */
  /* Autocast (PyTorch 1.13's torch.autocast), per thread and per device
   * type: a device type is a backend's name ("cpu", "cuda", "reference", a
   * plugin's), and rocm tensors follow "cuda". autocast_enter opens a scope:
   * while it is the innermost for device_type, public ops on tensors of that
   * type cast their floating inputs as PyTorch's lists say (GEMMs and
   * convolutions to dtype; losses, and on cuda softmax, norms and pointwise
   * ops that lose range, to f32; ops taking several tensors to the widest
   * of them; f64 is left alone). dtype is NNP_BF16, NNP_F16 or
   * NNP_AUTOCAST_PREFERRED (the backend's nnp_backend.autocast_dtype).
   * enabled = 0 opens a scope that turns autocast off; cache_enabled keeps
   * one cast of each parameter (an f32 leaf that requires grad) until the
   * thread's outermost scope exits. autocast_exit closes the innermost
   * scope, which must be device_type's. The casts are ops of their own
   * ("to") with history, inside the cast op's profile event. */
  nnp_status (*autocast_enter)(const char* device_type, int32_t dtype, int32_t enabled, int32_t cache_enabled);
  nnp_status (*autocast_exit)(const char* device_type);
  /* The state ops on device_type see now (outside every scope: disabled,
   * with the preferred dtype). Any out pointer may be NULL. */
  nnp_status (*autocast_state)(const char* device_type, int32_t* enabled, nnp_dtype* dtype, int32_t* cache_enabled);
  /* For ops composed outside the core (a layer plugin's, nnp.hpp's losses):
   * the inputs of `op` as autocast would give them to it now. op is a
   * PyTorch op name of the lists ("linear", "cross_entropy_loss") or a
   * policy ("lower_precision_fp", "fp32", "promote", "none"); anything else
   * is NNP_NOT_FOUND. outputs[i] is a new reference (to inputs[i] itself
   * where nothing is cast), NULL where inputs[i] is NULL. */
  nnp_status (*autocast_args)(const char* op, const nnp_tensor* const* inputs, int32_t count, nnp_tensor** outputs);
  /* A gradient scaler's unscale of an optimizer's gradients (PyTorch's
   * GradScaler._unscale_grads_ and _amp_foreach_non_finite_check_and_unscale_):
   * the gradient of each parameter that has one multiplied in place by
   * inv_scale (rounded to its dtype), and found_inf (an f32 tensor of one
   * element on their device) set to 1 when any element of any was inf or
   * NaN before; left as it was otherwise. One pass a gradient where the
   * backend has unscale_check. f16 gradients are refused
   * (NNP_DTYPE_MISMATCH) unless allow_f16. */
  nnp_status (*amp_unscale_grads)(nnp_optimizer* opt, double inv_scale, nnp_tensor* found_inf, int32_t allow_f16);
  /* ---- since 1.27: activation checkpointing ---- */
  /* PyTorch's torch.utils.checkpoint (its non-reentrant form): calls
   * fn(user, inputs) and writes its results (new references) to outputs
   * (capacity entries, at most NNP_STEP_MAX_OUTPUTS) and their count to
   * *n_outputs; the activations fn made are freed once it returns. When
   * backward reaches the results, fn runs again on the same inputs with the
   * random generators (unless preserve_rng_state is 0) and autocast state of
   * the first call, and the gradients go on from there: to the inputs that
   * require grad and to every parameter fn used, as without checkpointing.
   * fn must compute the same thing both times. Without grad mode, fn runs
   * once as it is. release_user (may be NULL) is called with user when
   * nothing can call fn again. An input written in place before backward is
   * refused there, naming it. */
  nnp_status (*checkpoint)(nnp_status (*fn)(void* user, nnp_tensor* const* inputs, int32_t n_inputs,
                                            nnp_tensor** outputs, int32_t* n_outputs),
                           void* user, void (*release_user)(void* user), const nnp_tensor* const* inputs,
                           int32_t n_inputs, int32_t preserve_rng_state, nnp_tensor** outputs, int32_t capacity,
                           int32_t* n_outputs);

  /* ---- since 1.28: memory statistics ---- */
  /* torch.cuda.memory_stats for any device: what tensors hold on `device`
   * now and at most (nnp_memory_stats; set out->struct_size first, fields
   * past it are left alone). Counted on every device from the process's
   * first allocation there. */
  nnp_status (*memory_stats)(nnp_device device, nnp_memory_stats* out);
  /* torch.cuda.reset_peak_memory_stats: the peak becomes what is held now,
   * so a later memory_stats gives the most held since this call. */
  nnp_status (*reset_peak_memory_stats)(nnp_device device);
};

/* (since 1.27) autocast_enter's dtype: the backend's preferred one. */
#define NNP_AUTOCAST_PREFERRED (-1)

/* (since 1.25) The most results a captured step's function may give. */
#define NNP_STEP_MAX_OUTPUTS 16

/* Sizes of the released layouts of the table: what struct_size is for a
 * table of that version. Every struct's own sizes stand under it; a reader
 * checks a field against these before using it. */
#define NNP_API_SIZE_1_0 NNP_SIZE_THROUGH(nnp_api, model_from_spec_file)
#define NNP_API_SIZE_1_1 NNP_SIZE_THROUGH(nnp_api, from_dlpack_versioned)
#define NNP_API_SIZE_1_2 NNP_SIZE_THROUGH(nnp_api, assign)
#define NNP_API_SIZE_1_3 NNP_SIZE_THROUGH(nnp_api, device_set_rng_state)
#define NNP_API_SIZE_1_5 NNP_SIZE_THROUGH(nnp_api, attrs_set_none)
#define NNP_API_SIZE_1_6 NNP_SIZE_THROUGH(nnp_api, profile_summary)
#define NNP_API_SIZE_1_7 NNP_SIZE_THROUGH(nnp_api, matmul_i8)
#define NNP_API_SIZE_1_8 NNP_SIZE_THROUGH(nnp_api, module_layer_attrs)
#define NNP_API_SIZE_1_10 NNP_SIZE_THROUGH(nnp_api, work_release)
#define NNP_API_SIZE_1_11 NNP_SIZE_THROUGH(nnp_api, autograd_queue_callback)
#define NNP_API_SIZE_1_12 NNP_SIZE_THROUGH(nnp_api, comm_summary)
#define NNP_API_SIZE_1_14 NNP_SIZE_THROUGH(nnp_api, max_pool2d_fused)
#define NNP_API_SIZE_1_15 NNP_SIZE_THROUGH(nnp_api, safetensors_metadata_all)
#define NNP_API_SIZE_1_18 NNP_SIZE_THROUGH(nnp_api, layer_norm_fused)
#define NNP_API_SIZE_1_19 NNP_SIZE_THROUGH(nnp_api, module_compile_explain)
#define NNP_API_SIZE_1_20 NNP_SIZE_THROUGH(nnp_api, npy_save)
#define NNP_API_SIZE_1_25 NNP_SIZE_THROUGH(nnp_api, step_release)
#define NNP_API_SIZE_1_27 NNP_SIZE_THROUGH(nnp_api, checkpoint)
#define NNP_API_SIZE_1_28 NNP_SIZE_THROUGH(nnp_api, reset_peak_memory_stats)

/* The first fields of nnp_api, which every version of the table keeps in
 * place, major versions included (as ONNX Runtime's OrtApiBase): enough for a
 * program whose nnp_get_api call was refused to learn which ABI the library
 * implements and why it refused. */
typedef struct nnp_api_base {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* (*last_error)(void);
  nnp_status (*last_status)(void);
} nnp_api_base;

/* The one symbol libnnp exports. Returns NULL (message in last_error) when
 * major differs from the library's or minor is newer than the library's. The
 * table lives until process exit. nnp_get_api(NNP_ABI_BASE_QUERY, 0) never
 * refuses: it returns the library's own table, to be read only through
 * nnp_api_base (use nnp_get_api_base). */
NNP_EXPORT const nnp_api* nnp_get_api(uint32_t major, uint32_t minor);

/* A major no ABI will ever have ("nnpb"): asking for it is the base query. */
#define NNP_ABI_BASE_QUERY 0x6E6E7062u

/* The base of whatever table this libnnp has, or NULL from a library older
 * than the base query (1.1 and earlier). */
static inline const nnp_api_base* nnp_get_api_base(void) {
  return (const nnp_api_base*)(const void*)nnp_get_api(NNP_ABI_BASE_QUERY, 0);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNP_NNP_H */
