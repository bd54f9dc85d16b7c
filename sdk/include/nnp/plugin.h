/*
 * plugin.h - what a plugin exports and implements.
 *
 * A plugin is a shared library exporting exactly one symbol,
 * `nnp_plugin_entry`, which returns a static descriptor and has no side
 * effects. The core checks the descriptor's ABI version, then calls `init`
 * with the API table and a host handle; `init` registers what the plugin
 * provides (backends, layer types, communication backends). A plugin never
 * links libnnp; it reaches the core only through the table it is given.
 *
 * A backend is a small struct of function pointers (memory, devices) plus a
 * kernel table. Kernels see raw strided views and a kernel context only:
 * nothing of autograd, modules or handles. The core prepares their inputs
 * (broadcasting by zero strides, dtype checks, output allocation), so a
 * kernel only computes.
 *
 * This header is C99.
 */
#ifndef NNP_PLUGIN_H
#define NNP_PLUGIN_H

#include "nnp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the descriptor ----------------------------------------------------- */

typedef struct nnp_plugin_descriptor {
  size_t struct_size;
  uint32_t abi_major;  /* NNP_ABI_MAJOR the plugin was built against */
  uint32_t abi_minor;  /* NNP_ABI_MINOR the plugin was built against */
  const char* name;    /* unique among loaded plugins */
  const char* version; /* the plugin's own version string */
  /* Registers what the plugin provides. Nothing registered is kept unless
   * init returns NNP_OK. `api` stays valid until process exit; `host` only
   * until init returns (a registration through it afterwards is refused).
   * The descriptor and its strings must live until process exit (static). */
  nnp_status (*init)(const nnp_api* api, nnp_plugin_host* host);
  /* One line for `nnplug plugins`. (optional; NULL = none) (since 1.1) */
  const char* description;
} nnp_plugin_descriptor;
#define NNP_PLUGIN_DESCRIPTOR_SIZE_1_0 NNP_SIZE_THROUGH(nnp_plugin_descriptor, init)
#define NNP_PLUGIN_DESCRIPTOR_SIZE_1_1 NNP_SIZE_THROUGH(nnp_plugin_descriptor, description)

typedef const nnp_plugin_descriptor* (*nnp_plugin_entry_fn)(void);

#ifdef __cplusplus
#define NNP_PLUGIN_ENTRY extern "C" NNP_EXPORT const nnp_plugin_descriptor* nnp_plugin_entry(void)
#else
#define NNP_PLUGIN_ENTRY NNP_EXPORT const nnp_plugin_descriptor* nnp_plugin_entry(void)
#endif

/* A plugin's descriptor and entry point in one line, in C or C++:
 *   NNP_PLUGIN("acme.layers", "1.2.0", "Acme's layers: Swish, Mish", init)
 * name, version and description are string literals (description may be
 * NULL), init the plugin's init function. Built against this header, the
 * descriptor declares this header's ABI version. */
#define NNP_PLUGIN(name, version, description, init)                                                    \
  NNP_PLUGIN_ENTRY {                                                                                    \
    static const nnp_plugin_descriptor nnp_plugin_descriptor_ = {                                       \
        sizeof(nnp_plugin_descriptor), NNP_ABI_MAJOR, NNP_ABI_MINOR, name, version, init, description}; \
    return &nnp_plugin_descriptor_;                                                                     \
  }

/* ---- what kernels see --------------------------------------------------- */

/* A strided view. `data` points at the first element; strides are counted in
 * elements and may be 0 (broadcast) but are never negative. */
typedef struct nnp_view {
  void* data;
  nnp_dtype dtype;
  int32_t ndim;
  int64_t shape[NNP_MAX_DIMS];
  int64_t strides[NNP_MAX_DIMS];
} nnp_view;

typedef struct nnp_kernel_ctx {
  size_t struct_size;
  void* backend_state; /* nnp_backend.state */
  int32_t device;      /* index on the backend */
  void* stream;        /* nnp_backend.stream(device), or NULL */
} nnp_kernel_ctx;
#define NNP_KERNEL_CTX_SIZE_1_0 NNP_SIZE_THROUGH(nnp_kernel_ctx, stream)

/* nnp_conv2d_params, nnp_pool2d_params and nnp_sgd_params: types.h (the table's fused entries take them too). */


/* Every kernel returns NNP_OK or a failure status after calling
 * api->set_error with a message. Unless stated otherwise, all views of one
 * call have the same shape and ndim, and output views do not overlap inputs
 * in any way other than being identical. */
