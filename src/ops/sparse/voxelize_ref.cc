// Naive Voxelize oracle: OPS.md literally, with a std::map cell -> voxel.
#include <map>

#include "ops/sparse/voxelize.h"

namespace pointrt::sparse {
namespace {

class VoxelizeReferenceKernel : public OpKernel {
 public:
  explicit VoxelizeReferenceKernel(const KernelInit& init) : a_(parse_voxelize_attrs(init.attrs(), init.where())) {}

  void run(KernelContext& ctx) const override {
    const Tensor& pts = ctx.input(0);
    const int64_t p = pts.dim(0), f = pts.dim(1);
    std::map<std::array<int64_t, 3>, size_t> voxel_of;  // (z, y, x) -> voxel number
    std::vector<std::array<int64_t, 3>> cells;
    std::vector<std::vector<float>> sums;
    std::vector<int32_t> counts;
    for (int64_t i = 0; i < p; ++i) {
      const float* q = pts.data_as<float>() + i * f;
      bool keep = true;
      int64_t cell[3];
      for (int d = 0; d < 3 && keep; ++d) {
        keep = q[d] >= a_.range[d] && q[d] < a_.range[d + 3];
        float c = std::floor((q[d] - a_.range[d]) / a_.voxel_size[d]);
        keep = keep && c >= 0.f && c < float(a_.grid[d]);
        cell[d] = keep ? int64_t(c) : 0;
      }
      if (!keep) continue;
      std::array<int64_t, 3> zyx{cell[2], cell[1], cell[0]};
      auto it = voxel_of.find(zyx);
      if (it == voxel_of.end()) {
        if (int64_t(cells.size()) >= a_.max_voxels) continue;
        it = voxel_of.emplace(zyx, cells.size()).first;
        cells.push_back(zyx);
        sums.emplace_back(f, 0.f);
        counts.push_back(0);
      }
      size_t v = it->second;
      if (counts[v] >= a_.max_points_per_voxel) continue;
      counts[v]++;
      for (int64_t c = 0; c < f; ++c) sums[v][c] += q[c];
    }
    const int64_t nv = int64_t(cells.size());
    Tensor& feats = ctx.output(0, DType::kFloat32, {nv, f});
    Tensor& coords = ctx.output(1, DType::kInt32, {nv, 4});
    Tensor& num = ctx.output(2, DType::kInt32, {nv});
    for (int64_t v = 0; v < nv; ++v) {
      for (int64_t c = 0; c < f; ++c) feats.data_as<float>()[v * f + c] = sums[v][c] / float(counts[v]);
      coords.data_as<int32_t>()[4 * v] = 0;
      for (int d = 0; d < 3; ++d) coords.data_as<int32_t>()[4 * v + 1 + d] = int32_t(cells[v][d]);
      num.data_as<int32_t>()[v] = counts[v];
    }
  }

 private:
  VoxelizeAttrs a_;
};

}  // namespace

std::unique_ptr<OpKernel> make_voxelize_reference_kernel(const KernelInit& init) {
  return std::make_unique<VoxelizeReferenceKernel>(init);
}

}  // namespace pointrt::sparse
