// TopK: each line (outer, inner) becomes an array of order-preserving unsigned keys (floats by
// their bits with the sign folded, NaN above +inf, -0 == +0; `largest` flips every key, so the
// wanted order is always ascending key, ties by the lower index), then one of:
//  - integers spanning a small range (e.g. yanx27's sort of ball-query indices, all in [0, N]):
//    a counting sort, O(R + range);
//  - k <= 32: one pass keeping the k best in a sorted array (a vector compare per block of 16
//    keys picks the few below the current k-th; most blocks have none);
//  - a large share of the line: an LSD radix sort by key (stable, so ties stay in index order),
//    8-bit digits, passes whose digit is the same for every key skipped;
//  - otherwise: candidates below the running k-th best, pruned by nth_element when 4k gather.
// Values are read back from the input by index (NaN payloads and -0 kept). Lines run in parallel;
// one long line is split over the threads (select_split_line).
#include "ops/onnx/reduce/topk.h"

#include <omp.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/avx512_gcc12.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

// The unsigned key type of T: 32 bits for types up to 4 bytes, else 64.
template <typename T>
using KeyOf = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

// A key whose unsigned order is T's order with NaN above every number and -0 equal to +0.
template <typename T>
inline KeyOf<T> order_key(T v) {
  using K = KeyOf<T>;
  constexpr K kSign = K(1) << (8 * sizeof(K) - 1);
  if constexpr (std::is_floating_point_v<T>) {
    // Branch-free so that the key loop vectorises: negative values invert, positive ones get the
    // sign bit; -0 is mapped as +0, NaN (either sign) above +inf.
    K u;
    std::memcpy(&u, &v, sizeof(T));
    const K magnitude = u & ~kSign;
    const K key = (u & kSign) ? ~u : (u | kSign);
    const K nan_or_key = magnitude > (kSign - (K(1) << (std::numeric_limits<T>::digits - 1))) ? ~K(0) : key;
    return magnitude == 0 ? kSign : nan_or_key;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<K>(static_cast<std::make_unsigned_t<T>>(v)) ^ (K(1) << (8 * sizeof(T) - 1));
  } else {
    return static_cast<K>(v);
  }
}

// (key, index) as one comparable value: key << 32 | index for 32-bit keys, a pair otherwise.
template <typename K>
struct Entry {
  using type = std::conditional_t<sizeof(K) == 4, uint64_t, std::pair<K, uint32_t>>;
  static type make(K key, uint32_t r) {
    if constexpr (sizeof(K) == 4)
      return (uint64_t(key) << 32) | r;
    else
      return {key, r};
  }
  static K key(const type& e) {
    if constexpr (sizeof(K) == 4)
      return static_cast<K>(e >> 32);
    else
      return e.first;
  }
  static uint32_t index(const type& e) {
    if constexpr (sizeof(K) == 4)
      return static_cast<uint32_t>(e);
    else
      return e.second;
  }
};

// Per-thread scratch for one line.
template <typename K>
struct LineScratch {
  std::vector<K> keys, keys2;
  std::vector<uint32_t> idx, idx2, counts;
  std::vector<typename Entry<K>::type> entries;
};

// Counting sort of keys in [lo, lo + range): writes the first k indices (ascending key, then index).
template <typename K>
void counting_select(const K* keys, int64_t R, K lo, uint64_t range, int64_t k, LineScratch<K>& s, uint32_t* out) {
  s.counts.assign(static_cast<size_t>(range) + 1, 0);
  for (int64_t r = 0; r < R; ++r) ++s.counts[static_cast<size_t>(keys[r] - lo) + 1];
  for (size_t b = 1; b <= range; ++b) s.counts[b] += s.counts[b - 1];  // start of each bucket
  s.idx.resize(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) s.idx[s.counts[static_cast<size_t>(keys[r] - lo)]++] = static_cast<uint32_t>(r);
  std::copy(s.idx.begin(), s.idx.begin() + k, out);
}

constexpr int kScanBlock = 16;

// Bit j set when block[j] < bound, for the kScanBlock keys of a block (one AVX-512 compare for
// 32-bit keys, two for 64-bit ones).
template <typename K>
inline uint32_t below_mask(const K* block, K bound) {
#if defined(__AVX512F__)
  if constexpr (sizeof(K) == 4) {
    return _mm512_cmplt_epu32_mask(_mm512_loadu_si512(block), _mm512_set1_epi32(static_cast<int>(bound)));
  } else {
    const __m512i b = _mm512_set1_epi64(static_cast<long long>(bound));
    return uint32_t(_mm512_cmplt_epu64_mask(_mm512_loadu_si512(block), b)) |
           uint32_t(_mm512_cmplt_epu64_mask(_mm512_loadu_si512(block + 8), b)) << 8;
  }
#else
  uint32_t m = 0;
  for (int j = 0; j < kScanBlock; ++j) m |= uint32_t(block[j] < bound) << j;
  return m;
#endif
}

