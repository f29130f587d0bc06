// String tensors and the string operators: tensor storage (construct, clone, reshape views),
// StringNormalizer, StringConcat, StringSplit (Python's split rules), RegexFullMatch,
// TfIdfVectorizer (strings and int64, skips, modes), Equal on strings, Cast to and from
// string with numpy's text forms, and the errors.
#include <gtest/gtest.h>

#include "ops/onnx/elementwise/cast_string.h"
#include "ops/onnx/strings/string_ops.h"
#include "support/node_runner.h"

// Not `using namespace pointrt`: its namespace `strings` would clash with the helper below.
using pointrt::DType;
using pointrt::Shape;
using pointrt::Tensor;
using pointrt::strings::python_split;
using namespace pointrt::test;
namespace elementwise = pointrt::elementwise;

namespace {
Tensor strings(Shape shape, const std::vector<std::string>& v) {
  Tensor t = Tensor::allocate(DType::kString, std::move(shape));
  std::copy(v.begin(), v.end(), t.data_as<std::string>());
  return t;
}
std::vector<std::string> texts(const Tensor& t) { return values_of<std::string>(t); }
}  // namespace

TEST(StringTensor, StorageCloneAndViews) {
  Tensor t = strings({2}, {"a long string that does not fit in the small buffer", "b"});
  Tensor c = t.clone();
  t.data_as<std::string>()[1] = "changed";
  EXPECT_EQ(texts(c), (std::vector<std::string>{"a long string that does not fit in the small buffer", "b"}));
  EXPECT_EQ(texts(t.reshaped({1, 2}))[1], "changed");
  EXPECT_EQ(Tensor::zeros(DType::kString, {3}).data_as<std::string>()[2], "");
  NodeCase id{"Identity", 16, "", {{"x", t}}};
  EXPECT_EQ(texts(run_node(id)[0]), texts(t));
}

TEST(StringNormalizer, StopwordsAndCase) {
  NodeCase c{"StringNormalizer", 10, "", {{"x", strings({4}, {"Monday", "tuesday", "MONDAY", "Wed"})}}};
  c.attrs = [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("stopwords");
    a->set_type(onnx::AttributeProto::STRINGS);
    a->add_strings("monday");
    ModelBuilder::attr_string(n, "case_change_action", "UPPER");
  };
  EXPECT_EQ(texts(run_node(c)[0]), (std::vector<std::string>{"TUESDAY", "WED"}));  // case-insensitive stops
  c.inputs[0].second = strings({1, 2}, {"monday", "MONDAY"});
  const Tensor empty = run_node(c)[0];
  EXPECT_EQ(empty.shape(), (Shape{1, 1}));
  EXPECT_EQ(texts(empty)[0], "");
}

TEST(StringOps, ConcatSplitRegex) {
  NodeCase cat{"StringConcat", 20, "", {{"a", strings({2}, {"ab", "c"})}, {"b", strings({}, {"!"})}}};
  EXPECT_EQ(texts(run_node(cat)[0]), (std::vector<std::string>{"ab!", "c!"}));
  EXPECT_EQ(python_split("  a  b c ", "", -1), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(python_split("  a  b c ", "", 1), (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(python_split("a,,b", ",", -1), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(python_split("", ",", -1), (std::vector<std::string>{""}));
  NodeCase split{"StringSplit", 20, "", {{"x", strings({2}, {"a-b-c", "d"})}}, {"parts", "counts"}};
  split.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "delimiter", "-"); };
  const auto r = run_node(split);
  EXPECT_EQ(r[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(texts(r[0]), (std::vector<std::string>{"a", "b", "c", "d", "", ""}));
  EXPECT_EQ(values_of<int64_t>(r[1]), (std::vector<int64_t>{3, 1}));
  NodeCase re{"RegexFullMatch", 20, "", {{"x", strings({3}, {"www.a.com", "www.a.org", "xwww.a.com"})}}};
  re.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "pattern", "www\\.[\\w.-]+\\.com"); };
  EXPECT_EQ(values_of<bool>(run_node(re)[0]), (std::vector<bool>{true, false, false}));
  re.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "pattern", "(unclosed"); };
  EXPECT_NE(node_error(re).find("is not a valid regular expression"), std::string::npos) << node_error(re);
}

