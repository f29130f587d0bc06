// Point-cloud file readers: KITTI-style .bin (float32 x, y, z, intensity), nuScenes .bin
// (5 floats), ASCII/binary .ply and .pcd. Each returns float32 [N, F].
#pragma once

#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

bool is_point_cloud_file(const std::string& path);
/// `bin_fields`: floats per point in a .bin file (4 for KITTI, 5 for nuScenes).
Tensor read_point_cloud(const std::string& path, int bin_fields = 4);

}  // namespace pointrt