typedef struct nnp_kernels {
  /* ---- since 1.0 ---- */
  size_t struct_size;
  /* dst = src converted to dst's dtype. */
  nnp_status (*copy)(const nnp_kernel_ctx* ctx, const nnp_view* src, const nnp_view* dst);
  /* Every element of dst = value (converted to dst's dtype). */
  nnp_status (*fill)(const nnp_kernel_ctx* ctx, const nnp_view* dst, double value);
  /* out = op(x). x and out have the same dtype. Float ops (exp ...) get
   * floating dtypes only; NEG/ABS/SIGN/RELU also get integer dtypes. */
  nnp_status (*unary)(const nnp_kernel_ctx* ctx, nnp_unary_op op, const nnp_view* x, const nnp_view* out);
  /* out = a op b. a and b share a dtype; out has it too, or NNP_BOOL for
   * comparisons. Arithmetic is never asked of NNP_BOOL; DIV only of floats. */
  nnp_status (*binary)(const nnp_kernel_ctx* ctx, nnp_binary_op op, const nnp_view* a, const nnp_view* b,
                       const nnp_view* out);
  /* out = cond ? a : b; cond is NNP_BOOL. */
  nnp_status (*where)(const nnp_kernel_ctx* ctx, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                      const nnp_view* out);
  /* Reduces the last `nreduce` dimensions of x (at least one element each
   * unless op is SUM or MEAN). out has x.ndim - nreduce dimensions, equal to
   * x's leading ones. out's dtype equals x's (NNP_I64 for ARGMAX/ARGMIN,
   * whose index counts row-major over the reduced dimensions). VAR divides
   * by (count - correction). */
  nnp_status (*reduce)(const nnp_kernel_ctx* ctx, nnp_reduce_op op, const nnp_view* x, int32_t nreduce,
                       double correction, const nnp_view* out);
  /* out[..., m, n] = sum_k a[..., m, k] * b[..., k, n] for floating dtypes.
   * a, b, out have ndim >= 2 and identical (already broadcast) batch
   * dimensions. */
  nnp_status (*gemm)(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* b, const nnp_view* out);
  /* Softmax (log != 0: log-softmax) of floating x along dim. */
  nnp_status (*softmax)(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, int32_t log, const nnp_view* out);
  /* out = x with dimension dim indexed by the 1-D NNP_I64 index; out.shape
   * equals x.shape except out.shape[dim] == index.shape[0]. Out-of-range
   * indices are an NNP_INVALID_ARGUMENT error. */
  nnp_status (*index_select)(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, const nnp_view* index,
                             const nnp_view* out);
  /* out[i..][j][k..] = x[i..][index[i..][j][k..]][k..] along dim; index is
   * NNP_I64 with out's shape. */
  nnp_status (*gather)(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, const nnp_view* index,
                       const nnp_view* out);
  /* out[i..][index[i..][j][k..]][k..] += src[i..][j][k..] along dim, in
   * place; index (NNP_I64) and src share a shape. */
  nnp_status (*scatter_add)(const nnp_kernel_ctx* ctx, const nnp_view* out, int32_t dim, const nnp_view* index,
                            const nnp_view* src);
  /* Fills contiguous out with Philox4x32-10 draws: element i uses counter
   * (offset + i) and key seed as nnp/philox.h defines, so every backend
   * produces the same numbers. */
  nnp_status (*random)(const nnp_kernel_ctx* ctx, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a,
                       double b, const nnp_view* out);
  /* ---- since 1.7: a table at least NNP_KERNELS_SIZE_1_7 also accepts NNP_I8
   * views wherever integer dtypes are allowed, and NNP_UNARY_ROUND. ---- */
  /* Integer GEMM for quantized layers (optional; NULL = the core computes
   * the same integers with the floating gemm):
   * out[m, n] = sum_k a[m, k] * b[n, k], exactly, in int32. a is [M, K] and
   * b is [N, K], both NNP_I8; out is [M, N] NNP_I32. All three are
   * contiguous, M, N, K >= 1 and K <= 65536, so no sum overflows. */
  nnp_status (*gemm_i8)(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* b, const nnp_view* out);
  /* ---- since 1.9 ---- */
  /* 2-D convolution, forward only (optional; NULL = the core's im2col and
   * gemm). Asked when no gradient is recorded (no_grad, eval inference):
   * out[n, o, y, x] = bias[o] + sum over the group's channels c and the
   * kernel's i, j of w[o, c, i, j] * x[n, g*C/groups + c,
   * y*stride[0] - padding[0] + i*dilation[0], x*stride[1] - padding[1] +
   * j*dilation[1]] (positions outside x read 0; g = o / (O/groups)).
   * x is [N, C, H, W], w [O, C/groups, KH, KW],
   * bias [O] or NULL, out [N, O, OH, OW]; all contiguous NNP_F32, every size
   * >= 1. (since 1.18) A table at least NNP_KERNELS_SIZE_1_18 is also handed
   * p->activation (p->struct_size >= NNP_CONV2D_PARAMS_SIZE_1_18; NONE
   * otherwise): RELU makes each output max(0, out) after the bias. */
  nnp_status (*conv2d)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* w, const nnp_view* bias,
                       const nnp_conv2d_params* p, const nnp_view* out);
  /* ---- since 1.10 ---- */
  /* 2-D max pooling, forward (optional; NULL = the core's window unfold and
   * reduction): out[n, c, y, x] = the maximum of x[n, c, y*stride[0] -
   * padding[0] + i*dilation[0], x*stride[1] - padding[1] + j*dilation[1]]
   * over the kernel's i, j, positions outside x left out; a NaN wins. x is
   * [N, C, H, W] and out [N, C, OH, OW], both contiguous NNP_F32, every size
   * >= 1; the core has chosen OH and OW (ceil_mode included) so that every
   * window holds at least one position of x. indices is NULL, or an
   * NNP_I64 view shaped as out that receives, per window, the flat position
   * (row * W + column) of its first maximum in scanning order (PyTorch's
   * return_indices); a window of nothing but -inf gives its first
   * position. */
  nnp_status (*max_pool2d)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_pool2d_params* p,
                           const nnp_view* out, const nnp_view* indices);
  /* ---- since 1.12 ---- */
  /* One SGD step for one parameter in one pass (optional; NULL = the core's
   * elementwise ops), rounding after each product and sum as PyTorch's SGD
   * does (no fused multiply-add):
   *   d = maximize ? -grad : grad;  if weight_decay != 0: d = d + weight_decay * param;
   *   if momentum != 0: buffer_out = buffer ? momentum * buffer + (1 - dampening) * d : d;
   *                     d = nesterov ? d + momentum * buffer_out : buffer_out;
   *   param_out = param + (-lr) * d.
   * (A product by 1, as (1 - dampening) * d with dampening 0, is d itself.)
   * param, grad and param_out are contiguous, of one shape and of NNP_F32 or
   * NNP_F64; buffer (NULL on the first step) and buffer_out are the same,
   * both NULL when momentum is 0. Outputs are new memory, never an input:
   * the core applies a step only once every parameter's has been computed.
   * (since 1.13) A backend whose flags hold NNP_BACKEND_SGD_IN_PLACE is instead
   * handed param_out identical to param and buffer_out identical to buffer
   * (without momentum, or once the buffer exists), after everything else of
   * the step has been computed: the kernel must then not fail, so that a
   * step stays all or nothing. In place, the step reads and writes each
   * parameter's memory once instead of filling new memory. */
  nnp_status (*sgd_step)(const nnp_kernel_ctx* ctx, const nnp_sgd_params* p, const nnp_view* param,
                         const nnp_view* grad, const nnp_view* buffer, const nnp_view* param_out,
                         const nnp_view* buffer_out);
  /* 2-D convolution, backward (optional; NULL = the core's im2col ops in
   * training): for the conv2d above with the same x, w and p, and the
   * gradient grad_out [N, O, OH, OW] of its output, writes (overwrites)
   * each of grad_x (shaped as x), grad_w (as w) and grad_bias ([O]) that is
   * not NULL. All contiguous NNP_F32, every size >= 1. With both conv2d and
   * this slot, the Conv layers take the kernels in training too. */
  nnp_status (*conv2d_backward)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* w,
                                const nnp_view* grad_out, const nnp_conv2d_params* p, const nnp_view* grad_x,
                                const nnp_view* grad_w, const nnp_view* grad_bias);
  /* ---- since 1.18 ---- */
  /* Layer normalization over the last dimension, forward only (optional;
   * NULL = the core composes mean, variance, rsqrt and products). Asked
   * when no gradient is recorded (no_grad, eval inference): for each row r
   * of x [R, N],
   *   mean = sum_j x[r, j] / N,  var = sum_j (x[r, j] - mean)^2 / N,
   *   out[r, j] = (x[r, j] - mean) / sqrt(var + eps) * weight[j] + bias[j]
   * (weight and bias each NULL or [N]: NULL multiplies by 1, adds 0).
   * x and out are contiguous NNP_F32 of one shape, R, N >= 1, eps >= 0.
   * Accumulate in at least f32 with the centred variance (not E[x^2] -
   * mean^2), so a row with a large mean keeps its precision. */
  nnp_status (*layer_norm)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* weight,
                           const nnp_view* bias, double eps, const nnp_view* out);
  /* A matrix product with its epilogue, forward only (optional; NULL = the
   * core's gemm, then the bias add and the activation as separate ops).
   * Asked where no gradient is recorded (graph mode fuses a MatMul with the
   * bias Add and the ReLU after it):
   *   out[m, n] = act(sum_k a[m, k] * b[k, n] + bias[n])
   * for NNP_F32 a [M, K] and b [K, N] with any strides (a transposed matrix
   * has strides (1, rows)), bias [N] contiguous or NULL (adds 0), out [M, N]
   * contiguous, M, N, K >= 1, activation NNP_ACTIVATION_NONE or
   * NNP_ACTIVATION_RELU. */
  nnp_status (*gemm_epilogue)(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* b, const nnp_view* bias,
                              int32_t activation, const nnp_view* out);
  /* ---- since 1.19 ---- */
  /* The GEMM of a quantized Linear or Conv2d with the quantization of its
   * activations fused into the packing and the rescaling of its sums into
   * the epilogue (optional; NULL = the core's elementwise ops around
   * gemm_i8; nothing here has a gradient):
   *   q[m, k]   = max(min(max(round_half_even(x[m, k] * inv_scale), -128), 127), offset_min)
   *               (the product rounded to f32; a NaN gives 0)
   *   out[m, n] = float(sum_k q[m, k] * w[n, k]) * scale[n] + bias[n]
   *               (the sum exact, then a product and a sum each rounded to
   *               f32: no fused multiply-add)
   * x [M, K] and out [M, N] NNP_F32, w [N, K] NNP_I8, scale [N] NNP_F32,
   * bias [N] NNP_F32 or NULL (adds 0); all contiguous, M, N, K >= 1,
   * K <= 65536, inv_scale positive and finite, -128 <= offset_min <= 0. */
  nnp_status (*quantized_gemm)(const nnp_kernel_ctx* ctx, const nnp_view* x, float inv_scale, int32_t offset_min,
                               const nnp_view* w, const nnp_view* scale, const nnp_view* bias, const nnp_view* out);
  /* A chain of elementwise ops in one pass over memory (optional; NULL =
   * the core runs them one op at a time). Asked where no gradient is
   * recorded (graph mode fuses chains of ONNX's elementwise nodes): the
   * steps in order, each as your unary or binary kernel computes it on f32
   * (within the conformance kit's tolerance: the cpu backend's exp, sigmoid,
   * tanh and SiLU here are vector code within 2 ulp of libm's), and out =
   * the last step's value. inputs: n_inputs (1 to 16)
   * NNP_F32 views shaped as out, with any strides (0 along a dimension an
   * input is broadcast over); steps: n_steps (1 to 64), unary steps any
   * NNP_UNARY_* your nnp_backend_info.unary_ops declares, binary steps
   * NNP_BINARY_ADD, _SUB, _MUL, _DIV, _MAXIMUM or _MINIMUM; out contiguous
   * NNP_F32, every size >= 1. */
  nnp_status (*elementwise_chain)(const nnp_kernel_ctx* ctx, const nnp_view* const* inputs, int32_t n_inputs,
                                  const nnp_elementwise_step* steps, int32_t n_steps, const nnp_view* out);
  /* ---- since 1.20 ---- */
  /* Scaled dot-product attention in one pass (optional; NULL = the core's
   * matmul, softmax and matmul; asked where no gradient is recorded: graph
   * mode fuses ONNX's MatMul, Softmax, MatMul). For each b:
   *   out[b] = softmax(scale * q[b] k[b]^T + mask[b]) v[b]
   * the softmax over the last axis (a row whose largest score is NaN or
   * +inf, or every score -inf, gives NaN, as the composition does).
   * q [B, L, E], k [B, S, E], v [B, S, Ev], out [B, L, Ev]: NNP_F32 views
   * with any strides (out not overlapping the others); mask: NULL (none)
   * or an NNP_F32 view shaped [B, L, S] with any strides (0 where it is
   * broadcast), added to the scaled scores; every size >= 1, E and Ev at
   * most 1024, scale finite. Within the conformance kit's tolerance of the
   * composition (sums in any order, exp within a few ulp). */
  nnp_status (*attention)(const nnp_kernel_ctx* ctx, const nnp_view* q, const nnp_view* k, const nnp_view* v,
                          const nnp_view* mask, float scale, const nnp_view* out);
  /* ---- since 1.21 ---- */
  /* Convolutions whose weight is packed once (optional, both or neither;
   * NULL = conv2d, then max_pool2d; asked where no gradient is recorded:
   * graph mode packs the weight of each convolution of an inference plan
   * once, with the ReLU and a max pooling after it fused in).
   * pool: {0, 0} for none, or {ph, pw}: out is then the max pooling of the
   * activated convolution over ph x pw windows, stride = window, no
   * padding, sizes rounded down (a NaN in a window gives NaN).
   * conv2d_pack: w [C_out, C_in, kH, kW] (NNP_F32, contiguous, every size
   * >= 1) into the backend's own layout for conv2d_packed with the same p
   * (p->groups 1) and pool. With packed NULL it only sets *bytes: the
   * size it needs, or 0 where it has no packed form for this geometry
   * (the caller then uses conv2d); otherwise packed is a contiguous
   * NNP_U8 view of *bytes elements on w's device.
   * conv2d_packed: out = pool(activation(conv(x, w) + bias)), x
   * [N, C_in, H, W] and out contiguous NNP_F32, bias NULL or [C_out],
   * packed as conv2d_pack wrote it for the same p and pool (a packed form
   * made for another geometry must be refused, not read). Within the
   * conformance kit's tolerance of the composition: the sums in any order
   * and any exact transform (Winograd's included). */
  nnp_status (*conv2d_pack)(const nnp_kernel_ctx* ctx, const nnp_view* w, const nnp_conv2d_params* p,
                            const int64_t* pool, const nnp_view* packed, int64_t* bytes);
  nnp_status (*conv2d_packed)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* packed,
                              const nnp_view* bias, const nnp_conv2d_params* p, const int64_t* pool,
                              const nnp_view* out);
  /* Products whose right operand is packed once (optional, both or
   * neither; NULL = gemm_epilogue; asked where no gradient is recorded:
   * graph mode packs the constant weight of each MatMul it fuses with its
   * bias and ReLU once per plan).
   * gemm_pack: b [K, N] (NNP_F32, any strides: a weight's transpose where
   * it lies; every size >= 1) into the backend's own layout. With packed
   * NULL it only sets *bytes: the size it needs, or 0 where it has no
   * packed form for it (the caller then uses gemm_epilogue); otherwise
   * packed is a contiguous NNP_U8 view of *bytes elements on b's device.
   * gemm_packed: out = activation(a @ b + bias) as gemm_epilogue computes
   * it, a [M, K] (NNP_F32, any strides), bias NULL or [N], out [M, N]
   * contiguous, packed as gemm_pack wrote it (one made for another K or N
   * must be refused, not read). */
  nnp_status (*gemm_pack)(const nnp_kernel_ctx* ctx, const nnp_view* b, const nnp_view* packed, int64_t* bytes);
  nnp_status (*gemm_packed)(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* packed,
                            const nnp_view* bias, int32_t activation, const nnp_view* out);
  /* ---- since 1.22 ---- */
  /* Static int8 convolutions whose weight is packed once (optional, both or
   * neither; NULL = the core's im2col, quantized_gemm and elementwise ops;
   * asked where no gradient is recorded: graph mode packs the weight of
   * each nn.quantized.Conv2d layer of an inference plan once, with a max
   * pooling after it fused in). pool as conv2d_packed's.
   * quantized_conv2d_pack: w [C_out, C_in, kH, kW] (NNP_I8, contiguous,
   * every size >= 1) into the backend's own layout for
   * quantized_conv2d_packed with the same p (groups 1, activation NONE)
   * and pool; packed and bytes as conv2d_pack's.
   * quantized_conv2d_packed: x [N, C_in, H, W] and out contiguous NNP_F32,
   * scale [C_out] NNP_F32 (the weights' scales times the input's), bias
   * NULL or [C_out] NNP_F32, and q:
   *   a = x quantized as quantized_gemm quantizes it (q->input_inv_scale,
   *       q->input_offset_min); 0 where a window reads the padding
   *   s[n, o, y, x] = float(sum over c, i, j of a * w) * scale[o] + bias[o]
   *       (the sum exact, then a product and a sum each rounded to f32)
   *   r = (min(max(round_half_even(s * q->output_inv_scale)
   *       + q->output_zero_point, q->output_min), q->output_max)
   *       - q->output_zero_point) * q->output_scale
   *       (each step rounded to f32; a NaN stays NaN)
   *   out = pool(r)
   * exactly; packed as quantized_conv2d_pack wrote it for the same p and
   * pool (one made for another geometry must be refused, not read). */
  nnp_status (*quantized_conv2d_pack)(const nnp_kernel_ctx* ctx, const nnp_view* w, const nnp_conv2d_params* p,
                                      const int64_t* pool, const nnp_view* packed, int64_t* bytes);
  nnp_status (*quantized_conv2d_packed)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* packed,
                                        const nnp_view* scale, const nnp_view* bias,
                                        const nnp_quantized_conv2d_params* q, const nnp_conv2d_params* p,
                                        const int64_t* pool, const nnp_view* out);
  /* ---- since 1.23 ---- */
  /* A residual sum and its layer normalization in one pass, forward only
   * (optional; NULL = the core's add, then layer_norm). Asked where no
   * gradient is recorded (graph mode fuses an Add whose one reader is a
   * LayerNormalization over the last axis: a post-norm transformer's
   * residual; ONNX Runtime calls it SkipLayerNormalization): for each row r,
   *   s[r, j] = a[r, j] + b[r, j]  (rounded to f32, as the add would)
   * and out[r, :] = layer_norm(s[r, :]) as layer_norm computes it (weight
   * and bias the same). a, b and out are NNP_F32 views of one shape
   * [..., N] (rank 1 to NNP_MAX_DIMS, every size >= 1); a and b with any
   * strides whose last is 1 (a transposed residual reads where it lies),
   * out contiguous and overlapping neither; eps >= 0. */
  nnp_status (*add_layer_norm)(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* b,
                               const nnp_view* weight, const nnp_view* bias, double eps, const nnp_view* out);
  /* ---- since 1.26 ---- */
  /* ReLU's backward and the column sums of its result in one pass
   * (optional; NULL = the core's le, where and reduce). Asked by a captured
   * step's tape (nnp_api.step_compile) where a ReLU's gradient is then
   * summed over its rows (a Linear's bias gradient), or alone:
   *   grad_in[m, n] = result[m, n] <= 0 ? 0 : grad[m, n]
   *       (a NaN result passes the gradient, as PyTorch's threshold_backward)
   *   column_sums[n] = sum over m of grad_in[m, n]
   *       (as your reduce kernel sums dim 0 of grad_in: within the
   *       conformance kit's tolerance, any order)
   * result, grad and grad_in: contiguous NNP_F32 [M, N], every size >= 1,
   * grad_in overlapping neither of the others; column_sums: NULL (none) or
   * a contiguous NNP_F32 [N] overlapping none of the others. */
  nnp_status (*relu_backward)(const nnp_kernel_ctx* ctx, const nnp_view* result, const nnp_view* grad,
                              const nnp_view* grad_in, const nnp_view* column_sums);
  /* ---- since 1.27 ---- */
  /* A gradient scaler's unscale in one pass (optional; NULL = the core's
   * sub, ne, reduce and mul): grad[i] *= inv_scale in place, and found[0]
   * set to 1 when any grad[i] was inf or NaN before scaling (left as it was
   * otherwise). PyTorch's _amp_foreach_non_finite_check_and_unscale_, one
   * gradient a call. grad: a contiguous NNP_F32 or NNP_F64 view, numel >=
   * 1 (the product in the view's dtype, inv_scale rounded to it first);
   * found: a contiguous NNP_F32 [1] not overlapping grad. Other dtypes: return
   * NNP_DTYPE_MISMATCH and the core composes. */
  nnp_status (*unscale_check)(const nnp_kernel_ctx* ctx, const nnp_view* grad, double inv_scale,
                              const nnp_view* found);
  /* ---- since 1.29 ---- */
  /* ONNX's ConvInteger from a weight packed once (optional, both or
   * neither; NULL = the core's exact composition in floating point; asked
   * where no gradient is recorded: graph mode packs the constant weight of
   * each ConvInteger node once per plan, as dynamically quantized models
   * carry them):
   *   out[n, o, y, x] = sum over c, i, j of (x[n, c, y*stride[0] -
   *       padding[0] + i*dilation[0], x*stride[1] - padding[1] +
   *       j*dilation[1]] - x_zero) * (w[o, c, i, j] - w_zero[o])
   * exactly, in int32 (a window's reads outside x add 0, as ONNX's
   * ConvInteger pads with the zero point).
   * conv2d_integer_pack: w [C_out, C_in, kH, kW] (NNP_U8 or NNP_I8,
   * contiguous, every size >= 1, C_in * kH * kW <= 32768 so that no sum
   * overflows), w_zero NULL (0) or a contiguous view of w's dtype with 1
   * value (every channel's) or C_out; p as conv2d's with activation NONE
   * and groups 1, or depthwise: groups = C_out, w [C_out, 1, kH, kW] and x
   * of C_out channels, each output channel summing its own; packed and
   * bytes as conv2d_pack's (*bytes = 0: no packed form for it, and the
   * core composes).
   * conv2d_integer_packed: x [N, C_in, H, W] contiguous NNP_U8 or NNP_I8;
   * x_zero NULL (0) or one value of x's dtype on x's device (read by the
   * kernel: a dynamically quantized input's zero point is computed on the
   * device each call); out [N, C_out, H', W'] contiguous NNP_I32; p the one
   * the weight was packed for (another must be refused, not read). */
  nnp_status (*conv2d_integer_pack)(const nnp_kernel_ctx* ctx, const nnp_view* w, const nnp_view* w_zero,
                                    const nnp_conv2d_params* p, const nnp_view* packed, int64_t* bytes);
  nnp_status (*conv2d_integer_packed)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* x_zero,
                                      const nnp_view* packed, const nnp_conv2d_params* p, const nnp_view* out);
  /* ONNX's DynamicQuantizeLinear with its range computed on the device
   * (optional; NULL = the core's reductions, read on the host, and
   * elementwise ops; asked where no gradient is recorded: graph mode runs
   * each DynamicQuantizeLinear node with it, and nothing is read on the
   * host). Each step rounded to f32, as ONNX Runtime computes it:
   *   low = min(0, min of x), high = max(0, max of x)
   *   scale[0] = (high - low) / 255
   *   zero[0] = scale[0] == 0 ? 0 : round_half_even(min(255, max(0, -low / scale[0])))
   *       (a NaN quotient gives 0)
   *   y = min(255, max(0, round_half_even(x / scale[0]) + zero[0])),
   *       or zero[0] everywhere where scale[0] is 0 or not finite
   * x contiguous NNP_F32 (numel >= 1), y contiguous NNP_U8 of x's shape,
   * scale one NNP_F32 value and zero one NNP_U8 (0-d, as ONNX's), all on
   * x's device. A NaN in x has
   * no range: return NNP_INVALID_ARGUMENT, saying so. */
  nnp_status (*dynamic_quantize_linear)(const nnp_kernel_ctx* ctx, const nnp_view* x, const nnp_view* y,
                                        const nnp_view* scale, const nnp_view* zero);
} nnp_kernels;
#define NNP_KERNELS_SIZE_1_0 NNP_SIZE_THROUGH(nnp_kernels, random)
#define NNP_KERNELS_SIZE_1_7 NNP_SIZE_THROUGH(nnp_kernels, gemm_i8)
#define NNP_KERNELS_SIZE_1_9 NNP_SIZE_THROUGH(nnp_kernels, conv2d)
#define NNP_KERNELS_SIZE_1_10 NNP_SIZE_THROUGH(nnp_kernels, max_pool2d)
#define NNP_KERNELS_SIZE_1_12 NNP_SIZE_THROUGH(nnp_kernels, conv2d_backward)
#define NNP_KERNELS_SIZE_1_18 NNP_SIZE_THROUGH(nnp_kernels, gemm_epilogue)
#define NNP_KERNELS_SIZE_1_19 NNP_SIZE_THROUGH(nnp_kernels, elementwise_chain)
#define NNP_KERNELS_SIZE_1_20 NNP_SIZE_THROUGH(nnp_kernels, attention)
#define NNP_KERNELS_SIZE_1_21 NNP_SIZE_THROUGH(nnp_kernels, gemm_packed)
#define NNP_KERNELS_SIZE_1_22 NNP_SIZE_THROUGH(nnp_kernels, quantized_conv2d_packed)
#define NNP_KERNELS_SIZE_1_23 NNP_SIZE_THROUGH(nnp_kernels, add_layer_norm)
#define NNP_KERNELS_SIZE_1_26 NNP_SIZE_THROUGH(nnp_kernels, relu_backward)
#define NNP_KERNELS_SIZE_1_27 NNP_SIZE_THROUGH(nnp_kernels, unscale_check)
#define NNP_KERNELS_SIZE_1_29 NNP_SIZE_THROUGH(nnp_kernels, dynamic_quantize_linear)

