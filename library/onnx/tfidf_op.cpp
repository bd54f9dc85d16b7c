// ONNX's TfIdfVectorizer on integer tokens (strings are refused, as
// everywhere in nnplug): the n-grams of each row, with up to
// max_skip_count tokens skipped between their members, counted against the
// pool, as term frequencies, inverse document frequencies or both.
#include <map>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

Tensors tfidf(const Tensors& in, const Node& a) {
  const char* op = "TfIdfVectorizer";
  const Tensor& x = need(in, 0, op);
  if (!integral(x)) refuse(std::string(op) + ": only integer tokens are supported");
  if (x.ndim() != 1 && x.ndim() != 2) invalid(std::string(op) + ": the input must be [C] or [N, C]");
  const int64_t min_n = attr_int(a, "min_gram_length", 1), max_n = attr_int(a, "max_gram_length", 1);
  const int64_t max_skip = attr_int(a, "max_skip_count", 0);
  const std::string mode = attr_string(a, "mode", "TF");
  const std::vector<int64_t> pool = attr_ints(a, "pool_int64s"), counts = attr_ints(a, "ngram_counts"),
                             indexes = attr_ints(a, "ngram_indexes");
  const std::vector<double> weights = attr_floats(a, "weights");
  if (min_n < 1 || max_n < min_n || max_skip < 0 || max_n > static_cast<int64_t>(counts.size()) ||
      (mode != "TF" && mode != "IDF" && mode != "TFIDF"))
    invalid(std::string(op) + ": bad gram lengths, skip count or mode");
  // Each pooled n-gram (by its tokens) -> its output index.
  std::map<std::vector<int64_t>, int64_t> grams;
  size_t gram = 0;
  for (size_t n = 1; n <= counts.size(); ++n) {
    const int64_t start = counts[n - 1];
    const int64_t end = n < counts.size() ? counts[n] : static_cast<int64_t>(pool.size());
    if (start < 0 || end < start || end > static_cast<int64_t>(pool.size()) || (end - start) % static_cast<int64_t>(n) != 0)
      invalid(std::string(op) + ": ngram_counts do not divide the pool into n-grams");
    for (int64_t p = start; p < end; p += static_cast<int64_t>(n), ++gram) {
      if (gram >= indexes.size()) invalid(std::string(op) + ": ngram_indexes has fewer entries than the pool n-grams");
      grams[std::vector<int64_t>(pool.begin() + p, pool.begin() + p + static_cast<int64_t>(n))] = indexes[gram];
    }
  }
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0 || i >= kMaxElements) invalid(std::string(op) + ": an ngram index is out of range");
    width = std::max(width, i + 1);
  }
  if (!weights.empty() && weights.size() != indexes.size()) invalid(std::string(op) + ": weights need one value per n-gram");
  const int64_t rows = x.ndim() == 2 ? x.size(0) : 1, length = x.size(-1);
  const std::vector<int64_t> tokens = host_ints(x);
  std::vector<double> out(static_cast<size_t>(rows * width), 0.0);
  std::vector<int64_t> key;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = tokens.data() + r * length;
    double* counted = out.data() + r * width;
    for (int64_t n = min_n; n <= max_n; ++n)
      // A 1-gram is counted once; a skip past the row's length finds nothing.
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : std::min(max_skip, length)); ++skip)
        for (int64_t start = 0; start + (n - 1) * (skip + 1) < length; ++start) {
          key.clear();
          for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * (skip + 1)]);
          auto it = grams.find(key);
          if (it != grams.end()) counted[it->second] += 1;
        }
    for (size_t g = 0; g < indexes.size(); ++g) {
      double& v = counted[indexes[g]];
      const double w = weights.empty() ? 1.0 : weights[g];
      if (mode == "IDF") v = v > 0 ? w : 0;
      if (mode == "TFIDF") v *= w;
    }
  }
  nnp::Shape shape = x.ndim() == 2 ? nnp::Shape{rows, width} : nnp::Shape{width};
  return {nnp::from_vector(out, shape, x.device()).to(Dtype::f32)};
}

}  // namespace

void add_tfidf_op(OpTable& t) { t.insert({{"TfIdfVectorizer", tfidf}}); }

}  // namespace nnp::library::onnx
