// Issue 14, class 4: model specs from strangers, as a corpus. Each row is a
// spec that must be refused with its status and a message naming the
// problem, without a crash, a hang or an allocation the spec did not earn.
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace nnp;

namespace {

struct SpecCase {
  const char* label;
  std::string spec;
  nnp_status status;
  const char* fragment;
};

std::string linear(const std::string& in, const std::string& out) {
  return R"({"type": "nn.Linear", "in_features": )" + in + R"(, "out_features": )" + out + "}";
}

std::vector<SpecCase> spec_cases() {
  return {
      {"empty text", "", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"whitespace only", "  \n\t ", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"a number", "42", NNP_INVALID_ARGUMENT, "\"type\""},
      {"an array", "[]", NNP_INVALID_ARGUMENT, "\"type\""},
      {"null", "null", NNP_INVALID_ARGUMENT, "\"type\""},
      {"an object without type", "{}", NNP_INVALID_ARGUMENT, "\"type\""},
      {"type a number", R"({"type": 3})", NNP_INVALID_ARGUMENT, "type"},
      {"type empty", R"({"type": ""})", NNP_NOT_FOUND, "unknown layer type"},
      {"type with NUL", R"({"type": "nn.Re\u0000LU"})", NNP_INVALID_ARGUMENT, "NUL"},
      {"type unknown", R"({"type": "nn.Reluu"})", NNP_NOT_FOUND, "closest"},
      {"type twice", R"({"type": "nn.ReLU", "type": "nn.Tanh"})", NNP_INVALID_ARGUMENT, "names 'type' twice"},
      {"a key twice", R"({"type": "nn.Linear", "in_features": 2, "in_features": 3, "out_features": 1})",
       NNP_INVALID_ARGUMENT, "names 'in_features' twice"},
      {"trailing garbage", R"({"type": "nn.ReLU"} x)", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"two objects", R"({"type": "nn.ReLU"}{"type": "nn.ReLU"})", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"a comment", R"({"type": "nn.ReLU"} // hi)", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"invalid UTF-8", "{\"type\": \"nn.ReLU\", \"x\xff\": 1}", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"a lone surrogate", R"({"type": "nn.ReLU\ud800"})", NNP_INVALID_ARGUMENT, "not valid JSON"},
      {"an attribute name with NUL", R"({"type": "nn.Softmax", "dim\u0000x": 1})", NNP_INVALID_ARGUMENT, "NUL"},
      {"a string attribute with NUL", R"({"type": "nn.CrossEntropyLoss", "reduction": "sum\u0000x"})",
       NNP_INVALID_ARGUMENT, "NUL"},
      {"a ModuleDict child name with NUL",
       R"({"type": "nn.ModuleDict", "children": {"a\u0000b": {"type": "nn.ReLU"}}})", NNP_INVALID_ARGUMENT, "NUL"},
      {"an unknown attribute", R"({"type": "nn.ReLU", "inplace2": true})", NNP_INVALID_ARGUMENT, "inplace2"},
      {"in_features 2^64-1", linear("18446744073709551615", "1"), NNP_INVALID_ARGUMENT, "is too large"},
      {"in_features 2^63", linear("9223372036854775808", "1"), NNP_INVALID_ARGUMENT, "is too large"},
      {"in_features 1e400", linear("1e400", "1"), NNP_INVALID_ARGUMENT, "1e400"},
      {"in_features 2.5", linear("2.5", "1"), NNP_INVALID_ARGUMENT, "in_features"},
      {"in_features a string", linear("\"2\"", "1"), NNP_INVALID_ARGUMENT, "in_features"},
      {"in_features true", linear("true", "1"), NNP_INVALID_ARGUMENT, "in_features"},
      {"in_features null", linear("null", "1"), NNP_INVALID_ARGUMENT, "in_features"},
      {"in_features an array", linear("[2]", "1"), NNP_INVALID_ARGUMENT, "in_features"},
      {"in_features -1", linear("-1", "1"), NNP_INVALID_ARGUMENT, "must be >= 0"},
      {"out_features 2^62 (too large to allocate)", linear("4", "4611686018427387904"), NNP_INVALID_ARGUMENT,
       "too large"},
      {"Softmax dim 2^32", R"({"type": "nn.Softmax", "dim": 4294967296})", NNP_INVALID_ARGUMENT, "out of range"},
      {"Softmax dim -2^31-1", R"({"type": "nn.Softmax", "dim": -2147483649})", NNP_INVALID_ARGUMENT, "out of range"},
      {"LogSoftmax dim 9", R"({"type": "nn.LogSoftmax", "dim": 9})", NNP_INVALID_ARGUMENT, "out of range"},
      {"Dropout p 2", R"({"type": "nn.Dropout", "p": 2})", NNP_INVALID_ARGUMENT, "p"},
      {"Dropout p NaN-like string", R"({"type": "nn.Dropout", "p": "nan"})", NNP_INVALID_ARGUMENT, "p"},
      {"Conv2d kernel of three values",
       R"({"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": [1, 2, 3]})", NNP_INVALID_ARGUMENT,
       "takes one value or 2"},
      {"Conv2d kernel 0", R"({"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": 0})",
       NNP_INVALID_ARGUMENT, "kernel_size"},
      {"Conv2d stride -1",
       R"({"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": 1, "stride": -1})",
       NNP_INVALID_ARGUMENT, "stride"},
      {"Conv2d groups 0",
       R"({"type": "nn.Conv2d", "in_channels": 2, "out_channels": 2, "kernel_size": 1, "groups": 0})",
       NNP_INVALID_ARGUMENT, "groups"},
      {"Conv2d groups not dividing",
       R"({"type": "nn.Conv2d", "in_channels": 3, "out_channels": 2, "kernel_size": 1, "groups": 2})",
       NNP_INVALID_ARGUMENT, "groups"},
      {"Embedding padding_idx past the end",
       R"({"type": "nn.Embedding", "num_embeddings": 3, "embedding_dim": 2, "padding_idx": 3})", NNP_INVALID_ARGUMENT,
       "padding_idx"},
      {"Embedding padding_idx INT64_MIN",
       R"({"type": "nn.Embedding", "num_embeddings": 3, "embedding_dim": 2, "padding_idx": -9223372036854775808})",
       NNP_INVALID_ARGUMENT, "padding_idx"},
      {"children not an array", R"({"type": "nn.Sequential", "children": {}})", NNP_INVALID_ARGUMENT, "children"},
      {"a child not an object", R"({"type": "nn.Sequential", "children": [1]})", NNP_INVALID_ARGUMENT, "children[0]"},
      {"children on a layer", R"({"type": "nn.ReLU", "children": []})", NNP_INVALID_ARGUMENT, "children"},
      {"a bad child deep inside",
       R"({"type": "nn.Sequential", "children": [{"type": "nn.Sequential", "children": [{"type": "nn.Bogus"}]}]})",
       NNP_NOT_FOUND, "nn.Bogus"},
      {"nested 100,000 deep", std::string(100000, '[') + std::string(100000, ']'), NNP_INVALID_ARGUMENT,
       "nests deeper"},
      {"objects nested 70 deep",
       [] {
         std::string s;
         for (int i = 0; i < 70; ++i) s += R"({"type": "nn.Sequential", "children": [)";
         for (int i = 0; i < 70; ++i) s += "]}";
         return s;
       }(),
       NNP_INVALID_ARGUMENT, "nests deeper"},
      {"over 16 MB", R"({"type": "nn.ReLU", "x": ")" + std::string(17u << 20, 'a') + "\"}", NNP_INVALID_ARGUMENT,
       "more than the limit"},
      {"a string of 10^6 escapes",
       R"({"type": "nn.ReLU", "x": ")" +
           [] {
             std::string s;
             for (int i = 0; i < 1000000; ++i) s += "\\u0041";
             return s;
           }() +
           "\"}",
       NNP_INVALID_ARGUMENT, "x"},
  };
}

}  // namespace

TEST(HostileSpecs, CraftedSpecsAreRefusedNamingTheProblem) {
  int n = 0;
  for (const SpecCase& c : spec_cases()) {
    SCOPED_TRACE(c.label);
    ++n;
    if (*c.fragment)
      test::expect_error([&] { nn::model_from_spec(c.spec); }, c.status, {c.fragment});
    else
      test::expect_error([&] { nn::model_from_spec(c.spec); }, c.status, {});
  }
  std::cout << "class 4, crafted specs: " << n << " cases\n";
}
