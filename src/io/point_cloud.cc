// Dispatch by extension, and the headerless .bin clouds (KITTI, nuScenes).
#include "io/point_cloud.h"

#include "core/common.h"
#include "core/file_io.h"

namespace pointrt {

namespace {
std::string extension(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(dot);
}
}  // namespace

bool is_point_cloud_file(const std::string& path) {
  std::string ext = extension(path);
  return ext == ".bin" || ext == ".ply" || ext == ".pcd";
}

Tensor parse_bin_cloud(const void* data, size_t size, int bin_fields, const std::string& where) {
  if (bin_fields < 3 || bin_fields > 1024)
    fail(where, ": a .bin cloud needs 3 to 1024 floats per point, got ", bin_fields);
  size_t point_bytes = sizeof(float) * static_cast<size_t>(bin_fields);
  if (size % point_bytes)
    fail(where, ": ", size, " bytes is not a whole number of ", bin_fields,
         "-float points (KITTI .bin has 4, nuScenes 5)");
  int64_t n = static_cast<int64_t>(size / point_bytes);
  Tensor t = Tensor::allocate(DType::kFloat32, {n, bin_fields});
  if (size) std::memcpy(t.data(), data, size);
  return t;
}

Tensor read_point_cloud(const std::string& path, int bin_fields) {
  std::string ext = extension(path);
  if (ext != ".ply" && ext != ".pcd" && ext != ".bin")
    fail(path, ": unknown point-cloud extension '", ext, "' (expected .bin, .ply or .pcd)");
  std::string b = read_regular_file(path);
  if (ext == ".ply") return parse_ply(b.data(), b.size(), path);
  if (ext == ".pcd") return parse_pcd(b.data(), b.size(), path);
  return parse_bin_cloud(b.data(), b.size(), bin_fields, path);
}

}  // namespace pointrt
