// Point-cloud readers. PLY: "ply" header with one vertex element whose properties are scalar
// (float/double/int/uint/short/ushort/char/uchar and their sized aliases), ascii or
// binary_little_endian; list properties and other elements after the vertices are skipped.
// PCD: header up to DATA (ascii or binary; binary_compressed is not supported), any FIELDS
// with SIZE/TYPE/COUNT. Every field becomes a float32 column, in file order.
#include "io/point_cloud.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "core/common.h"

namespace pointrt {

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot open");
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string extension(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(dot);
}

// A scalar field in a binary record.
struct Field {
  std::string name;
  char kind = 'f';  // 'f' float, 'i' signed, 'u' unsigned
  int size = 4;
};

double read_scalar(const char* p, const Field& f) {
  switch (f.kind) {
    case 'f': {
      if (f.size == 4) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
      }
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case 'i': {
      if (f.size == 1) return static_cast<int8_t>(*p);
      if (f.size == 2) {
        int16_t v;
        std::memcpy(&v, p, 2);
        return v;
      }
      if (f.size == 4) {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
      }
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default: {
      if (f.size == 1) return static_cast<uint8_t>(*p);
      if (f.size == 2) {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
      }
      if (f.size == 4) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
      }
      uint64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
  }
}

Field ply_field(const std::string& type, const std::string& name, const std::string& path) {
  static const std::map<std::string, std::pair<char, int>> types = {
      {"char", {'i', 1}},  {"int8", {'i', 1}},    {"uchar", {'u', 1}},  {"uint8", {'u', 1}},
      {"short", {'i', 2}}, {"int16", {'i', 2}},   {"ushort", {'u', 2}}, {"uint16", {'u', 2}},
      {"int", {'i', 4}},   {"int32", {'i', 4}},   {"uint", {'u', 4}},   {"uint32", {'u', 4}},
      {"float", {'f', 4}}, {"float32", {'f', 4}}, {"double", {'f', 8}}, {"float64", {'f', 8}}};
  auto it = types.find(type);
  if (it == types.end()) fail(path, ": unsupported PLY property type '", type, "' for '", name, "'");
  return Field{name, it->second.first, it->second.second};
}

// Parse `count` records of `fields`, ascii or binary, from `body` into [count, fields] float32.
Tensor decode_records(const std::string& path, const std::string& body, size_t offset, int64_t count,
                      const std::vector<Field>& fields, bool ascii) {
  int64_t nf = static_cast<int64_t>(fields.size());
  Tensor t = Tensor::allocate(DType::kFloat32, {count, nf});
  float* out = t.data_as<float>();
  if (ascii) {
    std::istringstream is(body.substr(offset));
    for (int64_t i = 0; i < count * nf; ++i) {
      double v;
      if (!(is >> v)) fail(path, ": expected ", count, " points with ", nf, " values each, the data ends at value ", i);
      out[i] = static_cast<float>(v);
    }
    return t;
  }
  size_t record = 0;
  for (const auto& f : fields) record += static_cast<size_t>(f.size);
  if (body.size() < offset || (body.size() - offset) / record < static_cast<size_t>(count))
    fail(path, ": binary data holds ", (body.size() - std::min(body.size(), offset)) / record,
         " points, the header says ", count);
  const char* p = body.data() + offset;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < nf; ++j) {
      out[i * nf + j] = static_cast<float>(read_scalar(p, fields[j]));
      p += fields[j].size;
    }
  return t;
}

Tensor read_ply(const std::string& path) {
  std::string b = read_all(path);
  if (b.compare(0, 3, "ply") != 0) fail(path, ": not a PLY file (no 'ply' magic)");
  auto end = b.find("end_header");
  if (end == std::string::npos) fail(path, ": PLY header has no end_header");
  size_t body = b.find('\n', end);
  if (body == std::string::npos) fail(path, ": PLY header is truncated");
  ++body;
  std::istringstream hs(b.substr(0, end));
  std::string line, format;
  int64_t vertices = -1;
  bool in_vertex = false, vertex_seen = false;
  std::vector<Field> fields;
  while (std::getline(hs, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "format")
      ls >> format;
    else if (key == "element") {
      std::string name;
      int64_t n;
      ls >> name >> n;
      if (vertex_seen && !in_vertex) continue;
      in_vertex = name == "vertex";
      if (in_vertex) {
        vertices = n;
        vertex_seen = true;
      } else if (!vertex_seen)
        fail(path, ": PLY element '", name, "' before 'vertex' is not supported");
    } else if (key == "property" && in_vertex) {
      std::string type, name;
      ls >> type;
      if (type == "list") fail(path, ": list property in the vertex element is not supported");
      ls >> name;
      fields.push_back(ply_field(type, name, path));
    }
  }
  if (vertices < 0) fail(path, ": PLY file has no vertex element");
  if (fields.size() < 3) fail(path, ": PLY vertices need at least x, y, z (found ", fields.size(), " properties)");
  if (format == "binary_big_endian") fail(path, ": big-endian PLY is not supported");
  if (format != "ascii" && format != "binary_little_endian") fail(path, ": unknown PLY format '", format, "'");
  return decode_records(path, b, body, vertices, fields, format == "ascii");
}

Tensor read_pcd(const std::string& path) {
  std::string b = read_all(path);
  std::istringstream hs(b);
  std::string line;
  std::vector<std::string> names, types;
  std::vector<int> sizes, counts;
  int64_t points = -1;
  std::string data;
  size_t offset = 0;
  while (std::getline(hs, line)) {
    offset += line.size() + 1;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key, v;
    ls >> key;
    if (key == "FIELDS")
      while (ls >> v) names.push_back(v);
    else if (key == "SIZE")
      while (ls >> v) sizes.push_back(std::stoi(v));
    else if (key == "TYPE")
      while (ls >> v) types.push_back(v);
    else if (key == "COUNT")
      while (ls >> v) counts.push_back(std::stoi(v));
    else if (key == "POINTS")
      ls >> points;
    else if (key == "DATA") {
      ls >> data;
      break;
    }
  }
  if (data.empty()) fail(path, ": not a PCD file (no DATA line)");
  if (data == "binary_compressed") fail(path, ": PCD binary_compressed is not supported (save as binary or ascii)");
  if (names.size() != sizes.size() || names.size() != types.size())
    fail(path, ": PCD FIELDS/SIZE/TYPE have different lengths");
  if (counts.empty()) counts.assign(names.size(), 1);
  if (points < 0) fail(path, ": PCD header has no POINTS");
  std::vector<Field> fields;
  for (size_t i = 0; i < names.size(); ++i) {
    char kind = types[i] == "F" ? 'f' : types[i] == "I" ? 'i' : types[i] == "U" ? 'u' : 0;
    if (!kind || !(sizes[i] == 1 || sizes[i] == 2 || sizes[i] == 4 || sizes[i] == 8))
      fail(path, ": PCD field '", names[i], "' has unsupported TYPE ", types[i], " SIZE ", sizes[i]);
    for (int c = 0; c < counts[i]; ++c) fields.push_back(Field{names[i], kind, sizes[i]});
  }
  if (fields.size() < 3) fail(path, ": PCD points need at least x, y, z");
  return decode_records(path, b, offset, points, fields, data == "ascii");
}

}  // namespace

bool is_point_cloud_file(const std::string& path) {
  std::string ext = extension(path);
  return ext == ".bin" || ext == ".ply" || ext == ".pcd";
}

Tensor read_point_cloud(const std::string& path, int bin_fields) {
  std::string ext = extension(path);
  if (ext == ".ply") return read_ply(path);
  if (ext == ".pcd") return read_pcd(path);
  if (ext != ".bin") fail(path, ": unknown point-cloud extension '", ext, "' (expected .bin, .ply or .pcd)");
  if (bin_fields < 3) fail(path, ": a .bin cloud needs at least 3 floats per point, got ", bin_fields);
  std::string b = read_all(path);
  size_t point_bytes = sizeof(float) * static_cast<size_t>(bin_fields);
  if (b.size() % point_bytes)
    fail(path, ": ", b.size(), " bytes is not a whole number of ", bin_fields,
         "-float points (KITTI .bin has 4, nuScenes 5)");
  int64_t n = static_cast<int64_t>(b.size() / point_bytes);
  Tensor t = Tensor::allocate(DType::kFloat32, {n, bin_fields});
  if (!b.empty()) std::memcpy(t.data(), b.data(), b.size());
  return t;
}

}  // namespace pointrt
