#include "ops/onnx/strings/string_ops.h"

#include <algorithm>
#include <regex>
#include <set>

#include "ops/onnx/elementwise/broadcast.h"
#include "ops/onnx/strings/tfidf_vectorizer.h"

namespace pointrt::strings {

std::string string_normalize_case(std::string s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::vector<std::string> python_split(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (!sep.empty()) {
    size_t begin = 0;
    for (;;) {
      const size_t at = s.find(sep, begin);
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit)) break;
      parts.push_back(s.substr(begin, at - begin));
      begin = at + sep.size();
    }
    parts.push_back(s.substr(begin));
    return parts;
  }
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = s.size();
      while (end > i && space(s[end - 1])) --end;
      parts.push_back(s.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !space(s[j])) ++j;
    parts.push_back(s.substr(i, j - i));
    i = j;
  }
  return parts;
}

namespace {

const Tensor& string_input(KernelContext& ctx, size_t i) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DType::kString) fail(ctx.where(), ": input ", i, " must be string, got ", dtype_name(t.dtype()));
  return t;
}

std::unique_ptr<OpKernel> make_string_normalizer(const KernelInit& init) {
  const std::string action = init.attrs().get_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    fail(init.where(), ": attribute 'case_change_action' is '", action, "', expected NONE, LOWER or UPPER");
  const bool sensitive = init.attrs().get_int("is_case_sensitive", 0) != 0;
  std::set<std::string> stops;
  if (init.attrs().has("stopwords"))
    for (const auto& w : init.attrs().get_strings("stopwords"))
      stops.insert(sensitive ? w : string_normalize_case(w, false));
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = string_input(ctx, 0);
    if (!(x.rank() == 1 || (x.rank() == 2 && x.dim(0) == 1)))
      fail(ctx.where(), ": input must be [C] or [1, C], got ", shape_to_string(x.shape()));
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& s = x.data_as<std::string>()[i];
      if (stops.count(sensitive ? s : string_normalize_case(s, false))) continue;
      kept.push_back(action == "NONE" ? s : string_normalize_case(s, action == "UPPER"));
    }
    if (kept.empty()) kept.emplace_back();
    const int64_t n = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.output(0, DType::kString, x.rank() == 1 ? Shape{n} : Shape{1, n});
    std::move(kept.begin(), kept.end(), y.data_as<std::string>());
  });
}

std::unique_ptr<OpKernel> make_string_concat(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor &a = string_input(ctx, 0), &b = string_input(ctx, 1);
    const Shape out = elementwise::bcast::broadcast_shape(a.shape(), b.shape(), ctx.where());
    Tensor& y = ctx.output(0, DType::kString, out);
    elementwise::bcast::binary(a.data_as<std::string>(), a.shape(), b.data_as<std::string>(), b.shape(),
                               y.data_as<std::string>(), out,
                               [](const std::string& p, const std::string& q) { return p + q; });
  });
}

std::unique_ptr<OpKernel> make_string_split(const KernelInit& init) {
  const std::string delimiter = init.attrs().get_string("delimiter", "");
  const int64_t maxsplit = init.attrs().has("maxsplit") ? init.attrs().get_int("maxsplit") : -1;
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = string_input(ctx, 0);
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(x.numel()));
    int64_t longest = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      parts[i] = python_split(x.data_as<std::string>()[i], delimiter, maxsplit);
      longest = std::max<int64_t>(longest, static_cast<int64_t>(parts[i].size()));
    }
    Shape ys = x.shape();
    ys.push_back(longest);
    Tensor& y = ctx.output(0, DType::kString, ys);
    Tensor& z = ctx.output(1, DType::kInt64, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      z.data_as<int64_t>()[i] = static_cast<int64_t>(parts[i].size());
      for (size_t j = 0; j < parts[i].size(); ++j) y.data_as<std::string>()[i * longest + j] = std::move(parts[i][j]);
    }
  });
}

std::unique_ptr<OpKernel> make_regex_full_match(const KernelInit& init) {
  const std::string pattern = init.attrs().get_string("pattern", "");
  std::shared_ptr<const std::regex> re;
  try {
    re = std::make_shared<const std::regex>(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    fail(init.where(), ": attribute 'pattern' '", pattern, "' is not a valid regular expression (", e.what(), ")");
  }
  return make_function_kernel([re](KernelContext& ctx) {
    const Tensor& x = string_input(ctx, 0);
    Tensor& y = ctx.output(0, DType::kBool, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data_as<bool>()[i] = std::regex_match(x.data_as<std::string>()[i], *re);
  });
}

}  // namespace

void add_string_rows(OpTable& t) {
  const std::vector<DType> S = {DType::kString};
  t.add({"", "StringNormalizer", 10, 21, S, make_string_normalizer, "stopwords, ASCII case changes"});
  t.add({"", "StringConcat", 20, 21, S, make_string_concat, "numpy broadcasting"});
  t.add({"", "StringSplit", 20, 21, S, make_string_split, "delimiter (default: whitespace runs), maxsplit"});
  t.add({"", "RegexFullMatch", 20, 21, S, make_regex_full_match, "std::regex ECMAScript syntax"});
  t.add({"",
         "TfIdfVectorizer",
         9,
         21,
         {DType::kString, DType::kInt32, DType::kInt64},
         make_tfidf_vectorizer_kernel,
         "TF | IDF | TFIDF, skip-grams"});
}

}  // namespace pointrt::strings
