// Optimised Voxelize: parallel cell computation, then one ordered pass (voxel numbering depends
// on point order) with an open-addressing cell -> voxel map.
#include "ops/sparse/voxelize.h"

#include <omp.h>

#include <cmath>
#include <cstring>

#include "ops/sparse/sparse_common.h"

namespace pointrt::sparse {

VoxelizeAttrs parse_voxelize_attrs(const Attributes& attrs, const std::string& where) {
  VoxelizeAttrs a;
  auto vs = attrs.get_floats("voxel_size");
  auto r = attrs.get_floats("point_cloud_range");
  if (vs.size() != 3) fail(where, ": attribute 'voxel_size' must have 3 values (vx, vy, vz), got ", vs.size());
  if (r.size() != 6)
    fail(where, ": attribute 'point_cloud_range' must have 6 values (xmin, ymin, zmin, xmax, ymax, zmax), got ",
         r.size());
  for (int d = 0; d < 3; ++d) {
    a.voxel_size[d] = vs[d];
    a.range[d] = r[d];
    a.range[d + 3] = r[d + 3];
    if (!(vs[d] > 0.f)) fail(where, ": voxel_size[", d, "] = ", vs[d], " must be > 0");
    if (!(r[d + 3] > r[d])) fail(where, ": point_cloud_range max ", r[d + 3], " must be > min ", r[d], " on axis ", d);
    a.grid[d] = static_cast<int64_t>(std::nearbyint((a.range[d + 3] - a.range[d]) / a.voxel_size[d]));
    if (a.grid[d] < 1 || a.grid[d] > (1 << 24))
      fail(where, ": the grid size ", a.grid[d], " on axis ", d,
           " (from point_cloud_range and voxel_size) is not in [1, 2^24]");
  }
  if (a.grid[0] * a.grid[1] * a.grid[2] > (int64_t(1) << 40))
    fail(where, ": the voxel grid [", a.grid[0], ", ", a.grid[1], ", ", a.grid[2], "] has more than 2^40 cells");
  a.max_points_per_voxel = attrs.get_int("max_points_per_voxel");
  a.max_voxels = attrs.get_int("max_voxels");
  if (a.max_points_per_voxel < 1) fail(where, ": max_points_per_voxel = ", a.max_points_per_voxel, " must be >= 1");
  if (a.max_voxels < 0 || a.max_voxels > (int64_t(1) << 30))
    fail(where, ": max_voxels = ", a.max_voxels, " is out of range [0, 2^30]");
  return a;
}

namespace {

void check_points(const Tensor& pts, const std::string& where) {
  if (pts.dtype() != DType::kFloat32 || pts.rank() != 2 || pts.dim(1) < 3)
    fail(where, ": input 0 (points) must be float32 [P, F] with F >= 3 (x, y, z first), got ", dtype_name(pts.dtype()),
         " ", shape_to_string(pts.shape()));
}

class VoxelizeKernel : public OpKernel {
 public:
  explicit VoxelizeKernel(const KernelInit& init)
      : attrs_(parse_voxelize_attrs(init.attrs(), init.where())), where_(init.where()) {}

  void run(KernelContext& ctx) const override {
    const Tensor& pts = ctx.input(0);
    check_points(pts, where_);
    const int64_t p = pts.dim(0), f = pts.dim(1);
    const float* pd = pts.data_as<float>();
    const auto& g = attrs_.grid;
    // Cell key per point (z-major, matching coords (z, y, x)); kEmpty = dropped.
    std::vector<uint64_t> keys(static_cast<size_t>(p));
#pragma omp parallel for schedule(static) if (p > (1 << 19))
    for (int64_t i = 0; i < p; ++i) {
      int64_t c[3];
      keys[i] = voxel_cell(pd + i * f, attrs_, c) ? static_cast<uint64_t>((c[2] * g[1] + c[1]) * g[0] + c[0])
                                                  : SiteMap::kEmpty;
    }
    const int64_t cap = std::min<int64_t>(p, attrs_.max_voxels);
    SiteMap map(cap);
    std::vector<uint64_t> voxel_key;
    std::vector<int32_t> counts;
    std::vector<float> sums;
    voxel_key.reserve(cap);
    counts.reserve(cap);
    sums.reserve(static_cast<size_t>(cap * f));
    for (int64_t i = 0; i < p; ++i) {
      const uint64_t key = keys[i];
      if (key == SiteMap::kEmpty) continue;
      int32_t v = map.find(key);
      if (v < 0) {
        if (static_cast<int64_t>(counts.size()) >= attrs_.max_voxels) continue;
        v = static_cast<int32_t>(counts.size());
        map.insert(key, v);
        voxel_key.push_back(key);
        counts.push_back(0);
        sums.resize(sums.size() + f, 0.f);
      }
      if (counts[v] >= attrs_.max_points_per_voxel) continue;
      ++counts[v];
      float* s = sums.data() + static_cast<int64_t>(v) * f;
      const float* q = pd + i * f;
      for (int64_t c = 0; c < f; ++c) s[c] += q[c];
    }
    const int64_t nv = static_cast<int64_t>(counts.size());
    Tensor& feats = ctx.output(0, DType::kFloat32, {nv, f});
    Tensor& coords = ctx.output(1, DType::kInt32, {nv, 4});
    Tensor& num = ctx.output(2, DType::kInt32, {nv});
    float* fo = feats.data_as<float>();
    int32_t* co = coords.data_as<int32_t>();
    int32_t* no = num.data_as<int32_t>();
#pragma omp parallel for schedule(static) if (nv > (1 << 18))
    for (int64_t v = 0; v < nv; ++v) {
      const float inv = static_cast<float>(counts[v]);
      for (int64_t c = 0; c < f; ++c) fo[v * f + c] = sums[v * f + c] / inv;
      uint64_t k = voxel_key[v];
      co[4 * v + 0] = 0;
      co[4 * v + 3] = static_cast<int32_t>(k % g[0]);
      k /= g[0];
      co[4 * v + 2] = static_cast<int32_t>(k % g[1]);
      k /= g[1];
      co[4 * v + 1] = static_cast<int32_t>(k);
      no[v] = counts[v];
    }
  }

 private:
  VoxelizeAttrs attrs_;
  std::string where_;
};

}  // namespace

std::unique_ptr<OpKernel> make_voxelize_kernel(const KernelInit& init) {
  return std::make_unique<VoxelizeKernel>(init);
}

}  // namespace pointrt::sparse
