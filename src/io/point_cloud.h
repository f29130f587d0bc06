// Point-cloud file readers: KITTI-style .bin (float32 x, y, z, intensity), nuScenes .bin
// (5 floats), ASCII/binary .ply and .pcd. Each returns float32 [N, F] whose first three columns
// are x, y, z (whatever their order in the file), followed by the file's other scalar fields in
// file order. Readers are strict: a cloud without x, y or z, a header whose counts disagree (PCD
// WIDTH x HEIGHT != POINTS) or claim more points than the data holds, a malformed number and
// trailing data are Errors naming the file.
#pragma once

#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

bool is_point_cloud_file(const std::string& path);
/// `bin_fields`: floats per point in a .bin file (4 for KITTI, 5 for nuScenes; at least 3).
Tensor read_point_cloud(const std::string& path, int bin_fields = 4);

/// In-memory readers (the fuzz targets use these); `where` names the source in errors.
Tensor parse_ply(const void* data, size_t size, const std::string& where);
Tensor parse_pcd(const void* data, size_t size, const std::string& where);
Tensor parse_bin_cloud(const void* data, size_t size, int bin_fields, const std::string& where);

}  // namespace pointrt
