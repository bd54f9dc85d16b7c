// Every entry of the table answers a NULL argument the same way: a status of
// NNP_INVALID_ARGUMENT and a message naming the entry and the argument,
// never a crash and never a half-done call (core/api/arguments.hpp).
#include <gtest/gtest.h>

#include <functional>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace {

struct NullCase {
  const char* name;      // the entry, as the message names it
  const char* argument;  // the argument left NULL
  std::function<nnp_status()> call;
};

class ApiArguments : public ::testing::Test {
 protected:
  const nnp_api& api = nnp::api();
  nnp::Tensor x = nnp::ones({2, 3});
  nnp::Tensor index = nnp::zeros({2}, nnp::Dtype::i64);
  nnp::nn::ModuleHandle linear =
      nnp::nn::create_layer("nn.Linear", nnp::nn::Attrs().set("in_features", 3).set("out_features", 2));
  nnp::nn::Attrs attrs = std::move(nnp::nn::Attrs().set("k", 1));
  // Parameter structs sized as a caller sizes them, for the fused entries.
  nnp_conv2d_params conv = sized<nnp_conv2d_params>();
  nnp_pool2d_params pool = sized<nnp_pool2d_params>();
  nnp_sgd_params sgd = sized<nnp_sgd_params>();

  template <typename T>
  static T sized() {
    T params{};
    params.struct_size = sizeof params;
    return params;
  }
};

TEST_F(ApiArguments, NullOutputsAreRefusedNamingThem) {
  nnp_tensor* t = x.get();
  nnp_module* m = linear.handle();
  const int64_t shape[2] = {3, 2};
  const int32_t dims[2] = {1, 0};
  const nnp_tensor* pair[2] = {t, t};
  nnp_list* params = nullptr;
  ASSERT_EQ(api.named_parameters(m, "", 1, 1, &params), NNP_OK);
  nnp_tensor* unused = nullptr;
  std::vector<NullCase> cases = {
      {"empty", "out", [&] { return api.empty(shape, 2, NNP_F32, x.device().raw(), nullptr); }},
      {"full", "out", [&] { return api.full(shape, 2, 1.0, NNP_F32, x.device().raw(), nullptr); }},
      {"arange", "out", [&] { return api.arange(0, 3, 1, NNP_I64, x.device().raw(), nullptr); }},
      {"random", "out",
       [&] { return api.random(NNP_RANDOM_NORMAL, 0, 1, shape, 2, NNP_F32, x.device().raw(), nullptr); }},
      {"to", "out", [&] { return api.to(t, x.device().raw(), NNP_F64, nullptr); }},
      {"view", "out", [&] { return api.view(t, shape, 2, nullptr); }},
      {"reshape", "out", [&] { return api.reshape(t, shape, 2, nullptr); }},
      {"transpose", "out", [&] { return api.transpose(t, 0, 1, nullptr); }},
      {"permute", "out", [&] { return api.permute(t, dims, 2, nullptr); }},
      {"slice", "out", [&] { return api.slice(t, 0, 0, 1, 1, nullptr); }},
      {"clone", "out", [&] { return api.clone(t, nullptr); }},
      {"unary", "out", [&] { return api.unary(NNP_UNARY_EXP, t, nullptr); }},
      {"binary", "out", [&] { return api.binary(NNP_BINARY_ADD, t, t, nullptr); }},
      {"reduce", "out", [&] { return api.reduce(NNP_REDUCE_SUM, t, nullptr, 0, 0, 0, nullptr); }},
      {"matmul", "out", [&] { return api.matmul(t, t, nullptr); }},
      {"softmax", "out", [&] { return api.softmax(t, 1, 0, nullptr); }},
      {"cat", "out", [&] { return api.cat(pair, 2, 0, nullptr); }},
      {"index_select", "out", [&] { return api.index_select(t, 0, index.get(), nullptr); }},
      {"grad", "out", [&] { return api.grad(t, nullptr); }},
      {"detach", "out", [&] { return api.detach(t, nullptr); }},
      {"device_parse", "out", [&] { return api.device_parse("cpu", nullptr); }},
      {"device_stream", "out", [&] { return api.device_stream(x.device().raw(), nullptr); }},
      {"list_create", "out", [&] { return api.list_create(nullptr); }},
      {"attrs_create", "out", [&] { return api.attrs_create(nullptr); }},
      {"attrs_get_int", "out", [&] { return api.attrs_get_int(attrs.get(), "k", nullptr); }},
      {"attrs_get_float", "out", [&] { return api.attrs_get_float(attrs.get(), "k", nullptr); }},
      {"container_create", "out", [&] { return api.container_create(NNP_SEQUENTIAL, nullptr); }},
      {"get_parameter", "out", [&] { return api.get_parameter(m, "weight", nullptr); }},
      {"get_submodule", "out", [&] { return api.get_submodule(m, "", nullptr); }},
      {"named_parameters", "out", [&] { return api.named_parameters(m, "", 1, 1, nullptr); }},
      {"state_dict", "out", [&] { return api.state_dict(m, "", 0, nullptr); }},
      {"module_call", "out", [&] { return api.module_call(m, pair, 1, nullptr); }},
      {"layer_create", "out", [&] { return api.layer_create("nn.ReLU", nullptr, nullptr); }},
      {"layer_type_info", "out", [&] { return api.layer_type_info(0, nullptr); }},
      {"layer_type_plugin", "out", [&] { return api.layer_type_plugin(0, nullptr); }},
      {"plugin_info", "out", [&] { return api.plugin_info(0, nullptr); }},
      {"backend_info", "out", [&] { return api.backend_info(0, nullptr); }},
      {"optimizer_create", "out", [&] { return api.optimizer_create("SGD", params, nullptr, nullptr); }},
      {"model_from_spec", "out", [&] { return api.model_from_spec("{\"type\": \"nn.ReLU\"}", nullptr); }},
      {"to_dlpack", "out", [&] { return api.to_dlpack(t, nullptr); }},
      {"module_call_values", "out", [&] { return api.module_call_values(m, params, nullptr); }},
      {"list_int", "out", [&] { return api.list_int(params, 0, nullptr); }},
      {"list_float", "out", [&] { return api.list_float(params, 0, nullptr); }},
      {"list_bool", "out", [&] { return api.list_bool(params, 0, nullptr); }},
      {"op_info", "out", [&] { return api.op_info(0, nullptr); }},
      {"conv2d_fused", "out", [&] { return api.conv2d_fused(t, t, nullptr, &conv, nullptr); }},
      {"max_pool2d_fused", "values", [&] { return api.max_pool2d_fused(t, &pool, 1, 1, nullptr, nullptr); }},
      {"optimizer_kind_info", "out", [&] { return api.optimizer_kind_info(0, nullptr); }},
      {"graph_op_info", "out", [&] { return api.graph_op_info(0, nullptr); }},
      {"safetensors_metadata_all", "out", [&] { return api.safetensors_metadata_all("m.safetensors", nullptr); }},
      {"sgd_step_fused", "param_out", [&] { return api.sgd_step_fused(t, t, nullptr, &sgd, nullptr, &unused); }},
      {"sgd_step_fused", "buffer_out", [&] { return api.sgd_step_fused(t, t, nullptr, &sgd, &unused, nullptr); }},
      {"quantized_matmul", "out", [&] { return api.quantized_matmul(t, 0.1, 0, t, t, nullptr, nullptr); }},
      {"module_compile", "out", [&] { return api.module_compile(m, pair, 1, nullptr, nullptr); }},
  };
  for (const NullCase& c : cases) {
    EXPECT_EQ(c.call(), NNP_INVALID_ARGUMENT) << c.name;
    std::string message = api.last_error();
    EXPECT_NE(message.find(c.name), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find(std::string("'") + c.argument + "'"), std::string::npos)
        << c.name << " " << c.argument << ": " << message;
  }
  api.list_release(params);
}

