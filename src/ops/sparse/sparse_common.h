// Helpers shared by the pointrt sparse-convolution family (OPS.md "Sparse-convolution family"):
// reading and validating site indices, a site -> row hash map, activations.
//
// A sparse tensor is `features` [N, C] float32 plus `indices` [N, 4] int32/int64, each row
// (batch, i0, i1, i2) with the spatial axes in the order of the model's spatial shape.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common.h"
#include "ops/kernel.h"

namespace pointrt::sparse {

using Shape3 = std::array<int64_t, 3>;

inline std::string shape3_text(const Shape3& s) { return str_cat("[", s[0], ", ", s[1], ", ", s[2], "]"); }

/// Sites as int32 rows (b, i0, i1, i2), validated against a spatial shape.
struct Sites {
  int64_t count = 0;
  std::vector<int32_t> rows;  // count * 4
  const int32_t* row(int64_t r) const { return rows.data() + 4 * r; }
};

/// Describes where an index tensor comes from, for messages.
struct IndexSource {
  std::string where;       // "node 'x' (pointrt::SparseConv)"
  std::string input_text;  // "input 1 'voxel_coords'"
  std::string shape_attr;  // "input_spatial_shape"
};

/// Convert and validate `indices` [N, 4] (int32 or int64): every spatial column in [0, S),
/// batch >= 0 (and, when batch_limit > 0, < batch_limit). Errors name the row, the column and
/// the value and the valid range. Duplicates are not checked here (see SiteMap).
Sites read_sites(const Tensor& indices, int64_t expected_rows, const Shape3& spatial, const IndexSource& src);

/// Linear key of a site; requires validated coordinates. Orders sites by (b, i0, i1, i2).
inline uint64_t site_key(int64_t b, int64_t i0, int64_t i1, int64_t i2, const Shape3& s) {
  return static_cast<uint64_t>(((b * s[0] + i0) * s[1] + i1) * s[2] + i2);
}
inline uint64_t site_key(const int32_t* r, const Shape3& s) { return site_key(r[0], r[1], r[2], r[3], s); }
inline void key_to_site(uint64_t key, const Shape3& s, int32_t* out) {
  int64_t k = static_cast<int64_t>(key);
  out[3] = static_cast<int32_t>(k % s[2]);
  k /= s[2];
  out[2] = static_cast<int32_t>(k % s[1]);
  k /= s[1];
  out[1] = static_cast<int32_t>(k % s[0]);
  k /= s[0];
  out[0] = static_cast<int32_t>(k);
}

/// Open-addressing hash map from site key -> row (linear probing, key and row side by side so a
/// lookup touches one cache line). Built once, then read concurrently without locks.
class SiteMap {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  explicit SiteMap(int64_t expected = 0) { reserve(expected); }
  void reserve(int64_t expected);
  /// Insert; returns the row already stored for this key, or -1 when it was new.
  int32_t insert(uint64_t key, int32_t row);
  /// Thread-safe insert (compare-and-swap on the key); same result convention. Concurrent
  /// inserts of the same key: exactly one sees -1.
  int32_t insert_concurrent(uint64_t key, int32_t row);
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[slot_of(key)]); }
  int32_t find(uint64_t key) const {
    size_t i = slot_of(key);
    while (true) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.row;
      if (s.key == kEmpty) return -1;
      i = (i + 1) & mask_;
    }
  }

 private:
  struct Slot {
    uint64_t key;
    int32_t row;
  };
  size_t slot_of(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
};

/// Build the site map of validated sites; a duplicate site is an error naming both rows.
SiteMap build_site_map(const Sites& sites, const Shape3& spatial, const IndexSource& src);

enum class Activation { kNone, kReLU, kLeakyReLU, kSigmoid };
Activation parse_activation(const std::string& name, const std::string& where);
const char* activation_name(Activation a);

/// bias (may be null) + activation, applied in place to rows [M, C].
void apply_bias_activation(float* out, int64_t rows, int64_t channels, const float* bias, Activation act, float alpha);

/// Read an ints[3] attribute (error naming the node when it is not 3 long).
Shape3 get_ints3(const Attributes& a, const std::string& name, const Shape3* dflt, const std::string& where);

/// Name of graph value `i` of the node, for messages: "input 1 'coords'".
std::string input_text(const KernelInit& init, size_t i);

}  // namespace pointrt::sparse
