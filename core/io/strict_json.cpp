#include "strict_json.hpp"

#include <unordered_set>
#include <vector>

namespace nnp::core::io {
namespace {

using json = nlohmann::json;

// One pass over the text with nothing built: the keys of every open object
// (hashed, so each key costs O(1)) and the depth.
class StructureCheck : public nlohmann::json_sax<json> {
 public:
  explicit StructureCheck(size_t max_depth) : max_depth_(max_depth) {}
  std::string problem;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    objects_.emplace_back();
    return enter();
  }
  bool key(string_t& name) override {
    if (objects_.back().insert(name).second) return true;
    problem = "names '" + name + "' twice in one object";
    return false;
  }
  bool end_object() override {
    objects_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    problem = std::string("is not valid JSON (") + e.what() + ")";
    return false;
  }

 private:
  bool enter() {
    if (++depth_ <= max_depth_) return true;
    problem = "nests deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }
  size_t max_depth_;
  size_t depth_ = 0;
  std::vector<std::unordered_set<std::string>> objects_;
};

}  // namespace

json parse_strict_json(const std::string& text, size_t max_depth,
                       const std::function<void(const std::string& what)>& refuse) {
  StructureCheck check(max_depth);
  if (!json::sax_parse(text, &check)) refuse(check.problem.empty() ? "is not valid JSON" : check.problem);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // not expected once the check passed
    refuse(std::string("is not valid JSON (") + e.what() + ")");
  }
  return json();
}

}  // namespace nnp::core::io
