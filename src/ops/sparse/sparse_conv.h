// pointrt::SparseConv (OPS.md "SparseConv"; reference: spconv 2.x SubMConv3d / SparseConv3d /
// SparseConvTranspose3d / SparseInverseConv3d).
//
// Inputs: features [N, Cin] float32, indices [N, 4] int32/int64 (batch, i0, i1, i2),
//         weight [Cout, k0, k1, k2, Cin] float32, optional bias [Cout].
// Outputs: out_features [M, Cout] float32, out_indices [M, 4] int32.
// Attributes: kernel_size, stride (1s), padding (0s), dilation (1s), output_padding (0s) — ints[3]
//   in the axis order of the indices; input_spatial_shape (required); output_spatial_shape
//   (optional, checked); subm / transposed / inverse (0); rulebook (""); activation ("None",
//   "ReLU", "LeakyReLU" with alpha (0.01), "Sigmoid").
//
// Kernel offset o = (a0 * k1 + a1) * k2 + a2 indexes weight[:, a0, a1, a2, :].
// Shape and ordering rules:
//   - subm: output sites = input sites, in input order; q = p + (a - (k-1)/2) * dilation;
//     odd kernel sizes only; stride/padding ignored; output shape = input shape.
//   - regular: out = (in + 2*pad - dil*(k-1) - 1) / stride + 1 (floor); output sites = every p in
//     range with an input q = p*stride - pad + a*dil; rows sorted by (batch, i0, i1, i2).
//   - transposed: out = (in - 1)*stride - 2*pad + dil*(k-1) + output_padding + 1; input q reaches
//     p = q*stride - pad + a*dil; rows sorted by (batch, i0, i1, i2).
//   - inverse: `rulebook` names an earlier regular SparseConv; output sites = that convolution's
//     input sites in its input order, output shape = its input shape; each of its pairs
//     (q_in, o, p_out) contributes out[q_in] += W[:, o, :] . x[p_out]. The inverse node's indices
//     must be that convolution's output sites.
//   - bias is added, then the activation applied.
// Rulebook sharing: nodes with the same non-empty key reuse one pairing per run (RunCache);
// subm nodes sharing a key must have the same kernel size, dilation and input sites.
// Errors: index outside input_spatial_shape, negative batch, duplicate site, output_spatial_shape
// mismatch, inverse with an unknown key, Cin mismatch with the weight, even kernel for subm.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "ops/sparse/sparse_common.h"

namespace pointrt::sparse {

enum class ConvKind { kSubm, kRegular, kTransposed, kInverse };

struct SparseConvAttrs {
  Shape3 kernel{1, 1, 1}, stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1}, output_padding{0, 0, 0};
  Shape3 in_shape{0, 0, 0}, out_shape{0, 0, 0};
  ConvKind kind = ConvKind::kRegular;
  std::string rulebook;
  Activation act = Activation::kNone;
  float alpha = 0.01f;
  // For an inverse node: the referenced regular convolution (found in the graph at prepare).
  std::shared_ptr<SparseConvAttrs> forward;
  std::string node_name;

  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
};

/// Parse and check attributes; for an inverse node, look up the regular convolution with the same
/// rulebook key in init.graph (error naming the key when there is none).
SparseConvAttrs parse_sparse_conv_attrs(const KernelInit& init);
/// Same from bare attributes (tests, benchmarks); `forward` must be set for an inverse.
SparseConvAttrs parse_sparse_conv_attrs(const Attributes& attrs, const std::string& where,
                                        std::shared_ptr<SparseConvAttrs> forward = nullptr);

/// Per kernel offset, the (in_row, out_row) pairs; within one offset an out_row occurs at most
/// once and the list is sorted by out_row (so output-row blocks can be processed independently).
struct PairLists {
  int64_t num_out = 0;
  std::vector<std::vector<int32_t>> in_rows, out_rows;  // [kernel volume][pairs]
  int64_t identity_offset = -1;                         // subm centre: pairs (r, r) for every row
  int64_t total_pairs() const {
    int64_t t = 0;
    for (const auto& v : in_rows) t += static_cast<int64_t>(v.size());
    return t;
  }
};

/// The site pairing of one convolution.
struct Rulebook {
  SparseConvAttrs attrs;           // geometry it was built for
  Sites in_sites;                  // the input sites (copy: sharing checks and inverse output)
  std::vector<int32_t> out_sites;  // pairs.num_out * 4; empty for subm (= in_sites)
  PairLists pairs;
  const int32_t* out_site_rows() const {
    return attrs.kind == ConvKind::kSubm ? in_sites.rows.data() : out_sites.data();
  }
};

/// How build_rulebook finds the pairs. kSorted: radix-sort the sites by linear key once, then one
/// merge-join (two-pointer walk) per offset — sequential memory access, no hashing. kHash: site
/// hash map + one probe per (output, offset). Both give identical PairLists; kAuto picks kSorted
/// unless the padded key space does not fit 62 bits (then kHash). kHash stays as the fallback and
/// as a test oracle for kSorted.
enum class RulebookMethod { kAuto, kSorted, kHash };

/// Build the pairing for a subm, regular or transposed convolution from validated sites (a
/// duplicate site is an error naming both rows).
std::shared_ptr<Rulebook> build_rulebook(const SparseConvAttrs& attrs, Sites in_sites, const IndexSource& src,
                                         RulebookMethod method = RulebookMethod::kAuto);

/// The pairs of a convolution read backwards (for its inverse): gather from its outputs, scatter
/// to its `num_in` inputs, sorted by the new destination.
PairLists reverse_pairs(const PairLists& forward, int64_t num_in);

/// out [num_out x Cout] = sum over offsets of gathered x rows times the packed weight
/// (packed[o] is [Cin x Cout]). One parallel region over blocks of output rows; per block and
/// offset: gather, dnnl_sgemm, scatter-add (race-free: blocks own their rows).
void apply_pairs(const PairLists& pairs, const float* x, int64_t cin, const float* packed_weight, int64_t cout,
                 float* out);

/// weight [Cout, K, Cin] -> packed [K, Cin, Cout].
std::vector<float> pack_sparse_weight(const float* weight, int64_t cout, int64_t volume, int64_t cin);

std::unique_ptr<OpKernel> make_sparse_conv_kernel(const KernelInit& init);
/// The naive oracle of OPS.md (std::map site lookup, one output site at a time).
std::unique_ptr<OpKernel> make_sparse_conv_reference_kernel(const KernelInit& init);

/// A sparse result: sites [rows, 4] and features [rows, channels].
struct SparseResult {
  int64_t rows = 0, channels = 0;
  std::vector<int32_t> sites;
  std::vector<float> features;
};
/// Second oracle: dense convolution on the densified grid (small grids only), restricted to the
/// output sites, rows sorted by (batch, i0, i1, i2). For an inverse, `forward_input_indices` are
/// the referenced convolution's input indices (attrs.forward must be set).
SparseResult sparse_conv_dense_oracle(const SparseConvAttrs& attrs, const Tensor& features, const Tensor& indices,
                                      const Tensor& weight, const Tensor* bias,
                                      const Tensor* forward_input_indices = nullptr);

}  // namespace pointrt::sparse