/* ---- graphs a backend compiles (since 1.24) ------------------------------ */

/* A graph as the core hands it to a backend's capability and compile: ONNX's
 * op vocabulary over numbered values with nnplug's dtypes. Everything it
 * points to lives for the call only. */
typedef struct nnp_graph_value {
  size_t struct_size;
  const char* name; /* the ONNX value name, for messages ("" if none) */
  nnp_dtype dtype;
  int32_t ndim;
  const int64_t* shape; /* ndim sizes, as in the call that made the plan */
  /* A constant (a weight, a folded value): its elements, contiguous in host
   * memory, for a backend that folds or uploads weights at compile time;
   * NULL for values computed per call. A constant a subgraph reads is also
   * one of its inputs, given again at every execute. */
  const void* constant;
} nnp_graph_value;
#define NNP_GRAPH_VALUE_SIZE_1_24 NNP_SIZE_THROUGH(nnp_graph_value, constant)

typedef struct nnp_graph_node {
  size_t struct_size;
  const char* op_type;    /* "MatMul", "Relu", "Conv", ... */
  const char* domain;     /* "" for ONNX's own operators */
  const nnp_attrs* attrs; /* its ONNX attributes by name: api->attrs_get_int(attrs, "transB", &v) ... */
  const int32_t* inputs;  /* value indices; -1 for an omitted optional input */
  int32_t n_inputs;
  const int32_t* outputs;
  int32_t n_outputs;
} nnp_graph_node;
#define NNP_GRAPH_NODE_SIZE_1_24 NNP_SIZE_THROUGH(nnp_graph_node, n_outputs)