#if defined(__AVX512F__)
// order_key of 16 contiguous floats, xor `flip`: the same bits as the scalar form, in one vector
// (keys made one element at a time and then compared as a vector stall on store forwarding).
inline __m512i float_keys16(const float* p, uint32_t flip) {
  const __m512i u = _mm512_loadu_si512(p);
  const __m512i sign = _mm512_set1_epi32(INT32_MIN);
  const __m512i magnitude = _mm512_andnot_si512(sign, u);
  // negative: ~u; otherwise u | sign. Both are u ^ ((u >> 31, arithmetic) | sign).
  __m512i key = _mm512_xor_si512(u, _mm512_or_si512(_mm512_srai_epi32(u, 31), sign));
  key = _mm512_mask_mov_epi32(key, _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000)),
                              _mm512_set1_epi32(-1));  // NaN above everything
  key = _mm512_mask_mov_epi32(key, _mm512_cmpeq_epi32_mask(magnitude, _mm512_setzero_si512()), sign);  // -0 == +0
  return _mm512_xor_si512(key, _mm512_set1_epi32(static_cast<int>(flip)));
}
#endif

// The keys of one line: R elements `inner` apart, each order_key ^ flip (flip turns "largest"
// into ascending order).
template <typename T>
struct LineKeys {
  using K = KeyOf<T>;
  const T* in;
  int64_t inner;
  K flip;
  K at(int64_t r) const { return order_key(in[r * inner]) ^ flip; }
  // The kScanBlock keys from r0 (a whole block inside the line) into `out` (64-byte aligned).
  void block(int64_t r0, K* out) const {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>)
      if (inner == 1) return _mm512_store_si512(out, float_keys16(in + r0, flip));
#endif
    for (int j = 0; j < kScanBlock; ++j) out[j] = at(r0 + j);
  }
};

// Calls visit(key, r) for the elements whose key is below `bound` (all of them while `bounded` is
// false), in index order; visit may tighten the bound. Keys are made kScanBlock at a time (a short
// block is padded with the largest key, never below a bound); once bounded, one vector compare
// per block gives its candidates, so the many blocks without any cost no branch per element.
template <typename T, typename Visit>
void scan_below(const LineKeys<T>& keys, int64_t R, const bool& bounded, const KeyOf<T>& bound, Visit visit) {
  using K = KeyOf<T>;
  alignas(64) K block[kScanBlock];
  for (int64_t r0 = 0; r0 < R; r0 += kScanBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kScanBlock, R - r0));
    if (n == kScanBlock) {
      keys.block(r0, block);
    } else {
      for (int j = 0; j < n; ++j) block[j] = keys.at(r0 + j);
      for (int j = n; j < kScanBlock; ++j) block[j] = ~K(0);
    }
    int j0 = 0;
    for (; j0 < n && !bounded; ++j0) visit(block[j0], r0 + j0);
    if (j0 == n) continue;
    for (uint32_t m = below_mask(block, bound) & (~uint32_t(0) << j0); m; m &= m - 1) {
      const int j = __builtin_ctz(m);
      if (block[j] < bound) visit(block[j], r0 + j);  // the bound may have tightened since the mask
    }
  }
}

// The k smallest (key, index) kept in a sorted window (k small). A later element with a key
// equal to the window's worst is rejected: its index is higher.
template <typename T>
void small_k_select(const LineKeys<T>& keys, int64_t R, int64_t k, uint32_t* out) {
  using K = KeyOf<T>;
  K best_key[64];
  uint32_t best_idx[64];
  int64_t filled = 0;
  bool full = false;
  K worst = 0;
  scan_below(keys, R, full, worst, [&](K key, int64_t r) {
    int64_t pos = filled < k ? filled++ : k - 1;
    while (pos > 0 && key < best_key[pos - 1]) {
      best_key[pos] = best_key[pos - 1];
      best_idx[pos] = best_idx[pos - 1];
      --pos;
    }
    best_key[pos] = key;
    best_idx[pos] = static_cast<uint32_t>(r);
    full = filled == k;
    worst = best_key[k - 1];
  });
  std::copy(best_idx, best_idx + k, out);
}

