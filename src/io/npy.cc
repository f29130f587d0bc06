// .npy: the header is parsed as the Python dict literal NumPy writes, strictly (every key once,
// nothing after the closing brace but the padding); big-endian arrays are byte-swapped; the data
// must be exactly what the header declares.
#include "io/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/checked_size.h"
#include "core/common.h"
#include "core/file_io.h"

namespace pointrt {

namespace {

struct Descr {
  DType dtype;
  bool big_endian;
};

Descr parse_descr(const std::string& d, const std::string& where) {
  static const std::map<std::string, DType> table = {
      {"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"f2", DType::kFloat16}, {"i1", DType::kInt8},
      {"i2", DType::kInt16},   {"i4", DType::kInt32},   {"i8", DType::kInt64},   {"u1", DType::kUInt8},
      {"u2", DType::kUInt16},  {"u4", DType::kUInt32},  {"u8", DType::kUInt64},  {"b1", DType::kBool}};
  auto it = d.size() == 3 ? table.find(d.substr(1)) : table.end();
  char order = d.empty() ? 0 : d[0];
  if (it == table.end() || (order != '<' && order != '>' && order != '|' && order != '='))
    fail(where, ": unsupported npy dtype '", d, "' (numeric and bool arrays only)");
  return Descr{it->second, order == '>' && dtype_size(it->second) > 1};
}

// The header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{');
    while (skip_spaces(), peek() != '}') {
      std::string key = quoted();
      skip_spaces();
      expect(':');
      skip_spaces();
      bool* seen = key == "descr"           ? &seen_descr
                   : key == "fortran_order" ? &seen_fortran
                   : key == "shape"         ? &seen_shape
                                            : nullptr;
      if (!seen) bad(str_cat("unknown key '", key, "'"));
      if (*seen) bad(str_cat("key '", key, "' appears twice"));
      *seen = true;
      if (key == "descr") descr = quoted();
      if (key == "fortran_order") fortran = boolean();
      if (key == "shape") shape = tuple();
      skip_spaces();
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        bad("expected ',' or '}'");
    }
    ++pos_;
    // NumPy pads with spaces up to an aligned length and ends the header with '\n'.
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\0')) ++pos_;
    if (pos_ != s_.size()) bad("trailing characters after the header dict");
    if (!seen_descr || !seen_fortran || !seen_shape) bad("it needs 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void bad(const std::string& why) {
    fail(where_, ": malformed .npy header (", why, " at character ", pos_, ")");
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_spaces() {
    while (peek() == ' ') ++pos_;
  }
  void expect(char c) {
    if (peek() != c) bad(str_cat("expected '", c, "'"));
    ++pos_;
  }
  std::string quoted() {
    char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string");
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string r = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return r;
  }
  bool boolean() {
    for (const char* word : {"False", "True"})
      if (s_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    bad("expected True or False");
  }
  Shape tuple() {
    Shape shape;
    expect('(');
    while (skip_spaces(), peek() != ')') {
      size_t start = pos_;
      while (peek() >= '0' && peek() <= '9') ++pos_;
      if (start == pos_) bad("expected a dimension");
      shape.push_back(parse_int64_strict(s_.substr(start, pos_ - start), where_ + ": .npy shape"));
      skip_spaces();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        bad("expected ',' or ')'");
    }
    ++pos_;
    return shape;
  }

  const std::string& s_;
  std::string where_;
  size_t pos_ = 0;
};

void byte_swap(Tensor& t) {
  size_t w = dtype_size(t.dtype());
  auto* p = static_cast<unsigned char*>(t.data());
  for (size_t i = 0, n = t.nbytes(); i < n; i += w) std::reverse(p + i, p + i + w);
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kFloat16: return "<f2";
    case DType::kInt8: return "|i1";
    case DType::kInt16: return "<i2";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kUInt8: return "|u1";
    case DType::kUInt16: return "<u2";
    case DType::kUInt32: return "<u4";
    case DType::kUInt64: return "<u8";
    case DType::kBool: return "|b1";
    default: fail("npy: cannot write element type ", dtype_name(t));
  }
}

}  // namespace

Tensor parse_npy(const void* data, size_t size, const std::string& where) {
  const auto* b = static_cast<const unsigned char*>(data);
  if (size < 10 || std::memcmp(b, "\x93NUMPY", 6) != 0) fail(where, ": not an .npy file (bad magic)");
  int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0) fail(where, ": unsupported .npy format version ", major, ".", minor);
  size_t header_len, offset;
  if (major == 1) {
    header_len = b[8] | (b[9] << 8);
    offset = 10;
  } else {
    if (size < 12) fail(where, ": truncated .npy header");
    header_len = b[8] | (b[9] << 8) | (size_t(b[10]) << 16) | (size_t(b[11]) << 24);
    offset = 12;
  }
  if (header_len > size - offset) fail(where, ": truncated .npy header (", header_len, " bytes declared)");
  std::string h(reinterpret_cast<const char*>(b + offset), header_len);
  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(h, where).parse(descr, fortran, shape);
  Descr d = parse_descr(descr, where);
  if (fortran) fail(where, ": Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  size_t body = offset + header_len;
  size_t need = checked_nbytes(d.dtype, shape, where + ": .npy shape");
  if (size - body != need)
    fail(where, ": .npy data has ", size - body, " bytes, the header declares ", need, " (", dtype_name(d.dtype), " ",
         shape_to_string(shape), ")");
  Tensor t = Tensor::allocate(d.dtype, shape);
  if (need) std::memcpy(t.data(), b + body, need);
  if (d.big_endian) byte_swap(t);
  return t;
}

Tensor read_npy(const std::string& path) {
  std::string bytes = read_regular_file(path);
  return parse_npy(bytes.data(), bytes.size(), path);
}

std::string npy_bytes(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.rank(); ++i)
    shape += std::to_string(t.dim(i)) + (t.rank() == 1 || i + 1 < t.rank() ? "," : "");
  shape += ")";
  std::string h =
      std::string("{'descr': '") + descr_of(t.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  out += h;
  out.append(static_cast<const char*>(t.data()), t.nbytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::ofstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot write");
  std::string b = npy_bytes(t);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
  if (!f) fail(path, ": writing failed");
}

}  // namespace pointrt