typedef struct nnp_graph {
  size_t struct_size;
  const nnp_graph_value* values;
  int32_t n_values;
  const nnp_graph_node* nodes; /* in an order where each value is written before it is read */
  int32_t n_nodes;
  const int32_t* inputs; /* the values execute is given, in order */
  int32_t n_inputs;
  const int32_t* outputs; /* the values execute writes, in order */
  int32_t n_outputs;
} nnp_graph;
#define NNP_GRAPH_SIZE_1_24 NNP_SIZE_THROUGH(nnp_graph, n_outputs)

/* ---- the backend -------------------------------------------------------- */

/* Every slot is required unless its comment says "(optional; NULL = ...)";
 * NNP_BACKEND_REQUIRED_SLOTS and NNP_KERNELS_REQUIRED_SLOTS below list the
 * required ones. The core copies the struct at registration; `name` and the
 * kernel table must live until process exit (static). */
typedef struct nnp_backend {
  size_t struct_size;
  const char* name; /* "cpu", "cuda", ...: the device prefix */
  int32_t score;    /* preference for "auto"; cpu is 100 */
  uint32_t flags;   /* NNP_BACKEND_* (nnp.h) */
  void* state;      /* passed back to every call (optional; NULL = stateless) */
  /* How many devices; 0 when the hardware or driver is missing. Must be cheap
   * and must not create device contexts. */
  int32_t (*device_count)(void* state);
  /* Why device_count is 0 (the runtime's error text). The string lives
   * until process exit. (optional; NULL = no reason given, "") */
  const char* (*unavailable_reason)(void* state);
  nnp_status (*device_info)(void* state, int32_t device, nnp_device_info* out);
  /* Memory. alloc of 0 bytes may return any pointer, including NULL. */
  nnp_status (*alloc)(void* state, int32_t device, size_t bytes, void** out);
  void (*free)(void* state, int32_t device, void* ptr, size_t bytes);
  nnp_status (*copy_from_host)(void* state, int32_t device, void* dst, const void* src, size_t bytes);
  nnp_status (*copy_to_host)(void* state, int32_t device, void* dst, const void* src, size_t bytes);
  nnp_status (*copy_on_device)(void* state, int32_t device, void* dst, const void* src, size_t bytes);
  nnp_status (*synchronize)(void* state, int32_t device);
  /* The stream kernels on `device` run on. (optional; NULL = the backend
   * has no streams, kernels see ctx->stream == NULL) */
  void* (*stream)(void* state, int32_t device);
  const nnp_kernels* kernels;
  /* (since 1.6) Timing events, for the profiler's device time (optional: all
   * three or none). event_record marks the point the device's stream has
   * reached (queued, not waited for) and gives a handle; event_elapsed_us
   * waits for both marks and gives the microseconds between them;
   * event_release frees a handle. The cpu backend marks the host clock;
   * CUDA and HIP record events on their stream. */
  nnp_status (*event_record)(void* state, int32_t device, void** event);
  nnp_status (*event_elapsed_us)(void* state, int32_t device, void* start, void* end, double* us);
  void (*event_release)(void* state, int32_t device, void* event);
  /* (since 1.16) What the kernels compute, declared rather than assumed from
   * the headers a backend was built with, so rebuilding an unchanged backend
   * against a newer SDK never hands it a dtype or op it has never seen.
   * dtypes: one bit a dtype (NNP_DTYPE_BIT(NNP_I8) | ...); it must include
   * f32, i64 and bool. 0 = the eight dtypes of ABI 1.0 (NNP_DTYPES_1_0).
   * The core places no other dtype on the backend (NNP_DTYPE_MISMATCH naming
   * both) and the conformance kit tests only these. unary_ops: one bit a
   * nnp_unary_op; 0 = those of ABI 1.0 (NNP_UNARY_OPS_1_0); an op outside it
   * is refused with NNP_UNIMPLEMENTED before the kernel is called. Name the
   * sets by the version that defined them (NNP_DTYPES_1_7), never "all":
   * "all" would grow with the next SDK. */
  uint32_t dtypes;
  uint32_t unary_ops;
  /* (since 1.24) The required kernel slots this backend lacks, one bit a
   * slot (NNP_KERNEL_SLOT_BIT(NNP_KERNEL_WHERE) | ...; 0 = it has all).
   * Those slots may be NULL (a non-NULL one is not called): the core runs
   * their ops on the cpu backend, copying the operands to host memory and
   * the results back with copy_to_host / copy_from_host (the profiler shows
   * each copy as an NNP_PROFILE_COPY event). A slot left NULL but not
   * declared here is still refused at registration, naming it. */
  uint32_t missing_kernels;
  /* (since 1.24) Graphs the backend compiles (optional: all four or none),
   * as ONNX Runtime's execution providers and PJRT plugins do. In graph
   * mode (module_compile, an imported ONNX model) on one of its devices,
   * the core describes the plan's nodes (nnp_graph below) and asks
   * capability which it runs; each run of consecutive claimed nodes is
   * compiled once into an executable, and every call of the plan executes
   * it. The nodes it does not claim run on the cpu backend, the values that
   * cross between the two copied (NNP_PROFILE_COPY events). A plan is made
   * for the shapes of the call that made it and made again for others.
   *   capability: claimed[i] = 1 for each node i of graph it runs, else 0
   *     (claimed is zeroed, one byte a node). Claim only what compile and
   *     execute accept: the conformance kit checks claims are honest.
   *   compile: an executable for subgraph, which holds claimed nodes only;
   *     its values' constant bytes live only during the call.
   *   execute: runs it. inputs and outputs are contiguous views on `device`
   *     in the order of subgraph->inputs and ->outputs, shaped as its
   *     values say; the core allocated the outputs. Threads sharing a
   *     compiled module may execute one executable at the same time.
   *   release: frees an executable (the plan is gone). */
  nnp_status (*capability)(void* state, int32_t device, const nnp_graph* graph, uint8_t* claimed);
  nnp_status (*compile)(void* state, int32_t device, const nnp_graph* subgraph, void** executable);
  nnp_status (*execute)(void* state, int32_t device, void* executable, const nnp_view* inputs, int32_t n_inputs,
                        const nnp_view* outputs, int32_t n_outputs);
  void (*release)(void* state, int32_t device, void* executable);
  /* (since 1.27) The dtype autocast runs this backend's lower-precision ops
   * in when a scope names none (nnp_autocast_enter with dtype
   * NNP_AUTOCAST_PREFERRED): NNP_BF16 or NNP_F16. Any other value means no
   * preference: bf16 for a backend with NNP_BACKEND_HOST_MEMORY, else f16
   * (PyTorch's defaults for its CPU and CUDA). */
  int32_t autocast_dtype;
} nnp_backend;
#define NNP_BACKEND_SIZE_1_0 NNP_SIZE_THROUGH(nnp_backend, kernels)
#define NNP_BACKEND_SIZE_1_6 NNP_SIZE_THROUGH(nnp_backend, event_release)
#define NNP_BACKEND_SIZE_1_16 NNP_SIZE_THROUGH(nnp_backend, unary_ops)
#define NNP_BACKEND_SIZE_1_24 NNP_SIZE_THROUGH(nnp_backend, release)
#define NNP_BACKEND_SIZE_1_27 NNP_SIZE_THROUGH(nnp_backend, autocast_dtype)

