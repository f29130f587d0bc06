#include "io/npy.h"

#include <zlib.h>

#include <fstream>
#include <sstream>

#include "core/common.h"

namespace pointrt {

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot open");
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

DType dtype_from_descr(const std::string& d, const std::string& where) {
  if (d.size() < 3) fail(where, ": unknown dtype '", d, "'");
  char order = d[0];
  std::string code = d.substr(1);
  if (order == '>' && code != "u1" && code != "i1" && code != "b1")
    fail(where, ": big-endian arrays are not supported (dtype '", d, "')");
  static const std::map<std::string, DType> table = {
      {"f4", DType::kFloat32}, {"f8", DType::kFloat64}, {"f2", DType::kFloat16}, {"i1", DType::kInt8},
      {"i2", DType::kInt16},   {"i4", DType::kInt32},   {"i8", DType::kInt64},   {"u1", DType::kUInt8},
      {"u2", DType::kUInt16},  {"u4", DType::kUInt32},  {"u8", DType::kUInt64},  {"b1", DType::kBool}};
  auto it = table.find(code);
  if (it == table.end()) fail(where, ": unsupported dtype '", d, "'");
  return it->second;
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

// Value of 'key': in the header dict (a Python literal).
std::string header_field(const std::string& h, const std::string& key, const std::string& where) {
  auto k = h.find("'" + key + "'");
  if (k == std::string::npos) fail(where, ": npy header has no '", key, "'");
  auto colon = h.find(':', k);
  if (colon == std::string::npos) fail(where, ": malformed npy header");
  size_t p = colon + 1;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p >= h.size()) fail(where, ": malformed npy header");
  if (h[p] == '\'') {
    auto e = h.find('\'', p + 1);
    if (e == std::string::npos) fail(where, ": malformed npy header");
    return h.substr(p + 1, e - p - 1);
  }
  if (h[p] == '(') {
    auto e = h.find(')', p);
    if (e == std::string::npos) fail(where, ": malformed npy header");
    return h.substr(p + 1, e - p - 1);
  }
  auto e = h.find_first_of(",}", p);
  return h.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

}  // namespace

Tensor parse_npy(const void* data, size_t size, const std::string& where) {
  const auto* b = static_cast<const unsigned char*>(data);
  if (size < 10 || std::memcmp(b, "\x93NUMPY", 6) != 0) fail(where, ": not an .npy file (bad magic)");
  int major = b[6];
  size_t header_len, offset;
  if (major == 1) {
    header_len = b[8] | (b[9] << 8);
    offset = 10;
  } else {
    if (size < 12) fail(where, ": truncated .npy header");
    header_len = b[8] | (b[9] << 8) | (size_t(b[10]) << 16) | (size_t(b[11]) << 24);
    offset = 12;
  }
  if (offset + header_len > size) fail(where, ": truncated .npy header");
  std::string h(reinterpret_cast<const char*>(b + offset), header_len);
  DType dt = dtype_from_descr(header_field(h, "descr", where), where);
  if (header_field(h, "fortran_order", where).find("True") != std::string::npos)
    fail(where, ": Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  Shape shape;
  std::stringstream ss(header_field(h, "shape", where));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t s = item.find_first_not_of(' ');
    if (s == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item.substr(s)));
    } catch (...) {
      fail(where, ": bad shape in npy header");
    }
    if (shape.back() < 0) fail(where, ": negative dimension in npy header");
  }
  size_t body = offset + header_len;
  size_t need = static_cast<size_t>(shape_numel(shape)) * dtype_size(dt);
  if (size - body < need) fail(where, ": .npy data is truncated (", size - body, " bytes, expected ", need, ")");
  Tensor t = Tensor::allocate(dt, shape);
  if (need) std::memcpy(t.data(), b + body, need);
  return t;
}

Tensor read_npy(const std::string& path) {
  std::string bytes = read_all(path);
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
}

namespace {
uint32_t rd32(const unsigned char* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t(p[3]) << 24); }
uint16_t rd16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
void wr32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void wr16(std::string& s, uint16_t v) {
  for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
}  // namespace

