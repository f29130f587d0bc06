// PLY: "ply" header with one vertex element (the first element) whose properties are scalar
// (float/double/int/uint/short/ushort/char/uchar and their sized aliases), ascii or
// binary_little_endian; elements after the vertices (faces) are not read.
#include <map>

#include "core/checked_size.h"
#include "core/common.h"
#include "io/cloud_records.h"
#include "io/point_cloud.h"

namespace pointrt {

namespace {

CloudField ply_field(const std::string& type, const std::string& name, const std::string& where) {
  static const std::map<std::string, std::pair<char, int>> types = {
      {"char", {'i', 1}},  {"int8", {'i', 1}},    {"uchar", {'u', 1}},  {"uint8", {'u', 1}},
      {"short", {'i', 2}}, {"int16", {'i', 2}},   {"ushort", {'u', 2}}, {"uint16", {'u', 2}},
      {"int", {'i', 4}},   {"int32", {'i', 4}},   {"uint", {'u', 4}},   {"uint32", {'u', 4}},
      {"float", {'f', 4}}, {"float32", {'f', 4}}, {"double", {'f', 8}}, {"float64", {'f', 8}}};
  auto it = types.find(type);
  if (it == types.end()) fail(where, ": unsupported PLY property type '", type, "' for '", name, "'");
  return CloudField{name, it->second.first, it->second.second, false};
}

struct PlyHeader {
  std::string format;
  int64_t vertices = -1;
  std::vector<CloudField> fields;
  bool elements_after_vertex = false;
  size_t body = 0;
};

PlyHeader parse_ply_header(const char* data, size_t size, const std::string& where) {
  PlyHeader h;
  size_t pos = 0;
  std::string line;
  if (!next_header_line(data, size, pos, line) || line != "ply") fail(where, ": not a PLY file (no 'ply' line)");
  bool in_vertex = false, ended = false;
  while (next_header_line(data, size, pos, line)) {
    auto w = split_words(line);
    if (w.empty() || w[0] == "comment" || w[0] == "obj_info") continue;
    if (w[0] == "end_header") {
      if (w.size() != 1) fail(where, ": malformed PLY line '", line, "'");
      ended = true;
      break;
    }
    if (w[0] == "format") {
      if (w.size() != 3 || w[2] != "1.0") fail(where, ": malformed PLY format line '", line, "'");
      h.format = w[1];
    } else if (w[0] == "element") {
      if (w.size() != 3) fail(where, ": malformed PLY element line '", line, "'");
      int64_t n = parse_int64_strict(w[2], where + ": PLY element '" + w[1] + "' count");
      if (h.vertices >= 0) {
        in_vertex = false;
        h.elements_after_vertex = true;
      } else if (w[1] != "vertex") {
        fail(where, ": PLY element '", w[1], "' before 'vertex' is not supported");
      } else {
        in_vertex = true;
        h.vertices = n;
      }
    } else if (w[0] == "property") {
      if (h.vertices < 0) fail(where, ": PLY property before any element");
      if (w.size() >= 2 && w[1] == "list") {
        if (in_vertex) fail(where, ": list property in the vertex element is not supported");
        continue;
      }
      if (w.size() != 3) fail(where, ": malformed PLY property line '", line, "'");
      if (in_vertex) h.fields.push_back(ply_field(w[1], w[2], where));
    } else {
      fail(where, ": unknown PLY header line '", line.substr(0, 40), "'");
    }
  }
  if (!ended) fail(where, ": PLY header has no end_header");
  if (h.vertices < 0) fail(where, ": PLY file has no vertex element");
  if (h.format == "binary_big_endian") fail(where, ": big-endian PLY is not supported");
  if (h.format != "ascii" && h.format != "binary_little_endian") fail(where, ": unknown PLY format '", h.format, "'");
  h.body = pos;
  return h;
}

}  // namespace

Tensor parse_ply(const void* data, size_t size, const std::string& where) {
  const char* b = static_cast<const char*>(data);
  PlyHeader h = parse_ply_header(b, size, where);
  CloudLayout layout = make_cloud_layout(h.fields, where);
  return decode_cloud(b + h.body, size - h.body, h.vertices, layout, h.format == "ascii", h.elements_after_vertex,
                      where);
}

}  // namespace pointrt