TEST_F(ApiArguments, NullInputsAreRefusedNamingThem) {
  nnp_tensor* out = nullptr;
  nnp_optimizer* opt = nullptr;
  nnp_tensor* buffer = nullptr;
  double value = 0;
  nnp::detail::List list;
  nnp_list* results = nullptr;
  std::vector<NullCase> cases = {
      {"clone", "t", [&] { return api.clone(nullptr, &out); }},
      {"binary", "b", [&] { return api.binary(NNP_BINARY_ADD, x.get(), nullptr, &out); }},
      {"index_select", "index", [&] { return api.index_select(x.get(), 0, nullptr, &out); }},
      {"copy_into", "dst", [&] { return api.copy_into(nullptr, x.get()); }},
      {"assign", "dst", [&] { return api.assign(nullptr, x.get()); }},
      {"assign", "value", [&] { return api.assign(x.get(), nullptr); }},
      {"module_train", "m", [&] { return api.module_train(nullptr, 1); }},
      {"list_append_tensor", "list", [&] { return api.list_append_tensor(nullptr, "w", x.get()); }},
      {"list_append_string", "value", [&] { return api.list_append_string(list.get(), "", nullptr); }},
      {"list_append_int", "name", [&] { return api.list_append_int(list.get(), nullptr, 1); }},
      {"module_call_values", "args", [&] { return api.module_call_values(linear.handle(), nullptr, &results); }},
      {"module_register_values_hook", "fn",
       [&] {
         nnp_hook_handle* h = nullptr;
         return api.module_register_values_hook(linear.handle(), NNP_HOOK_FORWARD, nullptr, nullptr, nullptr, 0, &h);
       }},
      {"attrs_get_int", "attrs",
       [&] {
         int64_t v = 0;
         return api.attrs_get_int(nullptr, "k", &v);
       }},
      {"optimizer_step", "opt", [&] { return api.optimizer_step(opt); }},
      {"optimizer_get_option", "opt", [&] { return api.optimizer_get_option(nullptr, 0, "lr", &value); }},
      {"load_plugin", "path", [&] { return api.load_plugin(nullptr); }},
      {"safetensors_metadata_all", "path", [&] { return api.safetensors_metadata_all(nullptr, &results); }},
      {"module_save", "path", [&] { return api.module_save(linear.handle(), nullptr); }},
      {"layer_create", "type",
       [&] {
         nnp_module* m = nullptr;
         return api.layer_create(nullptr, nullptr, &m);
       }},
      {"conv2d_fused", "x", [&] { return api.conv2d_fused(nullptr, x.get(), nullptr, &conv, &out); }},
      {"conv2d_fused", "w", [&] { return api.conv2d_fused(x.get(), nullptr, nullptr, &conv, &out); }},
      {"conv2d_fused", "p", [&] { return api.conv2d_fused(x.get(), x.get(), nullptr, nullptr, &out); }},
      {"max_pool2d_fused", "x", [&] { return api.max_pool2d_fused(nullptr, &pool, 1, 1, &out, nullptr); }},
      {"max_pool2d_fused", "p", [&] { return api.max_pool2d_fused(x.get(), nullptr, 1, 1, &out, nullptr); }},
      {"sgd_step_fused", "param", [&] { return api.sgd_step_fused(nullptr, x.get(), nullptr, &sgd, &out, &buffer); }},
      {"sgd_step_fused", "grad", [&] { return api.sgd_step_fused(x.get(), nullptr, nullptr, &sgd, &out, &buffer); }},
      {"sgd_step_fused", "p", [&] { return api.sgd_step_fused(x.get(), x.get(), nullptr, nullptr, &out, &buffer); }},
      {"quantized_matmul", "x", [&] { return api.quantized_matmul(nullptr, 0.1, 0, x.get(), x.get(), nullptr, &out); }},
      {"quantized_matmul", "w", [&] { return api.quantized_matmul(x.get(), 0.1, 0, nullptr, x.get(), nullptr, &out); }},
      {"quantized_matmul", "col_scale",
       [&] { return api.quantized_matmul(x.get(), 0.1, 0, x.get(), nullptr, nullptr, &out); }},
      {"module_compile", "module",
       [&] {
         nnp_module* m = nullptr;
         const nnp_tensor* in[] = {x.get()};
         return api.module_compile(nullptr, in, 1, nullptr, &m);
       }},
      {"module_compile", "example_inputs",
       [&] {
         nnp_module* m = nullptr;
         return api.module_compile(linear.handle(), nullptr, 1, nullptr, &m);
       }},
      {"module_compile_explain", "compiled",
       [&] {
         size_t needed = 0;
         return api.module_compile_explain(nullptr, nullptr, 0, &needed);
       }},
  };
  for (const NullCase& c : cases) {
    EXPECT_EQ(c.call(), NNP_INVALID_ARGUMENT) << c.name;
    std::string message = api.last_error();
    EXPECT_NE(message.find(c.name), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find(std::string("'") + c.argument + "'"), std::string::npos)
        << c.name << " " << c.argument << ": " << message;
  }
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(results, nullptr);
}

