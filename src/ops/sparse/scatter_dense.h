// pointrt::ScatterDense (OPS.md "ScatterDense"; reference: spconv's SparseConvTensor.dense()).
//
// Inputs: features [N, C] float32, indices [N, 4] int32/int64 (batch, i0, i1, i2).
// Attributes: spatial_shape ints[3] (S0, S1, S2); batch_size int (default 1).
// Output: [batch_size, C, S0, S1, S2] float32; sites without a row are 0.
// Errors: a batch outside [0, batch_size), a spatial index outside [0, S), a duplicate site.
// These are the usual reasons for "the output after ScatterDense is all zeros", so the message
// says which column is out of range, by how much, how many rows, and the likely cause
// (columns in x,y,z order for a z,y,x shape, indices from a finer grid than spatial_shape,
// padding rows of -1, batch_size too small). docs/scatter-dense-zeros.md walks through them.
#pragma once

#include <memory>
#include <string>

#include "ops/kernel.h"
#include "ops/sparse/sparse_common.h"

namespace pointrt::sparse {

struct ScatterDenseAttrs {
  Shape3 spatial{0, 0, 0};
  int64_t batch_size = 1;
};
ScatterDenseAttrs parse_scatter_dense_attrs(const Attributes& a, const std::string& where);

/// Validates indices (int32/int64 [N, 4]) against batch_size and spatial_shape; on a problem
/// throws the diagnostic error described above. Returns nothing when all rows are in range
/// (duplicates are checked by the caller).
void check_scatter_indices(const Tensor& indices, const ScatterDenseAttrs& a, const std::string& where,
                           const std::string& indices_text);

std::unique_ptr<OpKernel> make_scatter_dense_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_scatter_dense_reference_kernel(const KernelInit& init);

}  // namespace pointrt::sparse
