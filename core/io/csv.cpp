#include "csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nnp/detail/error.hpp>
#include <nnp/detail/printable.hpp>
#include <string_view>

namespace nnp::core::io {
namespace {

constexpr size_t kMaxLineBytes = size_t{16} << 20;
constexpr double kMaxLabel = 2147483647.0;  // class indices are int64 tensors; this bounds the conversion

[[noreturn]] void corrupt(const std::string& where, const std::string& what) {
  throw Error(NNP_CORRUPT_DATA, "data " + where + ": " + what);
}

// Lines of a plain or gzip-compressed file, split here rather than by
// gzgets, which cuts a line silently at a NUL byte.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path) {
    // A regular file only: gzopen of a FIFO would wait forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw Error(NNP_IO_ERROR, "data " + path + ": cannot open (" + std::strerror(errno) + ")");
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      ::close(fd);
      throw Error(NNP_IO_ERROR, "data " + path + ": " +
                                    (S_ISDIR(info.st_mode) ? "is a directory" : "is not a regular file") +
                                    "; give the path of a CSV file");
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file_ = gzdopen(fd, "rb");  // reads plain files too
    if (!file_) {
      ::close(fd);
      throw Error(NNP_IO_ERROR, "data " + path + ": cannot read");
    }
  }
  ~LineReader() { gzclose(file_); }

  // The next line without its end of line; false at the end of the file.
  bool next(std::string& line) {
    line.clear();
    bool any = false;  // a byte of this line (its newline included) was seen
    while (true) {
      if (used_ == filled_ && !refill()) {
        if (!any) return false;
        break;
      }
      any = true;
      const char* begin = buffer_ + used_;
      const char* newline = static_cast<const char*>(std::memchr(begin, '\n', filled_ - used_));
      const size_t take = newline ? static_cast<size_t>(newline - begin) : filled_ - used_;
      if (line.size() + take > kMaxLineBytes)
        corrupt(path_ + ":" + std::to_string(number_ + 1), "the line is longer than 16 MB");
      line.append(begin, take);
      used_ += take + (newline ? 1 : 0);
      if (newline) break;
    }
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (std::memchr(line.data(), '\0', line.size()))
      corrupt(path_ + ":" + std::to_string(number_), "the line holds a NUL byte (binary data, not CSV?)");
    return true;
  }
  int64_t number() const { return number_; }

 private:
  // More bytes into the buffer; false at the end. A damaged .gz is an error,
  // never an early end.
  bool refill() {
    const int got = gzread(file_, buffer_, sizeof buffer_);
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (got < 0 || (code != Z_OK && code != Z_STREAM_END))
      corrupt(path_, std::string("the file cannot be read: ") + message + " (a damaged .gz?)");
    used_ = 0;
    filled_ = static_cast<size_t>(got);
    return got > 0;
  }

  std::string path_;
  gzFile file_ = nullptr;
  char buffer_[1 << 16];
  size_t used_ = 0, filled_ = 0;
  int64_t number_ = 0;
};

using nnp::detail::printable;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// The fields of a line split at commas, each trimmed of spaces and tabs.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    std::string_view field =
        line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!field.empty() && is_blank(field.front())) field.remove_prefix(1);
    while (!field.empty() && is_blank(field.back())) field.remove_suffix(1);
    fields.push_back(field);
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// The whole field as a number, or false.
bool parse_number(std::string_view field, double* out) {
  // Decimal only: strtod also reads hexadecimal ("0x10" is 16), no CSV means that.
  if (field.empty() || field.find_first_of("xXpP") != std::string_view::npos) return false;
  std::string text(field);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

CsvTable read_csv(const std::string& path, bool header) {
  LineReader reader(path);
  CsvTable data;
  std::string line;
  bool first = true;
  while (reader.next(line)) {
    const std::string where = path + ":" + std::to_string(reader.number());
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<std::string_view> fields = fields_of(line);
    const bool first_line = first;
    first = false;
    if (first_line && header) {
      data.header = true;
      continue;
    }
    std::vector<double> values(fields.size());
    size_t numbers = 0;
    for (size_t i = 0; i < fields.size(); ++i) numbers += parse_number(fields[i], &values[i]) ? 1 : 0;
    if (first_line && numbers == 0) {  // every field text: a header row
      data.header = true;
      continue;
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string column = "column " + std::to_string(i + 1);
      if (fields[i].empty())
        corrupt(where, column + " is empty (rows are numbers separated by commas, nothing between two commas)");
      if (!parse_number(fields[i], &values[i]))
        corrupt(where, column + ": '" + printable(fields[i], 40) +
                           "' is not a number (rows are numbers separated by commas: other separators are not read; "
                           "a header row is skipped when every field of the first row is text, or say the first row is "
                           "a header: --header in nnplug, CsvOptions::header in C++)");
      if (!std::isfinite(values[i]))
        corrupt(where, column + ": '" + printable(fields[i], 40) +
                           "' is not a finite number (NaN and infinities are refused)");
      if (i + 1 < fields.size() && std::abs(values[i]) > FLT_MAX)
        corrupt(where, column + ": " + printable(fields[i], 40) + " is outside the float range");
    }
    if (fields.size() < 2) corrupt(where, "a row needs features and then a label");
    const int64_t features = static_cast<int64_t>(fields.size()) - 1;
    if (data.rows == 0) data.features = features;
    if (features != data.features)
      corrupt(where, std::to_string(features) + " features where earlier rows have " + std::to_string(data.features));
    const double label = values.back();
    if (label < 0 || label > kMaxLabel || label != std::floor(label))
      corrupt(where, "the label (last column) " + printable(fields.back(), 40) +
                         " is not a class index (an integer from 0 to 2147483647)");
    making(
        [&] {
          return "load_csv " + printable(path) + ": row " + std::to_string(data.rows + 1) + " (" +
                 std::to_string(data.rows) + " rows of " + std::to_string(features) + " features read, " +
                 std::to_string(data.x.size() * sizeof(float)) + " bytes)";
        },
        [&] {
          for (int64_t i = 0; i < features; ++i) data.x.push_back(static_cast<float>(values[static_cast<size_t>(i)]));
          data.y.push_back(static_cast<int64_t>(label));
        });
    if (static_cast<int64_t>(label) + 1 > data.classes) {
      data.classes = static_cast<int64_t>(label) + 1;
      data.largest_label_line = reader.number();
    }
    ++data.rows;
  }
  if (data.rows == 0) corrupt(path, "no rows");
  return data;
}

}  // namespace nnp::core::io
