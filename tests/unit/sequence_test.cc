// Sequence operators (src/ops/onnx/sequence/sequence.h): SequenceEmpty/Construct/Insert/Erase/At/
// Length, SplitToSequence, ConcatFromSequence, SequenceMap, run through sessions with run_any;
// each against the definition, on sizes 0, 1 and odd, every error, and two threads at once.
#include <gtest/gtest.h>

#include <thread>

#include "support/random.h"
#include "support/sequence_models.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

std::vector<float> floats_of(const Tensor& t) { return values_of<float>(t); }

// seq (input) -> SequenceAt(seq, pos), SequenceLength(seq).
Model at_and_length_model() {
  ModelBuilder b(17);
  wrapped_input(b, "seq", DType::kFloat32, Wrap::kSequence);
  b.input("pos", DType::kInt64, {});
  b.node("SequenceAt", {"seq", "pos"}, {"elem"}, "", "at");
  b.node("SequenceLength", {"seq"}, {"len"}, "", "length");
  b.output("elem").output("len");
  return b.load();
}

TEST(Sequence, AtAndLengthFollowTheDefinition) {
  Session s(at_and_length_model());
  const Sequence seq = seq_of({f32({1}, {10}), f32({2}, {20, 21}), f32({0}, {})});  // odd length, an empty element
  for (int64_t pos : {0, 1, 2, -1, -2, -3}) {
    auto out = s.run_any({{"seq", seq}, {"pos", i64(pos)}});
    const size_t want = static_cast<size_t>(pos < 0 ? pos + 3 : pos);
    EXPECT_EQ(floats_of(out[0].tensor()), floats_of(seq.at(want))) << pos;
    EXPECT_EQ(values_of<int64_t>(out[1].tensor()), std::vector<int64_t>{3});
  }
  EXPECT_EQ(s.inputs()[0].to_string(), "seq: seq(float32)");
}