// Stable LSD radix sort of (key, index) by key; the sorted indices end up in s.idx.
template <typename K>
void radix_sort(int64_t R, LineScratch<K>& s) {
  constexpr int kDigits = sizeof(K);
  uint32_t hist[kDigits][256] = {};
  for (int64_t r = 0; r < R; ++r)
    for (int d = 0; d < kDigits; ++d) ++hist[d][(s.keys[r] >> (8 * d)) & 0xFF];
  s.keys2.resize(static_cast<size_t>(R));
  s.idx2.resize(static_cast<size_t>(R));
  for (int d = 0; d < kDigits; ++d) {
    uint32_t* h = hist[d];
    if (h[(s.keys[0] >> (8 * d)) & 0xFF] == static_cast<uint32_t>(R)) continue;  // one digit value: no-op pass
    uint32_t start = 0;
    for (int b = 0; b < 256; ++b) {
      uint32_t c = h[b];
      h[b] = start;
      start += c;
    }
    for (int64_t r = 0; r < R; ++r) {
      const K key = s.keys[r];
      const uint32_t at = h[(key >> (8 * d)) & 0xFF]++;
      s.keys2[at] = key;
      s.idx2[at] = s.idx[r];
    }
    s.keys.swap(s.keys2);
    s.idx.swap(s.idx2);
  }
}

// Moderate k: candidates below the current k-th best are collected into a buffer of 4k; when
// it fills, nth_element keeps the best k and tightens the threshold. Most elements cost one
// compare against the threshold, so this is O(R) with a small constant.
template <typename T>
void threshold_select(const LineKeys<T>& keys, int64_t R, int64_t k, std::vector<typename Entry<KeyOf<T>>::type>& buf,
                      uint32_t* out) {
  using K = KeyOf<T>;
  using E = Entry<K>;
  const size_t cap = static_cast<size_t>(4 * k);
  buf.clear();
  buf.reserve(cap);
  bool have_threshold = false;
  K threshold = 0;  // the k-th best key so far; later elements need a smaller key (higher index)
  scan_below(keys, R, have_threshold, threshold, [&](K key, int64_t r) {
    buf.push_back(E::make(key, static_cast<uint32_t>(r)));
    if (buf.size() == cap) {
      std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end());
      buf.resize(static_cast<size_t>(k));
      threshold = E::key(buf[k - 1]);
      have_threshold = true;
    }
  });
  if (static_cast<int64_t>(buf.size()) > k) std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end());
  std::sort(buf.begin(), buf.begin() + k);
  for (int64_t j = 0; j < k; ++j) out[j] = E::index(buf[j]);
}

// The k best indices of one line (R elements `inner` apart). Keys are computed on the fly where
// a strategy reads each once (small k, threshold), so a huge line allocates nothing of size R.
template <typename T>
void select_line(const T* in, int64_t inner, int64_t R, int64_t k, bool largest, LineScratch<KeyOf<T>>& s,
                 uint32_t* out) {
  using K = KeyOf<T>;
  const LineKeys<T> keys{in, inner, largest ? ~K(0) : K(0)};
  auto fill_keys = [&] {
    s.keys.resize(static_cast<size_t>(R));
    for (int64_t r = 0; r < R; ++r) s.keys[r] = keys.at(r);
  };
  if constexpr (std::is_integral_v<T>) {
    K lo = ~K(0), hi = 0;
    for (int64_t r = 0; r < R; ++r) {
      const K key = keys.at(r);
      lo = std::min(lo, key);
      hi = std::max(hi, key);
    }
    const uint64_t range = uint64_t(hi - lo) + 1;
    if (range <= uint64_t(2 * R) + 256) {
      fill_keys();
      return counting_select(s.keys.data(), R, lo, range, k, s, out);
    }
  }
  if (k <= 32) return small_k_select<T>(keys, R, k, out);
  if (R >= 256 && k * 4 >= R) {
    fill_keys();
    s.idx.resize(static_cast<size_t>(R));
    for (int64_t r = 0; r < R; ++r) s.idx[r] = static_cast<uint32_t>(r);
    radix_sort(R, s);
    std::copy(s.idx.begin(), s.idx.begin() + k, out);
    return;
  }
  threshold_select<T>(keys, R, k, s.entries, out);
}

