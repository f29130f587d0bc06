#include "ops/sparse/sparse_common.h"
#include "ops/index_types.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pointrt::sparse {

namespace {
const char* column_name(int c) {
  static const char* names[4] = {"batch", "i0", "i1", "i2"};
  return names[c];
}

template <typename T>
void convert_and_check(const T* src, int64_t n, const Shape3& s, const IndexSource& src_info, int32_t* dst) {
  // Site keys b * S0*S1*S2 + ... must fit in 62 bits.
  const int64_t volume = s[0] * s[1] * s[2];
  const int64_t max_batch = std::min<int64_t>(std::numeric_limits<int32_t>::max() / 2, (int64_t(1) << 62) / volume - 1);
  // Fast parallel pass; the first offending row (lowest index) is reported for a stable message.
  int64_t bad_row = std::numeric_limits<int64_t>::max();
#pragma omp parallel for reduction(min : bad_row) if (n > (1 << 17))
  for (int64_t r = 0; r < n; ++r) {
    const T* p = src + 4 * r;
    bool ok = p[0] >= 0 && static_cast<int64_t>(p[0]) <= max_batch;
    for (int c = 0; c < 3; ++c) ok = ok && p[c + 1] >= 0 && static_cast<int64_t>(p[c + 1]) < s[c];
    if (ok) {
      for (int c = 0; c < 4; ++c) dst[4 * r + c] = static_cast<int32_t>(p[c]);
    } else if (r < bad_row) {
      bad_row = r;
    }
  }
  if (bad_row == std::numeric_limits<int64_t>::max()) return;
  const T* p = src + 4 * bad_row;
  int64_t b = static_cast<int64_t>(p[0]);
  if (b < 0)
    fail(src_info.where, ": ", src_info.input_text, " row ", bad_row, " column 0 (batch) = ", b,
         " is negative; batch indices must be in [0, ", max_batch + 1, ")");
  if (b > max_batch)
    fail(src_info.where, ": ", src_info.input_text, " row ", bad_row, " column 0 (batch) = ", b,
         " is too large (valid range [0, ", max_batch + 1, "))");
  // Error path only: column extremes for a hint about swapped axis order.
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int64_t r = 0; r < n; ++r)
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min<int64_t>(lo[c], static_cast<int64_t>(src[4 * r + c + 1]));
      hi[c] = std::max<int64_t>(hi[c], static_cast<int64_t>(src[4 * r + c + 1]));
    }
  std::string hint;
  if (lo[0] >= 0 && lo[1] >= 0 && lo[2] >= 0 && hi[2] < s[0] && hi[1] < s[1] && hi[0] < s[2])
    hint = str_cat(". Likely cause: the spatial columns are reversed (e.g. (batch, x, y, z) given to a model whose ",
                   src_info.shape_attr, " is (z, y, x)); every row fits ", shape3_text(s), " read in reverse order");
  for (int c = 0; c < 3; ++c) {
    int64_t v = static_cast<int64_t>(p[c + 1]);
    if (v < 0 || v >= s[c])
      fail(src_info.where, ": ", src_info.input_text, " row ", bad_row, " column ", c + 1, " (", column_name(c + 1),
           ") = ", v, " is outside the valid range [0, ", s[c], ") of ", src_info.shape_attr, " ", shape3_text(s),
           hint);
  }
}
}  // namespace

Sites read_sites(const Tensor& given, int64_t expected_rows, const Shape3& spatial, const IndexSource& src) {
  if (!is_index_dtype(given.dtype()))
    fail(src.where, ": ", src.input_text, " must be ", index_dtypes_text(), ", got ", dtype_name(given.dtype()));
  const Tensor indices = as_signed_indices(given);
  if (indices.rank() != 2 || indices.dim(1) != 4)
    fail(src.where, ": ", src.input_text, " must have shape [N, 4] (batch, i0, i1, i2), got ",
         shape_to_string(indices.shape()));
  if (expected_rows >= 0 && indices.dim(0) != expected_rows)
    fail(src.where, ": ", src.input_text, " has ", indices.dim(0), " rows but the features have ", expected_rows);
  if (indices.dim(0) > std::numeric_limits<int32_t>::max() / 2)
    fail(src.where, ": ", src.input_text, " has ", indices.dim(0), " rows, more than supported");
  Sites s;
  s.count = indices.dim(0);
  s.rows.resize(static_cast<size_t>(s.count) * 4);
  if (indices.dtype() == DType::kInt32)
    convert_and_check(indices.data_as<int32_t>(), s.count, spatial, src, s.rows.data());
  else
    convert_and_check(indices.data_as<int64_t>(), s.count, spatial, src, s.rows.data());
  return s;
}

