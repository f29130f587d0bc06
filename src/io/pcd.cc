// PCD: header lines up to DATA (ascii or binary; binary_compressed is not supported), FIELDS
// with SIZE/TYPE/COUNT; "_" fields are padding. WIDTH x HEIGHT must equal POINTS when given.
#include <map>

#include "core/checked_size.h"
#include "core/common.h"
#include "io/cloud_records.h"
#include "io/point_cloud.h"

namespace pointrt {

namespace {

struct PcdHeader {
  std::vector<std::string> names, types;
  std::vector<int64_t> sizes, counts;
  int64_t width = -1, height = -1, points = -1;
  std::string data;
  size_t body = 0;
};

std::vector<int64_t> header_ints(const std::vector<std::string>& w, const std::string& where) {
  std::vector<int64_t> r;
  for (size_t i = 1; i < w.size(); ++i) r.push_back(parse_int64_strict(w[i], where + ": PCD " + w[0]));
  return r;
}

int64_t header_int(const std::vector<std::string>& w, const std::string& where) {
  if (w.size() != 2) fail(where, ": PCD ", w[0], " needs one value");
  return parse_int64_strict(w[1], where + ": PCD " + w[0]);
}

PcdHeader parse_pcd_header(const char* data, size_t size, const std::string& where) {
  PcdHeader h;
  size_t pos = 0;
  std::string line;
  std::map<std::string, int> seen;
  while (next_header_line(data, size, pos, line)) {
    auto w = split_words(line);
    if (w.empty() || w[0][0] == '#') continue;
    if (seen[w[0]]++) fail(where, ": PCD header line ", w[0], " appears twice");
    if (w[0] == "VERSION" || w[0] == "VIEWPOINT") continue;
    if (w[0] == "FIELDS")
      h.names.assign(w.begin() + 1, w.end());
    else if (w[0] == "TYPE")
      h.types.assign(w.begin() + 1, w.end());
    else if (w[0] == "SIZE")
      h.sizes = header_ints(w, where);
    else if (w[0] == "COUNT")
      h.counts = header_ints(w, where);
    else if (w[0] == "WIDTH")
      h.width = header_int(w, where);
    else if (w[0] == "HEIGHT")
      h.height = header_int(w, where);
    else if (w[0] == "POINTS")
      h.points = header_int(w, where);
    else if (w[0] == "DATA") {
      if (w.size() != 2) fail(where, ": malformed PCD DATA line '", line, "'");
      h.data = w[1];
      h.body = pos;
      return h;
    } else
      fail(where, ": unknown PCD header line '", line.substr(0, 40), "'");
  }
  fail(where, ": not a PCD file (no DATA line)");
}

// POINTS, checked against WIDTH x HEIGHT.
int64_t point_count(const PcdHeader& h, const std::string& where) {
  int64_t height = h.height < 0 ? 1 : h.height, organised = -1;
  if (h.width >= 0 && !checked_mul(h.width, height, &organised))
    fail(where, ": PCD WIDTH ", h.width, " x HEIGHT ", height, " overflows");
  if (h.points < 0 && organised < 0) fail(where, ": PCD header has neither POINTS nor WIDTH");
  if (h.points >= 0 && organised >= 0 && h.points != organised)
    fail(where, ": PCD WIDTH ", h.width, " x HEIGHT ", height, " = ", organised, " disagrees with POINTS ", h.points);
  return h.points >= 0 ? h.points : organised;
}

std::vector<CloudField> pcd_fields(const PcdHeader& h, size_t data_bytes, const std::string& where) {
  std::vector<int64_t> counts = h.counts.empty() ? std::vector<int64_t>(h.names.size(), 1) : h.counts;
  if (h.names.empty()) fail(where, ": PCD header has no FIELDS");
  if (h.names.size() != h.sizes.size() || h.names.size() != h.types.size() || h.names.size() != counts.size())
    fail(where, ": PCD FIELDS/SIZE/TYPE/COUNT have different lengths (", h.names.size(), "/", h.sizes.size(), "/",
         h.types.size(), "/", counts.size(), ")");
  std::vector<CloudField> fields;
  uint64_t total = 0;
  for (size_t i = 0; i < h.names.size(); ++i) {
    const std::string& t = h.types[i];
    int64_t sz = h.sizes[i];
    char kind = t == "F" ? 'f' : t == "I" ? 'i' : t == "U" ? 'u' : 0;
    bool size_ok = sz == 1 || sz == 2 || sz == 4 || sz == 8;
    if (!kind || !size_ok || (kind == 'f' && sz < 4))
      fail(where, ": PCD field '", h.names[i], "' has unsupported TYPE ", t, " SIZE ", sz);
    // Each value takes at least one byte: a COUNT larger than the data is no real file.
    total += static_cast<uint64_t>(counts[i]);
    if (counts[i] < 1 || total > data_bytes + 1)
      fail(where, ": PCD field '", h.names[i], "' has COUNT ", counts[i], ", more than the data can hold");
    bool padding = h.names[i] == "_";
    for (int64_t c = 0; c < counts[i]; ++c)
      fields.push_back(
          CloudField{counts[i] == 1 ? h.names[i] : str_cat(h.names[i], "_", c), kind, static_cast<int>(sz), padding});
  }
  return fields;
}

}  // namespace

Tensor parse_pcd(const void* data, size_t size, const std::string& where) {
  const char* b = static_cast<const char*>(data);
  PcdHeader h = parse_pcd_header(b, size, where);
  if (h.data == "binary_compressed") fail(where, ": PCD binary_compressed is not supported (save as binary or ascii)");
  if (h.data != "ascii" && h.data != "binary") fail(where, ": unknown PCD DATA kind '", h.data, "'");
  int64_t points = point_count(h, where);
  CloudLayout layout = make_cloud_layout(pcd_fields(h, size - h.body, where), where);
  return decode_cloud(b + h.body, size - h.body, points, layout, h.data == "ascii", false, where);
}

}  // namespace pointrt