// Optional outputs stay optional (nnp.h says "may be NULL" for each).
TEST_F(ApiArguments, DocumentedOptionalOutputsMayBeNull) {
  EXPECT_EQ(api.load_state_dict(linear.handle(), nullptr, 1, 0, nullptr, nullptr), NNP_INVALID_ARGUMENT);
  nnp_list* state = nullptr;
  ASSERT_EQ(api.state_dict(linear.handle(), "", 0, &state), NNP_OK);
  EXPECT_EQ(api.load_state_dict(linear.handle(), state, 1, 0, nullptr, nullptr), NNP_OK) << api.last_error();
  api.list_release(state);
  nnp::nn::Attrs ints;
  ints.set("ks", std::vector<int64_t>{3, 4});
  int64_t values[2] = {};
  EXPECT_EQ(api.attrs_get_ints(ints.get(), "ks", values, 2, nullptr), NNP_OK);
  EXPECT_EQ(values[1], 4);
  api.get_rng_state(nullptr, nullptr);
}

}  // namespace

// attrs_has answers without failing, for NULL too, and sees NONE as absent
// (nn::Attrs::has is built on it).
TEST_F(ApiArguments, AttrsHasNeverFails) {
  nnp::nn::Attrs a;
  a.set("k", 1).set("x", 0.5).set("s", "text").set("ints", std::vector<int64_t>{1, 2}).set("none", std::nullopt);
  for (const char* name : {"k", "x", "s", "ints"}) EXPECT_EQ(api.attrs_has(a.get(), name), 1) << name;
  EXPECT_EQ(api.attrs_has(a.get(), "none"), 0);
  EXPECT_EQ(api.attrs_has(a.get(), "absent"), 0);
  EXPECT_EQ(api.attrs_has(a.get(), nullptr), 0);
  EXPECT_EQ(api.attrs_has(nullptr, "k"), 0);
  EXPECT_TRUE(a.has("s"));
  EXPECT_FALSE(a.has("none"));
}