/* The slots that may not be NULL, as X-macro lists (X(slot) for each): the
 * core's registration check is generated from them, so the check and the
 * slot it names cannot drift apart. Every slot not listed is optional. */
#define NNP_BACKEND_REQUIRED_SLOTS(X) \
  X(device_count)                     \
  X(device_info) X(alloc) X(free) X(copy_from_host) X(copy_to_host) X(copy_on_device) X(synchronize) X(kernels)
#define NNP_KERNELS_REQUIRED_SLOTS(X) \
  X(copy)                             \
  X(fill) X(unary) X(binary) X(where) X(reduce) X(gemm) X(softmax) X(index_select) X(gather) X(scatter_add) X(random)
/* (since 1.12) The optional kernel slots, in the same form. */
#define NNP_KERNELS_OPTIONAL_SLOTS(X) X(gemm_i8) X(conv2d) X(max_pool2d) X(sgd_step) X(conv2d_backward) X(layer_norm) \
  X(gemm_epilogue) X(quantized_gemm) X(elementwise_chain) X(attention) X(conv2d_pack) X(conv2d_packed) \
  X(gemm_pack) X(gemm_packed) X(quantized_conv2d_pack) X(quantized_conv2d_packed) X(add_layer_norm) \
  X(relu_backward) X(unscale_check) X(conv2d_integer_pack) X(conv2d_integer_packed) \
  X(dynamic_quantize_linear)

