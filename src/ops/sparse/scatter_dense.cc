// Optimised ScatterDense: parallel range check (min/max per column), duplicate check with a byte
// map, parallel write. All diagnostics are built on the error path only.
#include "ops/sparse/scatter_dense.h"
#include "ops/index_types.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace pointrt::sparse {

ScatterDenseAttrs parse_scatter_dense_attrs(const Attributes& attrs, const std::string& where) {
  ScatterDenseAttrs a;
  a.spatial = get_ints3(attrs, "spatial_shape", nullptr, where);
  a.batch_size = attrs.get_int("batch_size", 1);
  for (int d = 0; d < 3; ++d)
    if (a.spatial[d] < 1) fail(where, ": spatial_shape ", shape3_text(a.spatial), " must be >= 1 on every axis");
  if (a.batch_size < 1) fail(where, ": batch_size = ", a.batch_size, " must be >= 1");
  if (a.spatial[0] > (1 << 24) || a.spatial[1] > (1 << 24) || a.spatial[2] > (1 << 24) ||
      a.batch_size * a.spatial[0] * a.spatial[1] * a.spatial[2] > (int64_t(1) << 36))
    fail(where, ": batch_size ", a.batch_size, " x spatial_shape ", shape3_text(a.spatial),
         " is larger than supported (2^36 cells)");
  return a;
}

