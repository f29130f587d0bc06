// .npz: a zip of .npy members (stored or deflated). Every offset and size of the central
// directory is checked against the file; a member's claimed uncompressed size must be reachable
// from its compressed size (deflate expands at most ~1032x) and is checked before memory is
// reserved; inflating must yield exactly that size.
#include <zlib.h>

#include <fstream>

#include "core/checked_size.h"
#include "core/common.h"
#include "core/file_io.h"
#include "io/npy.h"

namespace pointrt {

namespace {
uint32_t rd32(const unsigned char* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t(p[3]) << 24); }
uint16_t rd16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
void wr32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void wr16(std::string& s, uint16_t v) {
  for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

constexpr uint64_t kMaxDeflateRatio = 1032;

std::string inflate_member(const unsigned char* data, uint32_t csize, uint32_t usize, const std::string& where) {
  if (uint64_t(usize) > uint64_t(csize) * kMaxDeflateRatio + 64)
    fail(where, ": claims ", usize, " uncompressed bytes from ", csize, " compressed, more than deflate can produce");
  if (usize > default_max_tensor_bytes())
    fail(where, ": claims ", format_bytes(usize), " uncompressed, above the limit of ",
         format_bytes(default_max_tensor_bytes()));
  std::string raw(usize, '\0');
  z_stream s{};
  s.next_in = const_cast<Bytef*>(data);
  s.avail_in = csize;
  s.next_out = reinterpret_cast<Bytef*>(raw.data());
  s.avail_out = usize;
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) fail(where, ": cannot inflate");
  int rc = inflate(&s, Z_FINISH);
  uLong produced = s.total_out;
  inflateEnd(&s);
  if (rc != Z_STREAM_END || produced != usize) fail(where, ": corrupt deflate data");
  return raw;
}

size_t find_end_of_central_directory(const unsigned char* b, size_t size, const std::string& where) {
  if (size < 22) fail(where, ": not a .npz (zip) file");
  for (size_t i = size - 22 + 1; i-- > 0 && i + 65557 >= size;)
    if (rd32(b + i) == 0x06054b50) return i;
  fail(where, ": not a .npz (zip) file: no end of central directory");
}

}  // namespace

std::map<std::string, Tensor> parse_npz(const void* data, size_t size, const std::string& where) {
  const auto* b = static_cast<const unsigned char*>(data);
  std::map<std::string, Tensor> out;
  // Walk the central directory (sizes there are reliable even when local headers defer them).
  size_t eocd = find_end_of_central_directory(b, size, where);
  uint16_t count = rd16(b + eocd + 10);
  size_t cd = rd32(b + eocd + 16);
  for (uint16_t e = 0; e < count; ++e) {
    if (cd > size || size - cd < 46 || rd32(b + cd) != 0x02014b50) fail(where, ": corrupt zip central directory");
    uint16_t method = rd16(b + cd + 10);
    uint32_t csize = rd32(b + cd + 20), usize = rd32(b + cd + 24);
    uint16_t nlen = rd16(b + cd + 28), xlen = rd16(b + cd + 30), clen = rd16(b + cd + 32);
    uint32_t local = rd32(b + cd + 42);
    if (size - cd - 46 < nlen) fail(where, ": corrupt zip central directory");
    std::string name(reinterpret_cast<const char*>(b + cd + 46), nlen);
    cd += size_t(46) + nlen + xlen + clen;
    std::string member = where + ":" + name;
    if (csize == 0xffffffffu || usize == 0xffffffffu || local == 0xffffffffu)
      fail(member, ": needs zip64, which is not supported");
    if (size < 30 || local > size - 30 || rd32(b + local) != 0x04034b50) fail(member, ": corrupt zip member");
    size_t body = size_t(local) + 30 + rd16(b + local + 26) + rd16(b + local + 28);
    if (body > size || csize > size - body) fail(member, ": zip member is truncated");
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      fail(member, ": an .npz holds only .npy members");
    std::string key = name.substr(0, name.size() - 4);
    if (out.count(key)) fail(member, ": the array '", key, "' appears twice");
    if (method == 0) {
      if (csize != usize) fail(member, ": stored member with different compressed and uncompressed sizes");
      out[key] = parse_npy(b + body, csize, member);
    } else if (method == 8) {
      std::string raw = inflate_member(b + body, csize, usize, member);
      out[key] = parse_npy(raw.data(), raw.size(), member);
    } else
      fail(member, ": zip compression method ", method, " is not supported");
  }
  return out;
}

std::map<std::string, Tensor> read_npz(const std::string& path) {
  std::string z = read_regular_file(path);
  return parse_npz(z.data(), z.size(), path);
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
  if (!f) fail(path, ": writing failed");
}

}  // namespace pointrt
