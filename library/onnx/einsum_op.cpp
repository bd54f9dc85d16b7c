// ONNX's Einsum: an equation of letters ("bij,bjk->bik", "...ii->...i",
// "ij" with the output implied). Each operand's repeated letters become its
// diagonal, every operand is laid out over all the equation's letters
// (missing ones as axes of size 1), the operands are multiplied with
// broadcasting, and the letters not in the output are summed. Written with
// the SDK's tensor ops: it runs on any device and differentiates.
#include <map>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

constexpr size_t kMaxEquation = 1024;

// The letters of one side of the equation, with "..." spelled as upper-case
// letters ending at 'Z' for the axes it stands for (aligned from the right
// across operands, as NumPy's).
std::string expand_ellipsis(const std::string& term, int64_t rank, const char* what) {
  const size_t dots = term.find("...");
  if (dots == std::string::npos) {
    if (static_cast<int64_t>(term.size()) != rank && rank >= 0)
      invalid(std::string("Einsum: ") + what + " names " + std::to_string(term.size()) + " axes of a rank-" +
              std::to_string(rank) + " operand");
    return term;
  }
  const int64_t named = static_cast<int64_t>(term.size()) - 3;
  const int64_t broadcast = rank - named;
  if (broadcast < 0 || broadcast > 26) invalid(std::string("Einsum: ") + what + "'s '...' does not fit the operand");
  std::string letters;
  for (int64_t i = 0; i < broadcast; ++i) letters += static_cast<char>('Z' - (broadcast - 1 - i));
  return term.substr(0, dots) + letters + term.substr(dots + 3);
}

// x laid out over `all` (each letter once), its own letters `labels`:
// repeated letters taken as a diagonal, then permuted and unsqueezed.
Tensor over(const Tensor& given, std::string labels, const std::string& all) {
  Tensor x = given;
  for (size_t p = 0; p < labels.size(); ++p)
    for (size_t q = p + 1; q < labels.size(); ++q) {
      if (labels[p] != labels[q]) continue;
      const int64_t n = x.size(static_cast<int32_t>(p));
      if (x.size(static_cast<int32_t>(q)) != n) invalid("Einsum: a repeated letter's axes differ in size");
      // Move p and q last, flatten them and take every (n + 1)-th element.
      std::vector<int32_t> order;
      for (int32_t d = 0; d < x.ndim(); ++d)
        if (d != static_cast<int32_t>(p) && d != static_cast<int32_t>(q)) order.push_back(d);
      order.push_back(static_cast<int32_t>(p));
      order.push_back(static_cast<int32_t>(q));
      nnp::Shape flat;
      for (size_t i = 0; i + 2 < order.size(); ++i) flat.push_back(x.size(order[i]));
      flat.push_back(n * n);
      x = x.permute(order).reshape(flat).index_select(
          x.ndim() - 2, nnp::arange(0, static_cast<double>(n * n), static_cast<double>(n + 1), Dtype::i64, x.device()));
      std::string rest;
      for (size_t i = 0; i + 2 < order.size(); ++i) rest += labels[static_cast<size_t>(order[i])];
      labels = rest + labels[p];
      p = static_cast<size_t>(-1);  // start over on the new labels
      break;
    }
  std::vector<int32_t> order;
  nnp::Shape shape;
  for (char c : all) {
    const size_t at = labels.find(c);
    if (at != std::string::npos) order.push_back(static_cast<int32_t>(at));
  }
  x = x.permute(order);
  size_t next = 0;
  for (char c : all) {
    if (labels.find(c) != std::string::npos)
      shape.push_back(x.size(static_cast<int32_t>(next++)));
    else
      shape.push_back(1);
  }
  return x.reshape(shape);
}

Tensors einsum(const Tensors& in, const Node& a) {
  const std::string equation_given = attr_string(a, "equation", "");
  if (equation_given.size() > kMaxEquation) invalid("Einsum: the equation is too long");
  std::string equation;
  for (char c : equation_given)
    if (c != ' ') equation += c;
  const size_t arrow = equation.find("->");
  const std::string left = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = left.find(',', start);
    terms.push_back(left.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != in.size()) invalid("Einsum: the equation names " + std::to_string(terms.size()) + " operands for " + std::to_string(in.size()));
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor& x = need(in, i, "Einsum");
    for (char c : terms[i])
      if (!std::isalpha(static_cast<unsigned char>(c)) && c != '.') invalid("Einsum: the equation holds '" + std::string(1, c) + "'");
    terms[i] = expand_ellipsis(terms[i], x.ndim(), "an operand");
  }
  std::string output;
  std::map<char, int> counts;
  for (const std::string& t : terms)
    for (char c : t) ++counts[c];
  if (arrow != std::string::npos) {
    std::string right = equation.substr(arrow + 2);
    int64_t ellipsis_rank = 0;
    for (const std::string& t : terms)
      for (char c : t)
        if (std::isupper(static_cast<unsigned char>(c))) ellipsis_rank = std::max<int64_t>(ellipsis_rank, 'Z' - c + 1);
    output = expand_ellipsis(right, right.find("...") == std::string::npos ? -1 : static_cast<int64_t>(right.size()) - 3 + ellipsis_rank, "the output");
  } else {
    for (const auto& [c, n] : counts)  // upper-case (the ellipsis) first, as NumPy puts it
      if (std::isupper(static_cast<unsigned char>(c))) output += c;
    for (const auto& [c, n] : counts)
      if (n == 1 && std::islower(static_cast<unsigned char>(c))) output += c;
  }
  for (char c : output)
    if (!counts.count(c)) invalid("Einsum: the output names '" + std::string(1, c) + "', which no operand has");
  std::string all = output;
  for (const auto& [c, n] : counts)
    if (output.find(c) == std::string::npos) all += c;
  Tensor product;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor laid = over(in[i], terms[i], all);
    product = product.defined() ? product * laid : laid;
  }
  std::vector<int32_t> summed;
  for (size_t i = output.size(); i < all.size(); ++i) summed.push_back(static_cast<int32_t>(i));
  if (!summed.empty()) product = product.sum(summed, false);
  return {product.contiguous()};
}

}  // namespace

void add_einsum_op(OpTable& t) { t.insert({{"Einsum", einsum}}); }

}  // namespace nnp::library::onnx
