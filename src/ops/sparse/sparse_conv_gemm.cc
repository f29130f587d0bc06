// SparseConv execution: gather the input rows of each kernel offset, one GEMM with that offset's
// packed weight, scatter-add into the output rows (spconv's gather-GEMM-scatter).
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>

#include "ops/sparse/sparse_conv.h"

namespace pointrt::sparse {

std::vector<float> pack_sparse_weight(const float* w, int64_t cout, int64_t volume, int64_t cin) {
  std::vector<float> packed(static_cast<size_t>(cout * volume * cin));
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t o = 0; o < volume; ++o)
      for (int64_t ci = 0; ci < cin; ++ci) packed[(o * cin + ci) * cout + co] = w[(co * volume + o) * cin + ci];
  return packed;
}

namespace {
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float beta, float* c) {
  dnnl_status_t st = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, lda, b, n, beta, c, n);
  if (st != dnnl_success) fail("SparseConv: dnnl_sgemm failed with status ", static_cast<int>(st));
}
}  // namespace

void apply_pairs(const PairLists& pl, const float* x, int64_t cin, const float* packed, int64_t cout, float* out) {
  const int64_t rows = pl.num_out;
  const int64_t volume = static_cast<int64_t>(pl.in_rows.size());
  if (rows == 0 || cout == 0) return;
  const int64_t identity = pl.identity_offset;
  // Blocks of output rows; each thread owns its blocks, so the scatter-add needs no atomics.
  const int64_t block =
      std::max<int64_t>(256, std::min<int64_t>(4096, rows / (8 * std::max(1, omp_get_max_threads())) + 1));
  const int64_t blocks = (rows + block - 1) / block;
#pragma omp parallel if (blocks > 1)
  {
    std::vector<float> gathered(static_cast<size_t>(block * std::max<int64_t>(cin, 1)));
    std::vector<float> products(static_cast<size_t>(block * cout));
#pragma omp for schedule(dynamic, 1)
    for (int64_t bi = 0; bi < blocks; ++bi) {
      const int64_t r0 = bi * block, r1 = std::min(rows, r0 + block);
      float* ob = out + r0 * cout;
      if (identity >= 0 && cin > 0)  // subm centre: rows pair with themselves, x rows are contiguous
        sgemm(r1 - r0, cout, cin, x + r0 * cin, cin, packed + identity * cin * cout, 0.0f, ob);
      else
        std::memset(ob, 0, sizeof(float) * (r1 - r0) * cout);
      if (cin == 0) continue;
      for (int64_t o = 0; o < volume; ++o) {
        if (o == identity) continue;
        const auto& dst = pl.out_rows[o];
        const auto& src = pl.in_rows[o];
        const int64_t lo = std::lower_bound(dst.begin(), dst.end(), static_cast<int32_t>(r0)) - dst.begin();
        const int64_t hi = std::lower_bound(dst.begin() + lo, dst.end(), static_cast<int32_t>(r1)) - dst.begin();
        const int64_t np = hi - lo;
        if (np == 0) continue;
        float* g = gathered.data();
        for (int64_t i = 0; i < np; ++i)
          std::memcpy(g + i * cin, x + static_cast<int64_t>(src[lo + i]) * cin, sizeof(float) * cin);
        sgemm(np, cout, cin, g, cin, packed + o * cin * cout, 0.0f, products.data());
        const float* pr = products.data();
        for (int64_t i = 0; i < np; ++i) {
          float* d = out + static_cast<int64_t>(dst[lo + i]) * cout;
          const float* s = pr + i * cout;
          for (int64_t c = 0; c < cout; ++c) d[c] += s[c];
        }
      }
    }
  }
}

}  // namespace pointrt::sparse
