// pointrt::Voxelize (OPS.md "Voxelize"; reference: NVIDIA CUDA-CenterPoint's voxelizer and
// mmcv's hard voxelization with CenterPoint's mean voxel feature encoder).
//
// Input: points [P, F] float32, F >= 3, columns x, y, z first.
// Attributes: voxel_size floats[3] (vx, vy, vz); point_cloud_range floats[6]
//   (xmin, ymin, zmin, xmax, ymax, zmax); max_points_per_voxel int; max_voxels int.
// Outputs: voxel_features [V, F] float32 (per-channel mean of the kept points, summed in point
//   order in float32, then divided by the count), coords [V, 4] int32 (0, z, y, x),
//   num_points [V] int32.
// Rules:
//   - grid G = round((max - min) / size) per axis, computed in float32.
//   - a point is kept when min <= p < max on every axis and its cell floor((p - min) / size)
//     (float32) lies in [0, G); a point just below max whose quotient rounds up to G is dropped.
//     NaN coordinates fail the comparisons and are dropped.
//   - voxels are numbered in order of their first point; a voxel keeps its first
//     max_points_per_voxel points; a point whose voxel would be number max_voxels or later is
//     dropped (with its voxel).
#pragma once

#include <array>
#include <cmath>
#include <memory>

#include "ops/kernel.h"

namespace pointrt::sparse {

struct VoxelizeAttrs {
  std::array<float, 3> voxel_size{};
  std::array<float, 6> range{};
  std::array<int64_t, 3> grid{};  // Gx, Gy, Gz
  int64_t max_points_per_voxel = 0;
  int64_t max_voxels = 0;
};
VoxelizeAttrs parse_voxelize_attrs(const Attributes& a, const std::string& where);

/// Cell of a point as (x, y, z) or false when the point is dropped.
inline bool voxel_cell(const float* p, const VoxelizeAttrs& a, int64_t cell[3]) {
  for (int d = 0; d < 3; ++d) {
    const float lo = a.range[d], hi = a.range[d + 3];
    if (!(p[d] >= lo && p[d] < hi)) return false;
    const float c = std::floor((p[d] - lo) / a.voxel_size[d]);
    if (!(c >= 0.f && c < static_cast<float>(a.grid[d]))) return false;
    cell[d] = static_cast<int64_t>(c);
  }
  return true;
}

std::unique_ptr<OpKernel> make_voxelize_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_voxelize_reference_kernel(const KernelInit& init);

}  // namespace pointrt::sparse
