// TfIdfVectorizer (ONNX 9): counts the pool's n-grams in each row of X ([C] or [B, C], string
// or int32/int64) and writes float32 [max(ngram_indexes) + 1] per row, as ONNX's reference:
//  - pool (pool_strings or pool_int64s) holds the 1-grams, then the 2-grams, ... with
//    ngram_counts[i] the start of the (i + 1)-grams; n-gram number k (over all lengths, in pool
//    order) counts into output column ngram_indexes[k]. Lengths outside [min_gram_length,
//    max_gram_length] are not matched.
//  - for skip distance d = 1 .. max_skip_count + 1 and every start s: the items s, s + d,
//    s + 2d, ... are extended while they remain a prefix of some pool n-gram; every prefix of
//    length >= min_gram_length that is a pool n-gram counts once. 1-grams count only at d = 1.
//  - mode TF: the counts; IDF: weights[column] (or 1) where the count > 0; TFIDF: count * weight.
#pragma once

#include "ops/kernel.h"

namespace pointrt::strings {

std::unique_ptr<OpKernel> make_tfidf_vectorizer_kernel(const KernelInit& init);

}  // namespace pointrt::strings
