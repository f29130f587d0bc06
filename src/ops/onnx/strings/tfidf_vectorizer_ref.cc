#include <map>
#include <set>

#include "ops/onnx/strings/tfidf_vectorizer.h"

namespace pointrt::strings {
namespace {

struct TfIdfParams {
  int64_t min_len = 1, max_len = 1, max_skip = 0, columns = 0;
  enum class Mode { kTF, kIDF, kTFIDF } mode = Mode::kTF;
  std::vector<int64_t> ngram_indexes;
  std::vector<float> weights;
};

// The pool as n-grams (of comparable keys) -> n-gram number, plus every proper prefix.
template <typename K>
struct Pool {
  std::map<std::vector<K>, int64_t> grams;
  std::set<std::vector<K>> prefixes;
};

template <typename K>
Pool<K> build_pool(const std::vector<K>& items, const std::vector<int64_t>& counts, const TfIdfParams& p,
                   const std::string& where) {
  Pool<K> pool;
  int64_t id = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1, begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(items.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(items.size()) || (end - begin) % n)
      fail(where, ": ngram_counts ", shape_to_string(counts), " does not split the pool of ", items.size(), " items");
    for (int64_t g = begin; g < end; g += n, ++id) {
      if (n < p.min_len || n > p.max_len) continue;
      std::vector<K> gram(items.begin() + g, items.begin() + g + n);
      for (int64_t l = 1; l < n; ++l) pool.prefixes.insert(std::vector<K>(gram.begin(), gram.begin() + l));
      pool.grams.emplace(std::move(gram), id);
    }
  }
  if (id != static_cast<int64_t>(p.ngram_indexes.size()))
    fail(where, ": the pool holds ", id, " n-grams but ngram_indexes has ", p.ngram_indexes.size(), " entries");
  return pool;
}

template <typename K>
void count_row(const K* row, int64_t n, const Pool<K>& pool, const TfIdfParams& p, int64_t* counts) {
  for (int64_t d = 1; d <= p.max_skip + 1; ++d) {
    const int64_t min_len = d == 1 ? p.min_len : std::max<int64_t>(p.min_len, 2);
    if (min_len > p.max_len) break;
    for (int64_t s = 0; s < n; ++s) {
      std::vector<K> gram;
      for (int64_t at = s; at < n && static_cast<int64_t>(gram.size()) < p.max_len; at += d) {
        gram.push_back(row[at]);
        auto hit = pool.grams.find(gram);
        if (hit != pool.grams.end() && static_cast<int64_t>(gram.size()) >= min_len)
          ++counts[p.ngram_indexes[hit->second]];
        if (hit == pool.grams.end() && !pool.prefixes.count(gram)) break;
      }
    }
  }
}

template <typename K>
std::vector<int64_t> count_all(const Tensor& x, const std::vector<K>& items, const std::vector<int64_t>& ngram_counts,
                               const TfIdfParams& p, int64_t rows, int64_t cols, const std::string& where) {
  const Pool<K> pool = build_pool(items, ngram_counts, p, where);
  std::vector<int64_t> counts(static_cast<size_t>(rows * p.columns), 0);
  std::vector<K> keys(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    if constexpr (std::is_same_v<K, std::string>)
      keys[i] = x.data_as<std::string>()[i];
    else
      keys[i] = x.dtype() == DType::kInt64 ? x.data_as<int64_t>()[i] : x.data_as<int32_t>()[i];
  }
  for (int64_t r = 0; r < rows; ++r) count_row(keys.data() + r * cols, cols, pool, p, counts.data() + r * p.columns);
  return counts;
}

}  // namespace

std::unique_ptr<OpKernel> make_tfidf_vectorizer_kernel(const KernelInit& init) {
  const Attributes& a = init.attrs();
  TfIdfParams p;
  p.min_len = a.get_int("min_gram_length");
  p.max_len = a.get_int("max_gram_length");
  p.max_skip = a.get_int("max_skip_count");
  const std::string mode = a.get_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    fail(init.where(), ": attribute 'mode' is '", mode, "', expected TF, IDF or TFIDF");
  p.mode = mode == "TF" ? TfIdfParams::Mode::kTF : mode == "IDF" ? TfIdfParams::Mode::kIDF : TfIdfParams::Mode::kTFIDF;
  p.ngram_indexes = a.get_ints("ngram_indexes");
  p.weights = a.get_floats("weights", {});
  for (int64_t i : p.ngram_indexes) {
    if (i < 0) fail(init.where(), ": ngram_indexes holds a negative index ", i);
    p.columns = std::max(p.columns, i + 1);
  }
  if (p.min_len < 1 || p.max_len < p.min_len || p.max_skip < 0)
    fail(init.where(), ": needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  if (!p.weights.empty() && static_cast<int64_t>(p.weights.size()) < p.columns)
    fail(init.where(), ": weights has ", p.weights.size(), " entries for ", p.columns, " output columns");
  const std::vector<int64_t> ngram_counts = a.get_ints("ngram_counts");
  const bool strings = a.has("pool_strings");
  const std::vector<std::string> pool_s = strings ? a.get_strings("pool_strings") : std::vector<std::string>{};
  const std::vector<int64_t> pool_i = strings ? std::vector<int64_t>{} : a.get_ints("pool_int64s");
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if ((x.dtype() == DType::kString) != strings)
      fail(ctx.where(), ": input is ", dtype_name(x.dtype()), " but the pool is ", strings ? "strings" : "int64");
    if (x.rank() > 2) fail(ctx.where(), ": input must be [C] or [B, C], got ", shape_to_string(x.shape()));
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, cols = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
    const std::vector<int64_t> counts = strings ? count_all(x, pool_s, ngram_counts, p, rows, cols, ctx.where())
                                                : count_all(x, pool_i, ngram_counts, p, rows, cols, ctx.where());
    Tensor& y = ctx.output(0, DType::kFloat32, x.rank() == 2 ? Shape{rows, p.columns} : Shape{p.columns});
    for (size_t i = 0; i < counts.size(); ++i) {
      const float w = p.weights.empty() ? 1.f : p.weights[i % p.columns];
      const float c = static_cast<float>(counts[i]);
      y.data_as<float>()[i] =
          p.mode == TfIdfParams::Mode::kTF ? c : (p.mode == TfIdfParams::Mode::kIDF ? (c > 0 ? w : 0) : c * w);
    }
  });
}

}  // namespace pointrt::strings
