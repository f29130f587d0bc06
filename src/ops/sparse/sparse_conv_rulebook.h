// Internal to SparseConv's rulebook builders (sparse_conv_rulebook*.cc): the steps
// build_rulebook (sparse_conv.h) chooses between, and the helpers they share. Following spconv,
// pairing sites is kept apart from the gather-GEMM-scatter (sparse_conv_gemm.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/sparse/sparse_conv.h"

namespace pointrt::sparse {

/// Submanifold pairing by merge-join over the sorted sites (sparse_conv_rulebook_subm.cc).
/// Returns false when the padded key space does not fit 62 bits (the caller uses build_hashed).
bool build_subm_sorted(Rulebook& rb, const IndexSource& src);
/// Regular / transposed pairing by merge-join (sparse_conv_rulebook_strided.cc).
void build_strided_sorted(Rulebook& rb, const IndexSource& src);
/// Any kind by site hash map, one probe per (output, offset) (sparse_conv_rulebook_hash.cc).
void build_hashed(Rulebook& rb, const IndexSource& src);

/// Input-coordinate tables for regular / transposed convolutions: fwd[d][c * k + a] is the output
/// coordinate input coordinate c reaches through tap a, or -1.
void forward_tap_tables(const SparseConvAttrs& attrs, std::vector<int32_t> fwd[3]);

/// Stable LSD radix sort of (key, row) pairs by key (every key < 2^bits); keys alone.
void radix_sort_by_key(std::vector<uint64_t>& keys, std::vector<int32_t>& rows, int bits);
void radix_sort_keys(std::vector<uint64_t>& keys, int bits);
/// rb.out_sites and rb.pairs.num_out from the sorted unique output keys (error naming src.where
/// when there are too many).
void set_output_sites(Rulebook& rb, const std::vector<uint64_t>& sorted_keys, const IndexSource& src);
/// Bits needed for the largest key.
int key_bits(const std::vector<uint64_t>& keys);
/// Sorted keys with a repeated key mean a duplicate site: an error naming both rows.
void reject_duplicates(const std::vector<uint64_t>& sorted_keys, const Sites& in, const Shape3& shape,
                       const IndexSource& src);

}  // namespace pointrt::sparse
