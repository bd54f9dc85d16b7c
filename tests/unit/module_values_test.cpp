// forward with more than tensors (ABI 1.3): PyTorch's forward(x, act) and
// forwards giving several results, through the C vtable (forward_values,
// module_call_values) and the C++ typed forward, with hooks that see every
// argument as PyTorch's do.
#include <cmath>

#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

namespace {

// y = x * scale + shift, with the scale and the shift's sign given as values.
struct Affine : nn::Module {
  Affine() : Module("Affine") {}
  Tensor forward(const Tensor& x, double scale, const std::string& sign) {
    if (sign != "plus" && sign != "minus") throw Error(NNP_INVALID_ARGUMENT, "sign is 'plus' or 'minus'");
    return x * scale + (sign == "plus" ? 1.0 : -1.0);
  }
};

// Several results, of several kinds (one tensor by value: forward(const
// Tensor&) is Module's virtual, which gives one tensor).
struct Split : nn::Module {
  Split() : Module("Split") {}
  std::tuple<Tensor, Tensor, int64_t, std::string> forward(Tensor x) { return {x * 2.0, x.exp(), x.numel(), "split"}; }
};

// Optional trailing parameters are Python's defaults.
struct Scaled : nn::Module {
  Scaled() : Module("Scaled") {}
  Tensor forward(const Tensor& x, std::optional<double> scale, std::optional<int32_t> times) {
    Tensor y = x * scale.value_or(1.0);
    for (int32_t i = 1; i < times.value_or(1); ++i) y = y + x;
    return y;
  }
};

std::vector<float> values_of(const Tensor& t) { return t.to_vector<float>(); }

}  // namespace

TEST(ModuleValues, TypedForwardTakesNumbersAndStrings) {
  auto m = nn::make<Affine>();
  Tensor x = tensor({1.0f, -2.0f});
  EXPECT_EQ(values_of((*m)(x, 3.0, "plus")), (std::vector<float>{4, -5}));
  EXPECT_EQ(values_of((*m)(x, 2, "minus")), (std::vector<float>{1, -5}));  // an int where a float is taken
  EXPECT_EQ(values_of(m->call_values({x, 0.5, "plus"})[0].toTensor()), (std::vector<float>{1.5f, 0}));
  // Errors name the module, the argument and what was expected.
  expect_error([&] { (*m)(x, "plus", 3.0); }, NNP_INVALID_ARGUMENT,
               {"Affine.forward argument 1: Value: expected a float, got String"});  // the first wrong one
  expect_error([&] { (*m)(x, 3.0, 3.0); }, NNP_INVALID_ARGUMENT,
               {"Affine.forward argument 2: Value: expected a string, got Double"});
  expect_error([&] { (*m)(x, 3.0); }, NNP_INVALID_ARGUMENT, {"Affine.forward takes 3 arguments, got 2"});
  expect_error([&] { (*m)(x); }, NNP_INVALID_ARGUMENT, {"Affine.forward takes 3 arguments, got 1"});
  expect_error([&] { (*m)(x, 1.0, "times"); }, NNP_INVALID_ARGUMENT, {"sign is 'plus' or 'minus'"});
}

TEST(ModuleValues, IntegersAreCheckedAndOptionalsDefault) {
  auto m = nn::make<Scaled>();
  Tensor x = tensor({1.0f, 2.0f});
  EXPECT_EQ(values_of((*m)(x)), (std::vector<float>{1, 2}));
  EXPECT_EQ(values_of((*m)(x, 2.0)), (std::vector<float>{2, 4}));
  EXPECT_EQ(values_of((*m)(x, std::nullopt, 3)), (std::vector<float>{3, 6}));
  EXPECT_EQ(values_of((*m)(x, 1.0, true)), (std::vector<float>{1, 2}));  // a bool is an int, as in Python
  expect_error([&] { (*m)(x, 1.0, 2.5); }, NNP_INVALID_ARGUMENT, {"argument 2", "expected an int, got Double"});
  expect_error([&] { (*m)(x, 1.0, int64_t{1} << 40); }, NNP_INVALID_ARGUMENT,
               {"argument 2", "1099511627776 is out of the parameter's range"});
  expect_error([&] { (*m)(x, 1.0, 2, 3); }, NNP_INVALID_ARGUMENT, {"Scaled.forward takes 1 to 3 arguments, got 4"});
}