/* ---- communication backends (since 1.10) -------------------------------------- */

/* The rendezvous store the core hands a communication backend: a key-value
 * store every rank of the group reaches, its keys already private to the
 * group. Values are at most 16 MB. */
typedef struct nnp_comm_store {
  size_t struct_size;
  void* state;
  /* Sets (or replaces) key's value. */
  nnp_status (*set)(void* state, const char* key, const void* value, size_t size);
  /* Waits until key exists (NNP_TIMEOUT after timeout_ms), then copies up
   * to capacity bytes of its value into value (may be NULL with capacity 0)
   * and its whole length into *size. */
  nnp_status (*get)(void* state, const char* key, void* value, size_t capacity, size_t* size, int64_t timeout_ms);
  /* (since 1.16) The address (numeric, IPv4 or IPv6) of this rank's
   * interface toward rank 0's tcp:// store, or NULL (a file:// store): the
   * backend's own listeners bind there, not to every interface. */
  const char* local_address;
} nnp_comm_store;
#define NNP_COMM_STORE_SIZE_1_10 NNP_SIZE_THROUGH(nnp_comm_store, get)
#define NNP_COMM_STORE_SIZE_1_16 NNP_SIZE_THROUGH(nnp_comm_store, local_address)

/* What a communication backend keeps for one group and one collective. */
typedef struct nnp_comm_group nnp_comm_group;
typedef struct nnp_comm_work nnp_comm_work;