// One long contiguous line on several threads (TopK over a whole heatmap): each thread selects the k best
// of its part of the line, then the parts' candidates are merged by (key, index), so the result
// is the same as one pass over the line (the k best overall are among each part's k best).
template <typename T>
void select_split_line(const T* in, int64_t R, int64_t k, bool largest, int threads, uint32_t* out) {
  using K = KeyOf<T>;
  using E = Entry<K>;
  const int64_t part = (R + threads - 1) / threads;
  std::vector<typename E::type> candidates(static_cast<size_t>(threads * k));
  std::vector<int64_t> found(static_cast<size_t>(threads), 0);
  const K flip = largest ? ~K(0) : K(0);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int64_t r0 = std::min(R, t * part), n = std::min(R, r0 + part) - r0, kt = std::min(k, n);
    LineScratch<K> scratch;
    std::vector<uint32_t> chosen(static_cast<size_t>(kt));
    if (kt > 0) select_line<T>(in + r0, 1, n, kt, largest, scratch, chosen.data());
    for (int64_t j = 0; j < kt; ++j) {
      const int64_t r = r0 + chosen[j];
      candidates[t * k + j] = E::make(order_key(in[r]) ^ flip, static_cast<uint32_t>(r));
    }
    found[t] = kt;
  }
  std::vector<typename E::type> all;
  for (int t = 0; t < threads; ++t)
    all.insert(all.end(), candidates.begin() + t * k, candidates.begin() + t * k + found[t]);
  std::nth_element(all.begin(), all.begin() + (k - 1), all.end());
  std::sort(all.begin(), all.begin() + k);
  for (int64_t j = 0; j < k; ++j) out[j] = E::index(all[j]);
}

template <typename T>
void topk_typed(const T* x, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, int64_t k,
                bool largest) {
  using K = KeyOf<T>;
  const int64_t lines = outer * inner;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (lines == 1 && threads > 1 && k > 0 && R >= (int64_t(1) << 16) && k * threads * 4 <= R) {  // inner == 1
    std::vector<uint32_t> chosen(static_cast<size_t>(k));
    select_split_line<T>(x, R, k, largest, threads, chosen.data());
    for (int64_t j = 0; j < k; ++j) {
      values[j] = x[chosen[j]];
      indices[j] = chosen[j];
    }
    return;
  }
#pragma omp parallel if (lines > 1 && lines * R > (1 << 14))
  {
    LineScratch<K> scratch;
    std::vector<uint32_t> chosen(static_cast<size_t>(k));
#pragma omp for schedule(dynamic, 4)
    for (int64_t line = 0; line < lines; ++line) {
      const int64_t o = line / inner, i = line % inner;
      const T* in = x + o * R * inner + i;
      select_line<T>(in, inner, R, k, largest, scratch, chosen.data());
      T* v = values + o * k * inner + i;
      int64_t* ix = indices + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        v[j * inner] = in[int64_t(chosen[j]) * inner];
        ix[j * inner] = chosen[j];
      }
    }
  }
}

class TopKKernel : public OpKernel {
 public:
  TopKKernel(const KernelInit& init, bool k_from_input, bool has_largest) : k_from_input_(k_from_input) {
    axis_ = init.attrs().get_int("axis", -1);
    if (!k_from_input) k_attr_ = init.attrs().get_int("k");
    if (has_largest) largest_ = init.attrs().get_int("largest", 1) != 0;
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(x.rank()), ctx.where());
    int64_t k = k_attr_;
    if (k_from_input_) {
      const Tensor& kt = ctx.input(1);
      if (kt.numel() != 1)
        fail(ctx.where(), ": input 'K' must hold exactly one value, got shape ", shape_to_string(kt.shape()));
      k = read_int_list(kt, ctx.where(), "K")[0];
    }
    if (k < 0 || k > x.dim(axis))
      fail(ctx.where(), ": K = ", k, " is out of range for axis ", axis_, " of size ", x.dim(axis), " (input shape ",
           shape_to_string(x.shape()), ")");
    Shape out = x.shape();
    out[axis] = k;
    Tensor& values = ctx.output(0, x.dtype(), out);
    Tensor& indices = ctx.output(1, DType::kInt64, out);
    topk_optimized(x, axis, k, largest_, values, indices);
  }

 private:
  bool k_from_input_;
  int64_t axis_ = -1, k_attr_ = 0;
  bool largest_ = true;
};

}  // namespace

void topk_optimized(const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& values, Tensor& indices) {
  if (values.numel() == 0) return;
  AxisSplit s = split_at_axis(x.shape(), axis);
  if (s.axis_dim > int64_t(UINT32_MAX))
    fail("TopK: an axis of ", s.axis_dim, " elements (2^32 or more) is not supported");
  dispatch_numeric(x.dtype(), "TopK", [&](auto tag) {
    using T = decltype(tag);
    topk_typed<T>(x.data_as<T>(), values.data_as<T>(), indices.data_as<int64_t>(), s.outer, s.axis_dim, s.inner, k,
                  largest);
  });
}

std::unique_ptr<OpKernel> make_topk_kernel(const KernelInit& init, bool k_from_input, bool has_largest) {
  return std::make_unique<TopKKernel>(init, k_from_input, has_largest);
}

}  // namespace pointrt::reduce