namespace {

template <typename T>
int64_t value_at(const Tensor& t, int64_t r, int c) {
  return static_cast<int64_t>(t.data_as<T>()[4 * r + c]);
}

struct ColumnStats {
  int64_t min = std::numeric_limits<int64_t>::max(), max = std::numeric_limits<int64_t>::min();
  int64_t bad = 0, first_bad_row = -1, first_bad_value = 0;
};

const char* kColumn[4] = {"batch", "i0", "i1", "i2"};

// Per-column statistics of an index tensor against the dense output's limits.
struct IndexStats {
  int64_t n = 0, limit[4] = {0, 0, 0, 0};
  ColumnStats col[4];
  int64_t all_minus_one_rows = 0;
};

IndexStats index_stats(const Tensor& idx, const ScatterDenseAttrs& a) {
  IndexStats st;
  st.n = idx.dim(0);
  const int64_t limit[4] = {a.batch_size, a.spatial[0], a.spatial[1], a.spatial[2]};
  std::copy(limit, limit + 4, st.limit);
  for (int64_t r = 0; r < st.n; ++r) {
    bool minus_one = true;
    for (int c = 0; c < 4; ++c) {
      int64_t v = idx.dtype() == DType::kInt32 ? value_at<int32_t>(idx, r, c) : value_at<int64_t>(idx, r, c);
      minus_one = minus_one && v == -1;
      st.col[c].min = std::min(st.col[c].min, v);
      st.col[c].max = std::max(st.col[c].max, v);
      if (v < 0 || v >= limit[c]) {
        if (st.col[c].bad++ == 0) {
          st.col[c].first_bad_row = r;
          st.col[c].first_bad_value = v;
        }
      }
    }
    st.all_minus_one_rows += minus_one;
  }
  return st;
}

// What is out of range, column by column.
std::string range_report(const IndexStats& st, const ScatterDenseAttrs& a, const std::string& where,
                         const std::string& input) {
  std::string msg = str_cat(where, ": ", input, " has rows outside the dense output [batch_size ", a.batch_size,
                            ", C, ", a.spatial[0], ", ", a.spatial[1], ", ", a.spatial[2],
                            "]; they would be left out and the output would be (nearly) all zeros:");
  for (int c = 0; c < 4; ++c) {
    const ColumnStats& s = st.col[c];
    const int64_t limit = st.limit[c];
    if (!s.bad) continue;
    std::string range = c == 0 ? str_cat("batch_size ", a.batch_size) : str_cat("spatial_shape[", c - 1, "] = ", limit);
    msg += str_cat(" column ", c, " (", kColumn[c], ") = ", s.first_bad_value, " at row ", s.first_bad_row,
                   " is outside [0, ", limit, ") of ", range, " (");
    if (s.max >= limit)
      msg += str_cat("max ", s.max, " exceeds the last valid index ", limit - 1, " by ", s.max - limit + 1);
    if (s.max >= limit && s.min < 0) msg += ", ";
    if (s.min < 0) msg += str_cat("min ", s.min, " is below 0 by ", -s.min);
    msg += str_cat("; ", s.bad, " of ", st.n, " rows);");
  }
  msg.pop_back();
  msg += ".";
  return msg;
}

// A reordering of the columns under which every row fits, the (batch, x, y, z) <-> (batch, z, y, x)
// swap tried first; `reversed` says it was that one.
std::optional<std::array<int, 4>> fitting_permutation(const IndexStats& st, bool* reversed) {
  const bool all_nonneg = st.col[0].min >= 0 && st.col[1].min >= 0 && st.col[2].min >= 0 && st.col[3].min >= 0;
  if (!all_nonneg) return std::nullopt;
  std::vector<std::array<int, 4>> candidates = {{0, 3, 2, 1}};
  std::array<int, 4> perm{0, 1, 2, 3};
  while (std::next_permutation(perm.begin(), perm.end()))
    if (perm != candidates[0]) candidates.push_back(perm);
  for (size_t i = 0; i < candidates.size(); ++i) {
    bool fits = true;
    for (int d = 0; d < 4; ++d) fits = fits && st.col[candidates[i][d]].max < st.limit[d];
    if (fits) {
      *reversed = i == 0;
      return candidates[i];
    }
  }
  return std::nullopt;
}

// Non-negative spatial indices beyond spatial_shape: a grid one short, or the wrong grid.
std::string grid_hint(const IndexStats& st, const ScatterDenseAttrs& a) {
  Shape3 need{st.col[1].max + 1, st.col[2].max + 1, st.col[3].max + 1};
  std::string ratio;
  for (int d = 0; d < 3; ++d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", need[d] > a.spatial[d] ? double(need[d]) / double(a.spatial[d]) : 1.0);
    ratio += str_cat(d ? ", " : "", buf);
  }
  bool off_by_one = true;
  for (int d = 0; d < 3; ++d) off_by_one = off_by_one && need[d] <= a.spatial[d] + 1;
  std::string short_axes;
  for (int d = 0; d < 3; ++d)
    if (need[d] > a.spatial[d])
      short_axes += str_cat(short_axes.empty() ? "" : ", ", "axis ", d, " (indices reach ", need[d] - 1, ")");
  if (off_by_one)
    return str_cat("spatial_shape ", shape3_text(a.spatial), " is one short on ", short_axes,
                   ": a grid computed with floor instead of round, or the extra z layer of "
                   "mmdet3d/SECOND-style models (sparse_shape = grid_size[::-1] + [1, 0, 0])");
  return str_cat("the indices need a grid of at least ", shape3_text(need), " but spatial_shape is ",
                 shape3_text(a.spatial), " (x", ratio,
                 " per axis): either they come from a finer grid (e.g. "
                 "the voxelizer's coords fed to a ScatterDense that follows stride-2 convolutions; use "
                 "the out_indices of the last SparseConv) or spatial_shape does not match the voxelizer's "
                 "grid round((max - min) / voxel_size) per axis, in the order of the indices");
}

std::vector<std::string> likely_causes(const IndexStats& st, const ScatterDenseAttrs& a) {
  std::vector<std::string> hints;
  const ColumnStats* c = st.col;
  bool spatial_bad = c[1].bad || c[2].bad || c[3].bad;
  bool spatial_nonneg = c[1].min >= 0 && c[2].min >= 0 && c[3].min >= 0;
  if (st.all_minus_one_rows > 0)
    hints.push_back(str_cat(st.all_minus_one_rows,
                            " rows are all -1: they look like the unused tail of a fixed-size voxel "
                            "buffer; pass only the first num_voxels rows (the count the voxelizer reports)"));
  else if (spatial_bad && !spatial_nonneg)
    hints.push_back(
        "negative spatial indices: the coordinates were computed from points outside point_cloud_range or "
        "with a different range origin than the voxelizer's");
  bool reversed = false;
  const std::optional<std::array<int, 4>> fitting = fitting_permutation(st, &reversed);
  if (fitting && reversed) {
    hints.push_back(str_cat("the spatial columns look reversed: the values fit [", a.spatial[2], ", ", a.spatial[1],
                            ", ", a.spatial[0], "], i.e. the indices are (batch, x, y, z) but spatial_shape ",
                            shape3_text(a.spatial),
                            " is in (z, y, x) order (or the other way round); reorder the "
                            "columns to the order of spatial_shape (CenterPoint-style models use (batch, z, y, x); "
                            "NVIDIA's scn.onnx 'format' attribute names the order)"));
  } else if (fitting) {
    const auto& f = *fitting;
    hints.push_back(str_cat(
        "the columns look permuted: every row fits when read as (column ", f[0], ", column ", f[1], ", column ", f[2],
        ", column ", f[3], ")",
        f[0] != 0 ? str_cat("; the batch index seems to be in column ", f[0], " but rows must be (batch, i0, i1, i2)")
                  : std::string()));
  } else {
    if (spatial_bad && spatial_nonneg) hints.push_back(grid_hint(st, a));
    if (c[0].bad && c[0].min >= 0)
      hints.push_back(str_cat("batch indices go up to ", c[0].max, " but batch_size is ", a.batch_size,
                              ": set batch_size to ", c[0].max + 1, " (rows of later batches are otherwise lost)"));
  }
  return hints;
}

[[noreturn]] void diagnose(const Tensor& idx, const ScatterDenseAttrs& a, const std::string& where,
                           const std::string& input) {
  const IndexStats st = index_stats(idx, a);
  std::string msg = range_report(st, a, where, input);
  const std::vector<std::string> hints = likely_causes(st, a);
  if (!hints.empty()) {
    msg += " Likely cause: ";
    for (size_t i = 0; i < hints.size(); ++i) msg += (i ? "; also " : "") + hints[i];
    msg += ".";
  }
  throw Error(msg);
}

template <typename T>
bool all_in_range(const T* d, int64_t n, const int64_t limit[4]) {
  int64_t lo[4] = {0, 0, 0, 0};
  int64_t hi[4] = {-1, -1, -1, -1};
  if (n == 0) return true;
  for (int c = 0; c < 4; ++c) lo[c] = hi[c] = static_cast<int64_t>(d[c]);
#pragma omp parallel for reduction(min : lo[:4]) reduction(max : hi[:4]) if (n > (1 << 17))
  for (int64_t r = 0; r < n; ++r)
    for (int c = 0; c < 4; ++c) {
      int64_t v = static_cast<int64_t>(d[4 * r + c]);
      lo[c] = std::min(lo[c], v);
      hi[c] = std::max(hi[c], v);
    }
  for (int c = 0; c < 4; ++c)
    if (lo[c] < 0 || hi[c] >= limit[c]) return false;
  return true;
}

template <typename T>
void scatter(const Tensor& features, const T* idx, int64_t n, int64_t channels, const ScatterDenseAttrs& a, float* out,
             const std::string& where, const std::string& input) {
  const int64_t s0 = a.spatial[0], s1 = a.spatial[1], s2 = a.spatial[2], vol = s0 * s1 * s2;
  // Duplicate sites: one byte per output site.
  std::vector<uint8_t> seen(static_cast<size_t>(a.batch_size * vol), 0);
  for (int64_t r = 0; r < n; ++r) {
    const T* p = idx + 4 * r;
    int64_t site = static_cast<int64_t>(p[0]) * vol + (static_cast<int64_t>(p[1]) * s1 + p[2]) * s2 + p[3];
    if (seen[site]) {
      int64_t first = 0;
      for (; first < r; ++first)
        if (std::equal(idx + 4 * first, idx + 4 * first + 4, p)) break;
      fail(where, ": ", input, " rows ", first, " and ", r, " are the same site (", static_cast<int64_t>(p[0]), ", ",
           static_cast<int64_t>(p[1]), ", ", static_cast<int64_t>(p[2]), ", ", static_cast<int64_t>(p[3]),
           "); sites must be unique (the second row would overwrite the first)");
    }
    seen[site] = 1;
  }
  const float* f = features.data_as<float>();
#pragma omp parallel for schedule(static) if (n * channels > 32768)
  for (int64_t r = 0; r < n; ++r) {
    const T* p = idx + 4 * r;
    const int64_t b = p[0], at = (static_cast<int64_t>(p[1]) * s1 + p[2]) * s2 + p[3];
    float* base = out + b * channels * vol + at;
    const float* fr = f + r * channels;
    for (int64_t c = 0; c < channels; ++c) base[c * vol] = fr[c];
  }
}

class ScatterDenseKernel : public OpKernel {
 public:
  explicit ScatterDenseKernel(const KernelInit& init)
      : a_(parse_scatter_dense_attrs(init.attrs(), init.where())),
        where_(init.where()),
        features_text_(input_text(init, 0)),
        indices_text_(input_text(init, 1)) {}

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor idx = as_signed_indices(ctx.input(1));
    if (x.dtype() != DType::kFloat32 || x.rank() != 2)
      fail(where_, ": ", features_text_, " must be float32 [N, C], got ", dtype_name(x.dtype()), " ",
           shape_to_string(x.shape()));
    if ((idx.dtype() != DType::kInt32 && idx.dtype() != DType::kInt64) || idx.rank() != 2 || idx.dim(1) != 4)
      fail(where_, ": ", indices_text_, " must be int32, int64 or uint32 [N, 4] (batch, i0, i1, i2), got ",
           dtype_name(idx.dtype()), " ", shape_to_string(idx.shape()));
    if (idx.dim(0) != x.dim(0))
      fail(where_, ": ", indices_text_, " has ", idx.dim(0), " rows but ", features_text_, " has ", x.dim(0));
    const int64_t n = x.dim(0), c = x.dim(1);
    check_scatter_indices(idx, a_, where_, indices_text_);
    Tensor& y = ctx.output(0, DType::kFloat32, {a_.batch_size, c, a_.spatial[0], a_.spatial[1], a_.spatial[2]});
    float* out = y.data_as<float>();
    const int64_t total = y.numel();
#pragma omp parallel for schedule(static) if (total > (1 << 18))
    for (int64_t i = 0; i < total; i += 4096)
      std::memset(out + i, 0, sizeof(float) * std::min<int64_t>(4096, total - i));
    if (idx.dtype() == DType::kInt32)
      scatter(x, idx.data_as<int32_t>(), n, c, a_, out, where_, indices_text_);
    else
      scatter(x, idx.data_as<int64_t>(), n, c, a_, out, where_, indices_text_);
  }

 private:
  ScatterDenseAttrs a_;
  std::string where_, features_text_, indices_text_;
};

}  // namespace

void check_scatter_indices(const Tensor& idx, const ScatterDenseAttrs& a, const std::string& where,
                           const std::string& input) {
  const int64_t limit[4] = {a.batch_size, a.spatial[0], a.spatial[1], a.spatial[2]};
  bool ok = idx.dtype() == DType::kInt32 ? all_in_range(idx.data_as<int32_t>(), idx.dim(0), limit)
                                         : all_in_range(idx.data_as<int64_t>(), idx.dim(0), limit);
  if (!ok) diagnose(idx, a, where, input);
}

std::unique_ptr<OpKernel> make_scatter_dense_kernel(const KernelInit& init) {
  return std::make_unique<ScatterDenseKernel>(init);
}

}  // namespace pointrt::sparse
