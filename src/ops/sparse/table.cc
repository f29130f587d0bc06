// Operator table rows of the pointrt sparse family (OPS.md "Sparse-convolution family"), its ONNX
// schemas and the NVIDIA scn.onnx importer.
#include "graph/scn_import.h"
#include "ops/families.h"
#include "ops/sparse/scatter_dense.h"
#include "ops/sparse/schemas.h"
#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/voxelize.h"

namespace pointrt {

Family register_sparse() {
  Family family{"sparse"};
  OpTable& t = family.rows;
  t.add({"pointrt", "Voxelize", 1, 1, kFloat32Only, sparse::make_voxelize_kernel,
         "points [P, F] -> voxel_features (mean), coords (0, z, y, x), num_points"});
  t.add({"pointrt", "SparseConv", 1, 1, kFloat32Only, sparse::make_sparse_conv_kernel,
         "submanifold / regular / transposed / inverse; indices int32 or int64; rulebook sharing"});
  t.add({"pointrt", "ScatterDense", 1, 1, kFloat32Only, sparse::make_scatter_dense_kernel,
         "[N, C] + indices -> [B, C, S0, S1, S2]; diagnoses out-of-range indices"});
  family.schemas = sparse::sparse_schemas();
  family.importers.push_back(&rewrite_nvidia_scn);
  return family;
}

}  // namespace pointrt
