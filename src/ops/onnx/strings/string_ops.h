// String operators (elements are std::string, see DType::kString).
//   StringNormalizer (10): X [C] or [1, C]; drops `stopwords` (compared case-insensitively
//     unless is_case_sensitive = 1), then case_change_action LOWER / UPPER / NONE. An empty
//     result is [1] (or [1, 1]) holding "". Case changes and case-insensitive matching act on
//     ASCII letters only; `locale` is accepted and ignored (other bytes pass unchanged).
//   StringConcat (20): X + Y elementwise, numpy broadcasting.
//   StringSplit (20): splits each X element on `delimiter` (empty or absent: runs of
//     whitespace, leading and trailing ones dropped, as Python's str.split()), at most
//     `maxsplit` times; Y [..., longest] padded with "", Z int64 [...] the number of parts.
//   RegexFullMatch (20): bool, whether the whole element matches `pattern` (std::regex
//     ECMAScript; RE2-only syntax such as (?i) or \C is reported as an invalid pattern).
#pragma once

#include "ops/kernel.h"

namespace pointrt::strings {

std::string string_normalize_case(std::string s, bool upper);
/// Python str.split(sep or None, maxsplit) (maxsplit < 0: unlimited).
std::vector<std::string> python_split(const std::string& s, const std::string& sep, int64_t maxsplit);

/// Table rows of the string family (also TfIdfVectorizer).
void add_string_rows(OpTable& t);

}  // namespace pointrt::strings