/* A communication backend: collectives over the processes of a group, on an
 * existing engine (Gloo, NCCL, MPI). Every slot is required. The core checks
 * ranks, devices, dtypes, contiguity and sizes before calling; the views of
 * one collective stay valid until its work completes. A failure names the
 * peer where the engine says which. Each group's calls come from one thread
 * at a time. */
typedef struct nnp_comm {
  size_t struct_size;
  const char* name;     /* lower-case letters, digits, '_': what process groups name */
  const char* backends; /* the device backends whose tensors it moves, comma-separated: "cpu,reference" */
  void* state;          /* passed back to group_new and group_release (optional; NULL = stateless) */
  /* Joins the group as `rank` of `world_size` on `device` (the device of the
   * tensors to come; a host backend ignores it), meeting the other ranks
   * through store. No later wait of the group may outlast timeout_ms. */
  nnp_status (*group_new)(void* state, int32_t rank, int32_t world_size, nnp_device device, const nnp_comm_store* store,
                          int64_t timeout_ms, nnp_comm_group** out);
  /* Called once the group's works have completed or failed. */
  void (*group_release)(void* state, nnp_comm_group* group);
  /* Start a collective, giving its work. tensor, input and output are
   * contiguous, of one dtype; all_gather's output has world_size times the
   * input's elements and reduce_scatter's input world_size times the
   * output's. NNP_COMM_AVG comes only with floating dtypes. */
  nnp_status (*all_reduce)(nnp_comm_group* group, const nnp_view* tensor, nnp_comm_op op, nnp_comm_work** out);
  nnp_status (*broadcast)(nnp_comm_group* group, const nnp_view* tensor, int32_t root, nnp_comm_work** out);
  nnp_status (*all_gather)(nnp_comm_group* group, const nnp_view* input, const nnp_view* output, nnp_comm_work** out);
  nnp_status (*reduce_scatter)(nnp_comm_group* group, const nnp_view* input, const nnp_view* output, nnp_comm_op op,
                               nnp_comm_work** out);
  nnp_status (*barrier)(nnp_comm_group* group, nnp_comm_work** out);
  /* The work's status once complete; NNP_TIMEOUT after timeout_ms. */
  nnp_status (*wait)(nnp_comm_work* work, int64_t timeout_ms);
  nnp_status (*test)(nnp_comm_work* work, int32_t* done);
  /* Frees a work that has completed (or whose wait failed). */
  void (*work_release)(nnp_comm_work* work);
  /* (since 1.11; optional) NULL when the backend can form groups here, else why
   * not ("no CUDA device: ..."), a string that lives until the plugin is
   * unloaded. A plugin for a device runtime opens the runtime here or in
   * group_new, never in its entry or init, so that it loads anywhere. */
  const char* (*unavailable_reason)(void* state);
} nnp_comm;
#define NNP_COMM_SIZE_1_10 NNP_SIZE_THROUGH(nnp_comm, work_release)
#define NNP_COMM_SIZE_1_11 NNP_SIZE_THROUGH(nnp_comm, unavailable_reason)

#define NNP_COMM_REQUIRED_SLOTS(X) \
  X(group_new)                     \
  X(group_release) X(all_reduce) X(broadcast) X(all_gather) X(reduce_scatter) X(barrier) X(wait) X(test) X(work_release)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNP_PLUGIN_H */
