#include "io/point_cloud.h"

#include <fstream>

#include "core/common.h"

namespace pointrt {

bool is_point_cloud_file(const std::string& path) {
  auto dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = path.substr(dot);
  return ext == ".bin" || ext == ".ply" || ext == ".pcd";
}

Tensor read_point_cloud(const std::string& path, int bin_fields) {
  auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot);
  if (ext == ".bin") {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path, ": cannot open");
    std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t point_bytes = sizeof(float) * static_cast<size_t>(bin_fields);
    if (b.size() % point_bytes)
      fail(path, ": ", b.size(), " bytes is not a whole number of ", bin_fields, "-float points");
    int64_t n = static_cast<int64_t>(b.size() / point_bytes);
    Tensor t = Tensor::allocate(DType::kFloat32, {n, bin_fields});
    if (!b.empty()) std::memcpy(t.data(), b.data(), b.size());
    return t;
  }
  fail(path, ": reading ", ext, " point clouds is not implemented yet");
}

}  // namespace pointrt