TEST(ModuleValues, SeveralResultsOfSeveralKinds) {
  auto m = nn::make<Split>();
  Tensor x = tensor({0.0f, 1.0f}).requires_grad_();
  nn::Outputs out = m->call_values({x});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(values_of(out.tensor(0)), (std::vector<float>{0, 2}));
  EXPECT_NEAR(out.tensor(1).to_vector<float>()[1], std::exp(1.0f), 1e-6);
  EXPECT_EQ(out[2].toInt(), 2);
  EXPECT_EQ(out[3].toStringRef(), "split");
  // Both tensor results carry history: d/dx sum(2x + e^x) = 2 + e^x.
  (out.tensor(0).sum() + out.tensor(1).sum()).backward();
  EXPECT_NEAR(x.grad().to_vector<float>()[0], 3.0f, 1e-6);
  EXPECT_NEAR(x.grad().to_vector<float>()[1], 2.0f + std::exp(1.0f), 1e-5);
  // One tensor was expected: the error says how to get them all.
  expect_error([&] { Tensor y = out; }, NNP_INVALID_ARGUMENT, {"forward gave 4 results", "[i]"});
  expect_error([&] { (*m)(x); }, NNP_INVALID_ARGUMENT, {"Split: forward gave 4 results", "call_values({x})"});
}