std::map<std::string, Tensor> read_npz(const std::string& path) {
  std::string z = read_all(path);
  const auto* b = reinterpret_cast<const unsigned char*>(z.data());
  std::map<std::string, Tensor> out;
  // Walk the central directory (sizes there are reliable even when local headers defer them).
  if (z.size() < 22) fail(path, ": not a .npz (zip) file");
  size_t eocd = std::string::npos;
  for (size_t i = z.size() - 22 + 1; i-- > 0 && i + 65557 >= z.size();)
    if (rd32(b + i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) fail(path, ": not a .npz (zip) file: no end of central directory");
  uint16_t count = rd16(b + eocd + 10);
  size_t cd = rd32(b + eocd + 16);
  for (uint16_t e = 0; e < count; ++e) {
    if (cd + 46 > z.size() || rd32(b + cd) != 0x02014b50) fail(path, ": corrupt zip central directory");
    uint16_t method = rd16(b + cd + 10);
    uint32_t csize = rd32(b + cd + 20), usize = rd32(b + cd + 24);
    uint16_t nlen = rd16(b + cd + 28), xlen = rd16(b + cd + 30), clen = rd16(b + cd + 32);
    uint32_t local = rd32(b + cd + 42);
    if (cd + 46 + nlen > z.size()) fail(path, ": corrupt zip central directory");
    std::string name(reinterpret_cast<const char*>(b + cd + 46), nlen);
    cd += 46 + nlen + xlen + clen;
    if (csize == 0xffffffffu || usize == 0xffffffffu)
      fail(path, ": member '", name, "' needs zip64, which is not supported");
    if (local + 30 > z.size() || rd32(b + local) != 0x04034b50) fail(path, ": corrupt zip member '", name, "'");
    size_t data = local + 30 + rd16(b + local + 26) + rd16(b + local + 28);
    if (data + csize > z.size()) fail(path, ": zip member '", name, "' is truncated");
    std::string key =
        name.size() > 4 && name.substr(name.size() - 4) == ".npy" ? name.substr(0, name.size() - 4) : name;
    std::string where = path + ":" + name;
    if (method == 0)
      out[key] = parse_npy(b + data, csize, where);
    else if (method == 8) {
      std::string raw(usize, '\0');
      z_stream s{};
      s.next_in = const_cast<Bytef*>(b + data);
      s.avail_in = csize;
      s.next_out = reinterpret_cast<Bytef*>(raw.data());
      s.avail_out = usize;
      if (inflateInit2(&s, -MAX_WBITS) != Z_OK) fail(where, ": cannot inflate");
      int rc = inflate(&s, Z_FINISH);
      inflateEnd(&s);
      if (rc != Z_STREAM_END) fail(where, ": corrupt deflate data");
      out[key] = parse_npy(raw.data(), raw.size(), where);
    } else
      fail(where, ": zip compression method ", method, " is not supported");
  }
  return out;
}

void write_npz(const std::string& path, const std::map<std::string, Tensor>& arrays) {
  std::string zip, central;
  uint16_t count = 0;
  for (const auto& [key, t] : arrays) {
    std::string name = key + ".npy", body = npy_bytes(t);
    uint32_t crc =
        static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
    uint32_t offset = static_cast<uint32_t>(zip.size());
    auto header = [&](std::string& s, bool is_central) {
      wr32(s, is_central ? 0x02014b50 : 0x04034b50);
      if (is_central) wr16(s, 20);
      wr16(s, 20);
      wr16(s, 0);
      wr16(s, 0);
      wr16(s, 0);
      wr16(s, 0x21);
      wr32(s, crc);
      wr32(s, static_cast<uint32_t>(body.size()));
      wr32(s, static_cast<uint32_t>(body.size()));
      wr16(s, static_cast<uint16_t>(name.size()));
      wr16(s, 0);
      if (is_central) {
        wr16(s, 0);
        wr16(s, 0);
        wr16(s, 0);
        wr32(s, 0);
        wr32(s, offset);
      }
      s += name;
    };
    header(zip, false);
    zip += body;
    header(central, true);
    ++count;
  }
  uint32_t cd_offset = static_cast<uint32_t>(zip.size());
  zip += central;
  wr32(zip, 0x06054b50);
  wr16(zip, 0);
  wr16(zip, 0);
  wr16(zip, count);
  wr16(zip, count);
  wr32(zip, static_cast<uint32_t>(central.size()));
  wr32(zip, cd_offset);
  wr16(zip, 0);
  std::ofstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot write");
  f.write(zip.data(), static_cast<std::streamsize>(zip.size()));
}

}  // namespace pointrt
