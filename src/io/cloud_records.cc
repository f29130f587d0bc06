#include "io/cloud_records.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "core/checked_size.h"
#include "core/common.h"

namespace pointrt {

namespace {

template <typename T>
double load_as_double(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

double read_scalar(const char* p, const CloudField& f) {
  switch (f.kind) {
    case 'f': return f.size == 4 ? load_as_double<float>(p) : load_as_double<double>(p);
    case 'i':
      switch (f.size) {
        case 1: return load_as_double<int8_t>(p);
        case 2: return load_as_double<int16_t>(p);
        case 4: return load_as_double<int32_t>(p);
        default: return load_as_double<int64_t>(p);
      }
    default:
      switch (f.size) {
        case 1: return load_as_double<uint8_t>(p);
        case 2: return load_as_double<uint16_t>(p);
        case 4: return load_as_double<uint32_t>(p);
        default: return load_as_double<uint64_t>(p);
      }
  }
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Whitespace-separated numbers; each must be a whole token (strtod's syntax, nan/inf included).
class AsciiNumbers {
 public:
  AsciiNumbers(const char* data, size_t size, const std::string& where) : p_(data), end_(data + size), where_(where) {}
  bool next(double& v) {
    while (p_ < end_ && is_space(*p_)) ++p_;
    if (p_ == end_) return false;
    const char* start = p_;
    if (*start == '+') ++start;  // from_chars takes no leading '+'
    auto r = std::from_chars(start, end_, v);
    if (r.ec == std::errc::result_out_of_range)  // 1e999 or 1e-999: strtod gives +-inf or 0
      v = std::strtod(std::string(start, r.ptr).c_str(), nullptr), r.ec = std::errc();
    if (r.ec != std::errc() || (r.ptr < end_ && !is_space(*r.ptr))) {
      const char* e = p_;
      while (e < end_ && !is_space(*e) && e - p_ < 32) ++e;
      fail(where_, ": '", std::string(p_, e), "' is not a number");
    }
    p_ = r.ptr;
    return true;
  }
  bool only_space_left() {
    while (p_ < end_ && is_space(*p_)) ++p_;
    return p_ == end_;
  }

 private:
  const char* p_;
  const char* end_;
  std::string where_;
};

}  // namespace

CloudLayout make_cloud_layout(std::vector<CloudField> fields, const std::string& where) {
  CloudLayout l;
  std::set<std::string> names;
  for (const auto& f : fields) {
    if (!f.padding && !names.insert(f.name).second) fail(where, ": the field '", f.name, "' appears twice");
    l.record_bytes += static_cast<size_t>(f.size);
  }
  for (const char* axis : {"x", "y", "z"})
    if (!names.count(axis))
      fail(
          where, ": the points have no '", axis, "' field (fields: ",
          [&] {
            std::string s;
            for (const auto& n : names) s += (s.empty() ? "" : " ") + n;
            return s.empty() ? std::string("none") : s;
          }(),
          ")");
  l.column.assign(fields.size(), -1);
  int next = 3;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& n = fields[i].name;
    if (fields[i].padding) continue;
    l.column[i] = n == "x" ? 0 : n == "y" ? 1 : n == "z" ? 2 : next++;
  }
  l.columns = next;
  l.fields = std::move(fields);
  return l;
}

Tensor decode_cloud(const char* data, size_t size, int64_t count, const CloudLayout& layout, bool ascii,
                    bool more_follows, const std::string& where) {
  int64_t nf = static_cast<int64_t>(layout.fields.size());
  // Claimed counts are checked against the bytes present before anything is allocated.
  int64_t values = 0;
  if (count < 0 || !checked_mul(count, nf, &values)) fail(where, ": the header claims ", count, " points");
  if (ascii ? static_cast<uint64_t>(values) > size / 2 + 1
            : static_cast<uint64_t>(count) > size / std::max<size_t>(layout.record_bytes, 1))
    fail(where, ": the header claims ", count, " points, but the data holds only ",
         ascii ? str_cat(size, " bytes of text") : str_cat(size / layout.record_bytes, " records"));
  Tensor t = Tensor::allocate(DType::kFloat32, {count, static_cast<int64_t>(layout.columns)});
  float* out = t.data_as<float>();
  if (ascii) {
    AsciiNumbers numbers(data, size, where);
    for (int64_t i = 0; i < values; ++i) {
      double v;
      if (!numbers.next(v))
        fail(where, ": expected ", count, " points with ", nf, " values each, the data ends at value ", i);
      int c = layout.column[i % nf];
      if (c >= 0) out[(i / nf) * layout.columns + c] = static_cast<float>(v);
    }
    if (!more_follows && !numbers.only_space_left())
      fail(where, ": more data after the ", count, " points the header declares");
    return t;
  }
  if (!more_follows && size != static_cast<size_t>(count) * layout.record_bytes)
    fail(where, ": ", size - static_cast<size_t>(count) * layout.record_bytes, " bytes after the ", count,
         " points the header declares");
  const char* p = data;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < nf; ++j) {
      int c = layout.column[j];
      if (c >= 0) out[i * layout.columns + c] = static_cast<float>(read_scalar(p, layout.fields[j]));
      p += layout.fields[j].size;
    }
  return t;
}

bool next_header_line(const char* data, size_t size, size_t& pos, std::string& line) {
  if (pos >= size) return false;
  const void* nl = std::memchr(data + pos, '\n', size - pos);
  size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : size;
  line.assign(data + pos, end - pos);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  pos = nl ? end + 1 : size;
  return true;
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> words;
  for (std::string w; is >> w;) words.push_back(w);
  return words;
}

}  // namespace pointrt