TEST(ModuleValues, ModulesWithTensorForwardRefuseOtherValues) {
  nn::Linear typed(2, 1);
  nn::ModuleHandle lin = typed;
  expect_error(
      [&] {
        lin(tensor({1.0f, 2.0f}), "relu");
      },
      NNP_INVALID_ARGUMENT, {"Linear: forward takes tensors only, and argument 1 is a string"});
  // A tensor-only module still serves a values call with tensors.
  Tensor y = lin(tensor({1.0f, 2.0f}));
  nn::Outputs out = lin.call_values({tensor({1.0f, 2.0f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values_of(out.tensor(0)), values_of(y));
}

TEST(ModuleValues, HooksSeeEveryArgumentAndMayReplaceThem) {
  auto m = nn::make<Affine>();
  Tensor x = tensor({1.0f, 2.0f});
  std::vector<std::string> order;
  std::vector<std::string> seen_kinds;
  // A values pre-hook sees (x, 3.0, "plus") and swaps the sign.
  HookHandle pre = m->register_forward_pre_hook(
      [&](nn::ModuleHandle&, const std::vector<Value>& args) -> std::optional<std::vector<Value>> {
        order.push_back("values pre");
        for (const Value& v : args) seen_kinds.push_back(v.tagKind());
        return std::vector<Value>{args[0], args[1], "minus"};
      });
  // A tensor pre-hook sees the tensor arguments only, and may replace them.
  HookHandle tensor_pre = m->register_forward_pre_hook(
      [&](nn::ModuleHandle&, const std::vector<Tensor>& inputs) -> std::optional<std::vector<Tensor>> {
        order.push_back("tensor pre");
        EXPECT_EQ(inputs.size(), 1u);
        return std::vector<Tensor>{inputs[0] * 10.0};
      });
  // A prepended hook runs first.
  HookHandle first = m->register_forward_pre_hook(
      [&](nn::ModuleHandle&, const std::vector<Value>&) -> std::optional<std::vector<Value>> {
        order.push_back("prepended");
        return std::nullopt;
      },
      true);
  // A values forward hook sees the arguments as forward got them and the
  // results, and may replace the results.
  HookHandle post =
      m->register_forward_hook([&](nn::ModuleHandle&, const std::vector<Value>& args,
                                   const std::vector<Value>& outputs) -> std::optional<std::vector<Value>> {
        order.push_back("values post");
        EXPECT_EQ(args[2].toStringRef(), "minus");
        EXPECT_EQ(values_of(args[0].toTensor()), (std::vector<float>{10, 20}));
        return std::vector<Value>{outputs[0].toTensor() + 100.0, "extra"};
      });
  nn::Outputs out = (*m)(x, 3.0, "plus");
  EXPECT_EQ(order, (std::vector<std::string>{"prepended", "values pre", "tensor pre", "values post"}));
  EXPECT_EQ(seen_kinds, (std::vector<std::string>{"Tensor", "Double", "String"}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values_of(out.tensor(0)), (std::vector<float>{129, 159}));  // 10x * 3 - 1 + 100
  EXPECT_EQ(out[1].toStringRef(), "extra");

  // A tensor forward hook sees one result and may replace it; with several
  // tensor results it says which hook form to use.
  post.remove();
  pre.remove();
  tensor_pre.remove();
  HookHandle tensor_post =
      m->register_forward_hook([&](nn::ModuleHandle&, const std::vector<Tensor>& inputs, const Tensor& output) {
        EXPECT_EQ(inputs.size(), 1u);
        return output * 0.0;
      });
  EXPECT_EQ(values_of((*m)(x, 3.0, "plus")), (std::vector<float>{0, 0}));
  auto split = nn::make<Split>();
  HookHandle split_hook = split->register_forward_hook(
      [&](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor& output) { return output; });
  expect_error([&] { split->call_values({x}); }, NNP_INVALID_ARGUMENT,
               {"Split gave 2 tensor results", "ForwardHookWithValues"});
}

TEST(ModuleValues, HookReplacementsAreChecked) {
  auto m = nn::make<Affine>();
  Tensor x = tensor({1.0f});
  // A pre-hook that drops an argument: forward is told what it got.
  HookHandle pre = m->register_forward_pre_hook(
      [&](nn::ModuleHandle&, const std::vector<Value>& args) -> std::optional<std::vector<Value>> {
        return std::vector<Value>{args[0]};
      });
  expect_error([&] { (*m)(x, 1.0, "plus"); }, NNP_INVALID_ARGUMENT, {"Affine.forward takes 3 arguments, got 1"});
  pre.remove();
  // A hook that throws: the call fails with its message, the module is intact.
  HookHandle failing = m->register_forward_hook([&](nn::ModuleHandle&, const std::vector<Value>&,
                                                    const std::vector<Value>&) -> std::optional<std::vector<Value>> {
    throw Error(NNP_INVALID_ARGUMENT, "the hook refuses");
  });
  expect_error([&] { (*m)(x, 1.0, "plus"); }, NNP_INVALID_ARGUMENT, {"the hook refuses"});
  failing.remove();
  EXPECT_EQ(values_of((*m)(x, 1.0, "plus")), (std::vector<float>{2}));
}

TEST(ModuleValues, BackwardHooksSeeTensorArgumentsAndEveryTensorResult) {
  auto m = nn::make<Affine>();
  auto split = nn::make<Split>();
  std::vector<size_t> counts;
  std::vector<float> grad_outputs;
  HookHandle hook = split->register_full_backward_hook(
      [&](nn::ModuleHandle&, const std::vector<Tensor>& grad_input,
          const std::vector<Tensor>& grad_output) -> std::optional<std::vector<Tensor>> {
        counts = {grad_input.size(), grad_output.size()};
        for (const Tensor& g : grad_output) grad_outputs.push_back(g.to_vector<float>()[0]);
        return std::nullopt;
      });
  Tensor x = tensor({0.5f}).requires_grad_();
  nn::Outputs out = split->call_values({Tensor((*m)(x, 2.0, "plus"))});
  (out.tensor(0) * 3.0 + out.tensor(1) * 5.0).sum().backward();
  EXPECT_EQ(counts, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(grad_outputs, (std::vector<float>{3, 5}));
  // y = 2x + 1 = 2: d/dx (3 * 2y + 5 e^y) = 2 * (6 + 5 e^2).
  EXPECT_NEAR(x.grad().to_vector<float>()[0], 2 * (6 + 5 * std::exp(2.0f)), 1e-4);
}

TEST(ModuleValues, ValueConversionsFollowPython) {
  EXPECT_TRUE(Value().isNone());
  EXPECT_TRUE(Value(std::nullopt).isNone());
  EXPECT_TRUE(Value(indexing::None).isNone());
  EXPECT_TRUE(Value(Tensor()).isNone());
  EXPECT_EQ(Value(true).toInt(), 1);
  EXPECT_EQ(Value(7).toDouble(), 7.0);
  EXPECT_EQ(Value(std::optional<int>(3)).toInt(), 3);
  EXPECT_EQ(Value("text").tagKind(), "String");
  expect_error([] { Value(1).toBool(); }, NNP_INVALID_ARGUMENT, {"expected a bool, got Int"});
  expect_error([] { Value(2.5).toInt(); }, NNP_INVALID_ARGUMENT, {"expected an int, got Double"});
  expect_error([] { Value(uint64_t{1} << 63); }, NNP_INVALID_ARGUMENT, {"does not fit in an int64"});
}

// ---- the C face ----

namespace {

// A module written in C style, with forward_values only: (x) gives x, (x, k)
// gives x * k for an int k (x for None), ("text") gives "text" back.
nnp_status scale_values(void*, nnp_module*, const nnp_list* args, nnp_list* outputs) {
  const nnp_api& a = api();
  if (a.list_kind(args, 0) == NNP_VALUE_STRING) return a.list_append_string(outputs, "", a.list_string(args, 0));
  const nnp_tensor* x = a.list_tensor(args, 0);
  if (a.list_size(args) == 1 || a.list_kind(args, 1) == NNP_VALUE_NONE) return a.list_append_tensor(outputs, "", x);
  int64_t k = 0;
  nnp_status status = a.list_int(args, 1, &k);
  if (status != NNP_OK) return status;
  Tensor factor = full_like(Tensor::borrow(const_cast<nnp_tensor*>(x)), static_cast<double>(k));
  nnp_tensor* y = nullptr;
  status = a.binary(NNP_BINARY_MUL, x, factor.get(), &y);
  if (status != NNP_OK) return status;
  status = a.list_append_tensor(outputs, "", y);
  a.tensor_release(y);
  return status;
}

nn::ModuleHandle c_scale_module(size_t vtable_size = sizeof(nnp_module_vtable)) {
  nnp_module_vtable vtable{};
  vtable.struct_size = vtable_size;
  vtable.forward_values = scale_values;
  nnp_module* m = nullptr;
  check(api().module_create("CScale", &vtable, nullptr, &m));
  return nn::ModuleHandle::adopt(m);
}

detail::List list_of(const std::vector<Value>& values) { return detail::List(detail::to_list(values)); }

}  // namespace

TEST(ModuleValuesC, ForwardValuesServesBothCalls) {
  nn::ModuleHandle m = c_scale_module();
  Tensor x = tensor({1.0f, 2.0f});
  EXPECT_EQ(values_of(m(x, 3)), (std::vector<float>{3, 6}));
  EXPECT_EQ(values_of(m(x, std::nullopt)), (std::vector<float>{1, 2}));
  EXPECT_EQ(m("echo")[0].toStringRef(), "echo");
  // module_call with tensors reaches forward_values when there is no forward.
  EXPECT_EQ(values_of(m(x)), (std::vector<float>{1, 2}));
  expect_error([&] { m.call({x, x}); }, NNP_INVALID_ARGUMENT, {"list_int: entry 1 is a tensor"});
  // module_call needs one tensor back.
  nnp_module_vtable twice{};
  twice.struct_size = sizeof twice;
  twice.forward_values = [](void*, nnp_module*, const nnp_list* args, nnp_list* outputs) {
    nnp_status status = api().list_append_tensor(outputs, "", api().list_tensor(args, 0));
    return status == NNP_OK ? api().list_append_tensor(outputs, "", api().list_tensor(args, 0)) : status;
  };
  nnp_module* raw = nullptr;
  check(api().module_create("Twice", &twice, nullptr, &raw));
  nn::ModuleHandle pair = nn::ModuleHandle::adopt(raw);
  EXPECT_EQ(pair.call_values({x}).size(), 2u);
  expect_error([&] { pair(x); }, NNP_INVALID_ARGUMENT,
               {"Twice: forward gave 2 results where one tensor was expected", "module_call_values"});
}

TEST(ModuleValuesC, ListsHoldValuesAndReadThemAsPythonConverts) {
  const nnp_api& a = api();
  detail::List list = list_of({Value(7), Value(2.5), Value(true), Value("s"), Value(), Value(tensor({1.0f}))});
  EXPECT_EQ(a.list_size(list.get()), 6);
  std::vector<nnp_value_kind> kinds;
  for (int32_t i = 0; i < 6; ++i) kinds.push_back(a.list_kind(list.get(), i));
  EXPECT_EQ(kinds, (std::vector<nnp_value_kind>{NNP_VALUE_INT, NNP_VALUE_FLOAT, NNP_VALUE_BOOL, NNP_VALUE_STRING,
                                                NNP_VALUE_NONE, NNP_VALUE_TENSOR}));
  EXPECT_EQ(a.list_kind(list.get(), 6), -1);
  EXPECT_EQ(a.list_kind(nullptr, 0), -1);
  int64_t i = 0;
  double f = 0;
  int32_t b = 0;
  EXPECT_EQ(a.list_int(list.get(), 2, &i), NNP_OK);  // bool as int
  EXPECT_EQ(i, 1);
  EXPECT_EQ(a.list_float(list.get(), 0, &f), NNP_OK);  // int as float
  EXPECT_EQ(f, 7.0);
  EXPECT_EQ(a.list_int(list.get(), 1, &i), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(a.last_error()).find("list_int: entry 1 is a float"), std::string::npos) << a.last_error();
  EXPECT_EQ(a.list_bool(list.get(), 0, &b), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.list_float(list.get(), 3, &f), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(a.last_error()).find("is a string"), std::string::npos);
  EXPECT_EQ(a.list_int(list.get(), 9, &i), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.list_int(list.get(), 0, nullptr), NNP_INVALID_ARGUMENT);
  EXPECT_STREQ(a.list_string(list.get(), 3), "s");
  EXPECT_EQ(a.list_string(list.get(), 0), nullptr);
  EXPECT_EQ(a.list_append_string(list.get(), "", nullptr), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.list_append_int(nullptr, "", 1), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.list_append_float(list.get(), nullptr, 1), NNP_INVALID_ARGUMENT);
}

TEST(ModuleValuesC, CallsAndHooksRefuseWhatTheyCannotTake) {
  const nnp_api& a = api();
  nn::ModuleHandle m = c_scale_module();
  detail::List named;
  check(a.list_append_tensor(named.get(), "", tensor({1.0f}).get()));
  check(a.list_append_int(named.get(), "k", 2));
  nnp_list* out = nullptr;
  EXPECT_EQ(a.module_call_values(m.handle(), named.get(), &out), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(std::string(a.last_error()).find("entry 1 is named 'k'"), std::string::npos) << a.last_error();
  EXPECT_EQ(a.module_call_values(m.handle(), nullptr, &out), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.module_call_values(nullptr, named.get(), &out), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.module_call_values(m.handle(), named.get(), nullptr), NNP_INVALID_ARGUMENT);

  auto hook = [](nnp_module*, const nnp_list*, const nnp_list*, nnp_list**, void*) -> nnp_status { return NNP_OK; };
  nnp_hook_handle* handle = nullptr;
  EXPECT_EQ(a.module_register_values_hook(m.handle(), NNP_HOOK_BACKWARD, hook, nullptr, nullptr, 0, &handle),
            NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(a.last_error()).find("backward hooks see gradients"), std::string::npos) << a.last_error();
  EXPECT_EQ(a.module_register_values_hook(m.handle(), NNP_HOOK_FORWARD, nullptr, nullptr, nullptr, 0, &handle),
            NNP_INVALID_ARGUMENT);
  EXPECT_EQ(a.register_global_module_values_hook(7, hook, nullptr, nullptr, &handle), NNP_INVALID_ARGUMENT);

  // A pre-hook whose replacement names an argument is refused.
  auto naming = [](nnp_module*, const nnp_list*, const nnp_list*, nnp_list** replace, void*) -> nnp_status {
    check(api().list_create(replace));
    return api().list_append_int(*replace, "k", 1);
  };
  check(a.module_register_values_hook(m.handle(), NNP_HOOK_FORWARD_PRE, naming, nullptr, nullptr, 0, &handle));
  HookHandle owned(handle);
  expect_error([&] { m(tensor({1.0f}), 2); }, NNP_INVALID_ARGUMENT,
               {"a forward pre-hook's replacement arguments: entry 0 is named 'k'"});
}

TEST(ModuleValuesC, GlobalValuesHooksSeeEveryModule) {
  std::vector<std::string> seen;
  auto record = [](nnp_module* m, const nnp_list* args, const nnp_list*, nnp_list**, void* user) -> nnp_status {
    auto& out = *static_cast<std::vector<std::string>*>(user);
    out.push_back(std::string(api().module_type_name(m)) + "/" + std::to_string(api().list_size(args)));
    return NNP_OK;
  };
  nnp_hook_handle* raw = nullptr;
  check(api().register_global_module_values_hook(NNP_HOOK_FORWARD_PRE, record, &seen, nullptr, &raw));
  HookHandle global(raw);
  auto m = nn::make<Affine>();
  (*m)(tensor({1.0f}), 1.0, "plus");
  nn::Linear lin(1, 1);
  lin(tensor({1.0f}));
  global.remove();
  (*m)(tensor({1.0f}), 1.0, "plus");
  EXPECT_EQ(seen, (std::vector<std::string>{"Affine/3", "Linear/1"}));
}

TEST(ModuleValuesC, A10VtableHasNoForwardValues) {
  // A module built against ABI 1.0 hands a 48-byte vtable: the core reads no
  // further, so whatever follows it is never called.
  struct {
    nnp_module_vtable vtable;
  } padded{};
  padded.vtable.struct_size = NNP_MODULE_VTABLE_SIZE_1_0;
  padded.vtable.forward_values = scale_values;  // past the 1.0 size: ignored
  nnp_module* raw = nullptr;
  check(api().module_create("Old", &padded.vtable, nullptr, &raw));
  nn::ModuleHandle m = nn::ModuleHandle::adopt(raw);
  expect_error([&] { m(tensor({1.0f}), 2); }, NNP_UNIMPLEMENTED, {"Old has no forward"});
}