void SiteMap::reserve(int64_t expected) {
  size_t cap = 16;
  while (cap < static_cast<size_t>(expected) * 2) cap <<= 1;
  slots_.assign(cap, Slot{kEmpty, -1});
  mask_ = cap - 1;
  shift_ = 64;
  for (size_t c = cap; c > 1; c >>= 1) --shift_;
}

int32_t SiteMap::insert(uint64_t key, int32_t row) {
  size_t i = slot_of(key);
  while (true) {
    Slot& s = slots_[i];
    if (s.key == key) return s.row;
    if (s.key == kEmpty) {
      s.key = key;
      s.row = row;
      return -1;
    }
    i = (i + 1) & mask_;
  }
}

int32_t SiteMap::insert_concurrent(uint64_t key, int32_t row) {
  size_t i = slot_of(key);
  while (true) {
    Slot& s = slots_[i];
    uint64_t expected = kEmpty;
    if (__atomic_compare_exchange_n(&s.key, &expected, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      __atomic_store_n(&s.row, row, __ATOMIC_RELEASE);
      return -1;
    }
    if (expected == key) return 0;  // duplicate (the other row may not be stored yet)
    i = (i + 1) & mask_;
  }
}

SiteMap build_site_map(const Sites& sites, const Shape3& spatial, const IndexSource& src) {
  SiteMap map(sites.count);
  bool duplicate = false;
  if (sites.count > 16384) {
#pragma omp parallel for schedule(static) reduction(|| : duplicate)
    for (int64_t r = 0; r < sites.count; ++r)
      if (map.insert_concurrent(site_key(sites.row(r), spatial), static_cast<int32_t>(r)) >= 0) duplicate = true;
    if (!duplicate) return map;
    map.reserve(sites.count);  // rebuild sequentially for a deterministic message
  }
  for (int64_t r = 0; r < sites.count; ++r) {
    int32_t prev = map.insert(site_key(sites.row(r), spatial), static_cast<int32_t>(r));
    if (prev >= 0) {
      const int32_t* p = sites.row(r);
      fail(src.where, ": ", src.input_text, " rows ", prev, " and ", r, " are the same site (", p[0], ", ", p[1], ", ",
           p[2], ", ", p[3], "); sites must be unique");
    }
  }
  return map;
}

Activation parse_activation(const std::string& name, const std::string& where) {
  if (name == "None" || name.empty()) return Activation::kNone;
  if (name == "ReLU") return Activation::kReLU;
  if (name == "LeakyReLU") return Activation::kLeakyReLU;
  if (name == "Sigmoid") return Activation::kSigmoid;
  fail(where, ": attribute 'activation' = '", name, "' is not one of \"None\", \"ReLU\", \"LeakyReLU\", \"Sigmoid\"");
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kNone: return "None";
    case Activation::kReLU: return "ReLU";
    case Activation::kLeakyReLU: return "LeakyReLU";
    case Activation::kSigmoid: return "Sigmoid";
  }
  return "?";
}

void apply_bias_activation(float* out, int64_t rows, int64_t channels, const float* bias, Activation act, float alpha) {
  if (!bias && act == Activation::kNone) return;
#pragma omp parallel for if (rows * channels > (1 << 19))
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * channels;
    if (bias)
      for (int64_t c = 0; c < channels; ++c) o[c] += bias[c];
    switch (act) {
      case Activation::kNone: break;
      case Activation::kReLU:
        for (int64_t c = 0; c < channels; ++c) o[c] = o[c] > 0.f ? o[c] : 0.f;
        break;
      case Activation::kLeakyReLU:
        for (int64_t c = 0; c < channels; ++c) o[c] = o[c] >= 0.f ? o[c] : o[c] * alpha;
        break;
      case Activation::kSigmoid:
        for (int64_t c = 0; c < channels; ++c) o[c] = 1.f / (1.f + std::exp(-o[c]));
        break;
    }
  }
}

Shape3 get_ints3(const Attributes& a, const std::string& name, const Shape3* dflt, const std::string& where) {
  if (!a.has(name)) {
    if (!dflt) fail(where, ": required attribute '", name, "' (ints[3]) is missing");
    return *dflt;
  }
  auto v = a.get_ints(name);
  if (v.size() != 3) fail(where, ": attribute '", name, "' must have 3 values, got ", v.size());
  return {v[0], v[1], v[2]};
}

std::string input_text(const KernelInit& init, size_t i) {
  if (!init.has_input(i)) return str_cat("input ", i);
  return str_cat("input ", i, " '", init.graph.values[init.node.inputs[i]].name, "'");
}

}  // namespace pointrt::sparse