TEST(TfIdfVectorizer, CountsSkipGramsAndModes) {
  // Pool: 1-grams {a, b}, 2-grams {(a, b)}; columns 0, 1, 2.
  auto attrs = [](const char* mode, int skip) {
    return [mode, skip](onnx::NodeProto& n) {
      ModelBuilder::attr_int(n, "min_gram_length", 1);
      ModelBuilder::attr_int(n, "max_gram_length", 2);
      ModelBuilder::attr_int(n, "max_skip_count", skip);
      ModelBuilder::attr_string(n, "mode", mode);
      ModelBuilder::attr_ints(n, "ngram_counts", {0, 2});
      ModelBuilder::attr_ints(n, "ngram_indexes", {0, 1, 2});
      auto* a = n.add_attribute();
      a->set_name("pool_strings");
      a->set_type(onnx::AttributeProto::STRINGS);
      for (const char* s : {"a", "b", "a", "b"}) a->add_strings(s);
      ModelBuilder::attr_floats(n, "weights", {1, 2, 3});
    };
  };
  NodeCase c{"TfIdfVectorizer", 9, "", {{"x", strings({2, 3}, {"a", "x", "b", "a", "b", "b"})}}};
  c.attrs = attrs("TF", 0);
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 1, 0, 1, 2, 1}));
  c.attrs = attrs("TF", 1);  // skip 1 finds (a, _, b) in row 0; unigrams are not counted twice
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 1, 1, 1, 2, 2}));
  c.attrs = attrs("TFIDF", 0);
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 2, 0, 1, 4, 3}));
  c.attrs = attrs("IDF", 0);
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 2, 0, 1, 2, 3}));
  c.inputs[0].second = tensor_of<int64_t>({3}, {1, 2, 3});
  EXPECT_NE(node_error(c).find("input is int64 but the pool is strings"), std::string::npos) << node_error(c);
}

TEST(StringCast, NumpyTextForms) {
  EXPECT_EQ(elementwise::float_to_text(0.039187793f, true), "0.039187793");
  EXPECT_EQ(elementwise::float_to_text(1.0f, true), "1.0");
  EXPECT_EQ(elementwise::float_to_text(-250.5f, true), "-250.5");
  EXPECT_EQ(elementwise::float_to_text(1e-5f, true), "1e-05");
  EXPECT_EQ(elementwise::float_to_text(1.5e20, false), "1.5e+20");
  EXPECT_EQ(elementwise::float_to_text(0.1, false), "0.1");
  NodeCase to{"Cast", 19, "", {{"x", tensor_of<int32_t>({2}, {-7, 42})}}};
  to.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", 8); };
  EXPECT_EQ(texts(run_node(to)[0]), (std::vector<std::string>{"-7", "42"}));
  NodeCase from{"Cast", 19, "", {{"s", strings({3}, {" 1.5", "inf", "-2e3"})}}};
  from.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", 1); };
  const auto f = values_of<float>(run_node(from)[0]);
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_TRUE(std::isinf(f[1]));
  EXPECT_EQ(f[2], -2000.f);
  from.inputs[0].second = strings({2}, {"1", "one"});
  from.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", 7); };
  EXPECT_NE(node_error(from).find("element 1 'one' is not a int64 value"), std::string::npos) << node_error(from);
  NodeCase eq{"Equal", 19, "", {{"a", strings({2}, {"x", "y"})}, {"b", strings({1}, {"y"})}}};
  EXPECT_EQ(values_of<bool>(run_node(eq)[0]), (std::vector<bool>{false, true}));
}