TEST(Sequence, PositionOutOfRangeIsOneLineNamingNodeAndValue) {
  Session s(at_and_length_model());
  const Sequence seq = seq_of({f32({1}, {1})});
  for (int64_t pos : {1, -2, 7}) {
    std::string e = error_text([&] { s.run_any({{"seq", seq}, {"pos", i64(pos)}}); });
    EXPECT_NE(e.find("node 'at' (SequenceAt)"), std::string::npos) << e;
    EXPECT_NE(e.find("a sequence position out of range"), std::string::npos) << e;
    EXPECT_NE(e.find("'pos'"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  std::string e = error_text([&] { s.run_any({{"seq", seq_of({})}, {"pos", i64(0)}}); });
  EXPECT_NE(e.find("a sequence position out of range"), std::string::npos) << e;
}

TEST(Sequence, TensorFedWhereSequenceIsDeclared) {
  Session s(at_and_length_model());
  std::string e = error_text([&] { s.run_any({{"seq", f32({1}, {1})}, {"pos", i64(0)}}); });
  EXPECT_NE(e.find("input 'seq' is declared seq(float32) but gets a tensor"), std::string::npos) << e;
  e = error_text([&] { s.run_any({{"seq", seq_of({i64(1)}, DType::kInt64)}, {"pos", i64(0)}}); });
  EXPECT_NE(e.find("expects a sequence of float"), std::string::npos) << e;
  e = error_text([&] { s.run({{"pos", i64(0)}}); });  // the tensor API cannot feed a sequence
  EXPECT_NE(e.find("'seq'"), std::string::npos) << e;
}

TEST(Sequence, KindMismatchesInsideTheGraphNameTheNodeAndValue) {
  // A tensor where a sequence operator reads a sequence, and a sequence where a tensor operator reads a tensor.
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {1});
  b.node("SequenceLength", {"x"}, {"n"}, "", "len");
  b.output("n");
  std::string e = run_any_error(b.load(), {{"x", f32({1}, {1})}});
  EXPECT_NE(e.find("node 'len' (SequenceLength): input 0 'x' must be a sequence, got a tensor float32 [1]"),
            std::string::npos)
      << e;
  ModelBuilder c(17);
  c.input("x", DType::kFloat32, {1});
  c.node("SequenceConstruct", {"x"}, {"s"}, "", "make");
  c.node("Relu", {"s"}, {"y"}, "", "relu");
  c.output("y");
  e = run_any_error(c.load(), {{"x", f32({1}, {1})}});
  EXPECT_NE(e.find("node 'relu' (Relu): input 0 's' is a sequence of 1 float32 tensors, but this operator takes a "
                   "tensor"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// SequenceEmpty -> Insert x at `p1` (optional) -> Insert y at p2 -> Erase at p3 (optional).
Model build_model(bool with_positions) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {"n"}).input("y", DType::kFloat32, {"m"});
  if (with_positions) b.input("p", DType::kInt64, {}).input("q", DType::kInt32, {});
  b.node("SequenceEmpty", {}, {"s0"}, "", "empty");
  b.node("SequenceInsert", {"s0", "x"}, {"s1"}, "", "ins_x");
  b.node("SequenceInsert",
         with_positions ? std::vector<std::string>{"s1", "y", "p"} : std::vector<std::string>{"s1", "y"}, {"s2"}, "",
         "ins_y");
  b.node("SequenceInsert", {"s2", "x"}, {"s3"}, "", "ins_x2");
  b.node("SequenceErase", with_positions ? std::vector<std::string>{"s3", "q"} : std::vector<std::string>{"s3"},
         {"out"}, "", "erase");
  b.output("out");
  return b.load();
}

TEST(Sequence, InsertAndEraseFollowTheDefinition) {
  const Tensor x = f32({1}, {1}), y = f32({3}, {2, 3, 4});
  // Defaults: [x] -> [x, y] -> [x, y, x] -> erase last -> [x, y].
  auto out = run_any(build_model(false), {{"x", x}, {"y", y}});
  ASSERT_TRUE(out[0].is_sequence());
  ASSERT_EQ(out[0].sequence().size(), 2u);
  EXPECT_EQ(floats_of(out[0].sequence().at(1)), floats_of(y));
  // y at 0 (front), then erase position 0 (int32): [x, x].
  out = run_any(build_model(true), {{"x", x}, {"y", y}, {"p", i64(0)}, {"q", tensor_of<int32_t>({}, {0})}});
  ASSERT_EQ(out[0].sequence().size(), 2u);
  EXPECT_EQ(floats_of(out[0].sequence().at(0)), floats_of(x));
  // y inserted at n = 1 (the end) and at -1; erase at -2.
  for (int64_t p : {1, -1}) {
    out = run_any(build_model(true), {{"x", x}, {"y", y}, {"p", i64(p)}, {"q", tensor_of<int32_t>({}, {-2})}});
    ASSERT_EQ(out[0].sequence().size(), 2u);
    EXPECT_EQ(floats_of(out[0].sequence().at(0)), floats_of(p == 1 ? x : y)) << p;
  }
  std::string e =
      run_any_error(build_model(true), {{"x", x}, {"y", y}, {"p", i64(2)}, {"q", tensor_of<int32_t>({}, {0})}});
  EXPECT_NE(e.find("node 'ins_y' (SequenceInsert): a sequence position out of range"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed [-1, 1]"), std::string::npos) << e;
}

TEST(Sequence, InsertRefusesAnotherElementType) {
  ModelBuilder b(17);
  b.input("x", DType::kInt64, {});
  b.node("SequenceEmpty", {}, {"s0"}, "", "empty");
  b.node("SequenceInsert", {"s0", "x"}, {"out"}, "", "ins");
  b.output("out");
  std::string e = run_any_error(b.load(), {{"x", i64(1)}});
  EXPECT_NE(e.find("but the sequence holds float"), std::string::npos) << e;
}

TEST(Sequence, ConstructNeedsOneElementType) {
  ModelBuilder b(17);
  b.input("a", DType::kFloat32, {1}).input("c", DType::kFloat32, {2});
  b.node("SequenceConstruct", {"a", "c", "a"}, {"out"}, "", "make");
  b.output("out");
  auto out = run_any(b.load(), {{"a", f32({1}, {5})}, {"c", f32({2}, {6, 7})}});
  ASSERT_EQ(out[0].sequence().size(), 3u);
  EXPECT_EQ(floats_of(out[0].sequence().at(1)), (std::vector<float>{6, 7}));
  EXPECT_EQ(floats_of(out[0].sequence().at(2)), (std::vector<float>{5}));
}

TEST(Sequence, ReturnedElementsAreTheCallersToModify) {
  // An element that is a constant of the model comes back as a copy: changing it changes no later run.
  ModelBuilder b(17);
  b.initializer("w", f32({2}, {1, 2}));
  b.node("SequenceConstruct", {"w"}, {"s"}, "", "make");
  b.output("s");
  Session s(b.load());
  for (int rep = 0; rep < 2; ++rep) {
    auto out = s.run_any({});
    Tensor e = out[0].sequence().at(0);
    EXPECT_EQ(floats_of(e), (std::vector<float>{1, 2})) << rep;
    e.data_as<float>()[0] = 100;
  }
}

// x -> SplitToSequence(axis, keepdims, split?) -> ConcatFromSequence(axis, new_axis) and the sequence.
Model split_concat_model(int64_t axis, int64_t keepdims, bool with_split, int64_t new_axis) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {"a", "b", "c"});
  if (with_split) {  // a scalar or 1-D: no declared shape
    b.input("split", DType::kInt64, {});
    b.proto().mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  auto& s =
      b.node("SplitToSequence", with_split ? std::vector<std::string>{"x", "split"} : std::vector<std::string>{"x"},
             {"parts"}, "", "split");
  ModelBuilder::attr_int(s, "axis", axis);
  ModelBuilder::attr_int(s, "keepdims", keepdims);
  auto& c = b.node("ConcatFromSequence", {"parts"}, {"joined"}, "", "concat");
  ModelBuilder::attr_int(c, "axis", axis);
  ModelBuilder::attr_int(c, "new_axis", new_axis);
  b.output("parts").output("joined");
  return b.load();
}

TEST(Sequence, SplitThenConcatIsTheIdentity) {
  for (Shape shape : {Shape{2, 5, 3}, Shape{1, 1, 1}, Shape{3, 0, 2}}) {
    const Tensor x = random_floats(shape, 7);
    for (int64_t axis : {0, 1, -1}) {
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      // Chunks of 1, axis kept, joined back; chunks of 1, axis removed, stacked back.
      for (int64_t keep : {1, 0}) {
        const Model m = split_concat_model(axis, keep, false, keep ? 0 : 1);
        if (shape[a] == 0) {  // no chunks: an empty sequence, which has no shape to concatenate to
          EXPECT_NE(run_any_error(m, {{"x", x}}).find("the input sequence is empty"), std::string::npos);
          continue;
        }
        auto out = run_any(m, {{"x", x}});
        EXPECT_EQ(out[0].sequence().size(), static_cast<size_t>(shape[a]));
        EXPECT_EQ(out[1].tensor().shape(), shape);
        EXPECT_EQ(floats_of(out[1].tensor()), floats_of(x)) << shape_to_string(shape) << axis << keep;
      }
    }
  }
}

TEST(Sequence, SplitLengthsFollowTheDefinition) {
  const Tensor x = random_floats({5, 2}, 3);
  auto out = run_any(split_concat_model(0, 1, true, 0), {{"x", x.reshaped({5, 2, 1})}, {"split", i64(2)}});
  const Sequence& parts = out[0].sequence();
  ASSERT_EQ(parts.size(), 3u);  // 2, 2, 1 (the last shorter)
  EXPECT_EQ(parts.at(2).shape(), (Shape{1, 2, 1}));
  const std::vector<float> all = floats_of(x);
  EXPECT_EQ(floats_of(parts.at(1)), std::vector<float>(all.begin() + 4, all.begin() + 8));
  EXPECT_EQ(floats_of(out[1].tensor()), all);
  Tensor lengths = tensor_of<int64_t>({3}, {0, 4, 1});  // a zero-length chunk
  out = run_any(split_concat_model(0, 0, true, 0), {{"x", x.reshaped({5, 2, 1})}, {"split", lengths}});
  EXPECT_EQ(out[0].sequence().at(0).shape(), (Shape{0, 2, 1}));  // keepdims ignored with a split
  EXPECT_EQ(out[0].sequence().at(1).shape(), (Shape{4, 2, 1}));
  std::string e = run_any_error(split_concat_model(0, 1, true, 0),
                                {{"x", x.reshaped({5, 2, 1})}, {"split", tensor_of<int64_t>({2}, {1, 1})}});
  EXPECT_NE(e.find("node 'split' (SplitToSequence): the 'split' lengths add up to 2 but the axis has length 5"),
            std::string::npos)
      << e;
  e = run_any_error(split_concat_model(0, 1, true, 0), {{"x", x.reshaped({5, 2, 1})}, {"split", i64(0)}});
  EXPECT_NE(e.find("a chunk length must be positive"), std::string::npos) << e;
}

TEST(Sequence, ConcatErrors) {
  std::string e = run_any_error(split_concat_model(1, 1, false, 0), {{"x", Tensor::zeros(DType::kFloat32, {2, 0, 3})}});
  EXPECT_NE(e.find("node 'concat' (ConcatFromSequence): the input sequence is empty"), std::string::npos) << e;
  ModelBuilder b(17);
  wrapped_input(b, "seq", DType::kFloat32, Wrap::kSequence);
  auto& c = b.node("ConcatFromSequence", {"seq"}, {"y"}, "", "concat");
  ModelBuilder::attr_int(c, "axis", 0);
  b.output("y");
  Model m = b.load();
  e = run_any_error(m, {{"seq", seq_of({f32({1, 2}, {1, 2}), f32({1, 3}, {1, 2, 3})})}});
  EXPECT_NE(e.find("sequence element 1 is [1, 3] but element 0 is [1, 2]"), std::string::npos) << e;
  auto out = run_any(m, {{"seq", seq_of({f32({1, 2}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})})}});
  EXPECT_EQ(floats_of(out[0].tensor()), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// SequenceMap: out1[i] = seq[i] + extra; out2[i] = Shape(seq[i]).
Model sequence_map_model(bool extra_is_sequence) {
  onnx::GraphProto body;
  body.set_name("body");
  for (const char* n : {"e", "t"}) {
    auto* in = body.add_input();
    in->set_name(n);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("e");
  add->add_input("t");
  add->add_output("sum");
  auto* shape = body.add_node();
  shape->set_op_type("Shape");
  shape->add_input("e");
  shape->add_output("shape");
  body.add_output()->set_name("sum");
  body.add_output()->set_name("shape");
  ModelBuilder b(17);
  wrapped_input(b, "seq", DType::kFloat32, Wrap::kSequence);
  if (extra_is_sequence)
    wrapped_input(b, "extra", DType::kFloat32, Wrap::kSequence);
  else
    b.input("extra", DType::kFloat32, {1});
  auto& n = b.node("SequenceMap", {"seq", "extra"}, {"sums", "shapes"}, "", "map");
  attr_graph(n, "body", body);
  b.output("sums").output("shapes");
  return b.load();
}

TEST(Sequence, SequenceMapRunsTheBodyPerElement) {
  const Sequence seq = seq_of({f32({2}, {1, 2}), f32({0}, {}), f32({3}, {3, 4, 5})});
  auto out = run_any(sequence_map_model(false), {{"seq", seq}, {"extra", f32({1}, {10})}});
  ASSERT_EQ(out[0].sequence().size(), 3u);
  EXPECT_EQ(floats_of(out[0].sequence().at(2)), (std::vector<float>{13, 14, 15}));
  EXPECT_EQ(values_of<int64_t>(out[1].sequence().at(0)), std::vector<int64_t>{2});
  EXPECT_EQ(out[1].sequence().elem_type(), DType::kInt64);
  const Sequence tens = seq_of({f32({1}, {100}), f32({1}, {200}), f32({1}, {300})});
  out = run_any(sequence_map_model(true), {{"seq", seq}, {"extra", tens}});
  EXPECT_EQ(floats_of(out[0].sequence().at(0)), (std::vector<float>{101, 102}));
  out = run_any(sequence_map_model(true), {{"seq", seq_of({})}, {"extra", seq_of({})}});  // empty in, empty out
  EXPECT_EQ(out[0].sequence().size(), 0u);
  std::string e = run_any_error(sequence_map_model(true), {{"seq", seq}, {"extra", seq_of({f32({1}, {1})})}});
  EXPECT_NE(e.find("node 'map' (SequenceMap): input 1 'extra' has 1 elements but input 0 'seq' has 3"),
            std::string::npos)
      << e;
}

TEST(Sequence, ConcurrentRunsOfOneSession) {
  Session s(split_concat_model(1, 0, false, 1));
  auto work = [&](unsigned seed, bool& ok) {
    ok = true;
    for (int rep = 0; rep < 20; ++rep) {
      const Tensor x = random_floats({2, 3 + seed, 2}, seed * 100 + rep);
      auto out = s.run_any({{"x", x}});
      ok = ok && out[0].sequence().size() == 3 + seed && floats_of(out[1].tensor()) == floats_of(x);
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread t1(work, 1u, std::ref(ok1)), t2(work, 2u, std::ref(ok2));
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

}  // namespace
