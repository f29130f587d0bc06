// Tensor/shape family: fast kernels against their naive references on awkward shapes
// (0-sized dims, 1, odd, tile±1, rank 0..6), every element size, and the error paths through
// the operator table (messages must name the node, the input, the value and the range).
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>

#include "ops/kernel.h"
#include "ops/onnx/tensor/concat.h"
#include "ops/onnx/tensor/expand.h"
#include "ops/onnx/tensor/gather.h"
#include "ops/onnx/tensor/pad.h"
#include "ops/onnx/tensor/slice.h"
#include "ops/onnx/tensor/transpose.h"

using namespace pointrt;
using namespace pointrt::tensor;

namespace {

// One dtype per element size, float16 included: copy-type kernels move bytes.
const DType kSizes[] = {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64};

Tensor random_tensor(DType dt, const Shape& s, std::mt19937& rng) {
  Tensor t = Tensor::allocate(dt, s);
  auto* p = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng());
  return t;
}

Tensor index_tensor(DType dt, const Shape& s, int64_t n, std::mt19937& rng) {
  Tensor t = Tensor::allocate(dt, s);
  std::uniform_int_distribution<int64_t> dist(-n, n - 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v = n > 0 ? dist(rng) : 0;
    if (dt == DType::kInt64)
      t.data_as<int64_t>()[i] = v;
    else
      t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return t;
}

template <typename T>
Tensor make(DType dt, const Shape& s, std::vector<T> v) {
  Tensor t = Tensor::allocate(dt, s);
  EXPECT_EQ(static_cast<int64_t>(v.size()), t.numel());
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}
Tensor i64(const Shape& s, std::vector<int64_t> v) { return make(DType::kInt64, s, std::move(v)); }
Tensor f32(const Shape& s, std::vector<float> v) { return make(DType::kFloat32, s, std::move(v)); }

::testing::AssertionResult same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << "dtype/shape differ: " << shape_to_string(a.shape()) << " vs "
                                         << shape_to_string(b.shape());
  if (a.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) != 0) {
    const size_t es = dtype_size(a.dtype());
    for (int64_t i = 0; i < a.numel(); ++i)
      if (std::memcmp(static_cast<const char*>(a.data()) + i * es, static_cast<const char*>(b.data()) + i * es, es))
        return ::testing::AssertionFailure()
               << "first difference at flat element " << i << " of " << shape_to_string(a.shape());
  }
  return ::testing::AssertionSuccess();
}

Shape random_shape(std::mt19937& rng, int rank, bool allow_zero = true) {
  static const int64_t dims[] = {0, 1, 1, 2, 3, 5, 7};
  Shape s(rank);
  for (auto& d : s) {
    d = dims[rng() % 7];
    if (!allow_zero && d == 0) d = 2;
  }
  return s;
}

// ---- running one node through the operator table
class HeapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

Attribute attr_int(int64_t v) { return Attribute::make_int(std::move(v)); }
Attribute attr_ints(std::vector<int64_t> v) { return Attribute::make_ints(std::move(v)); }
Attribute attr_str(std::string v) { return Attribute::make_string(std::move(v)); }
Attribute attr_float(float v) { return Attribute::make_float(std::move(v)); }
Attribute attr_tensor(Tensor t) {
  Attribute a;
  a.kind = Attribute::Kind::kTensor;
  a.t = std::move(t);
  return a;
}

// Inputs that are undefined Tensors are passed as omitted optional inputs.
std::vector<Tensor> run_op(const std::string& op, int opset, const std::vector<Tensor>& inputs,
                           std::map<std::string, Attribute> attrs = {}, size_t num_outputs = 1) {
  Graph g;
  Node n;
  n.name = "n1";
  n.op_type = op;
  n.opset = opset;
  const char* names[] = {"data", "indices", "updates", "axes", "steps"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      n.inputs.push_back(-1);
      continue;
    }
    int id = g.add_value(i < 5 ? names[i] : "in" + std::to_string(i));
    g.values[id].dtype = inputs[i].dtype();
    n.inputs.push_back(id);
  }
  for (size_t i = 0; i < num_outputs; ++i) n.outputs.push_back(g.add_value("out" + std::to_string(i)));
  n.attrs.items = std::move(attrs);
  n.attrs.owner = n.describe();
  const OpEntry* e = op_table().find("", op, opset);
  if (!e) throw Error("no table row for " + op + " at opset " + std::to_string(opset));
  auto kernel = e->factory(KernelInit{n, g});
  std::vector<const Tensor*> ins;
  for (const auto& t : inputs) ins.push_back(t.defined() ? &t : nullptr);
  std::vector<Tensor> outs(num_outputs);
  HeapAllocator alloc;
  RunCache cache;
  KernelContext ctx(n, ins, outs, alloc, cache);
  kernel->run(ctx);
  return outs;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// ------------------------------------------------------------------ strided copy engine
TEST(TensorStridedCopy, MatchesReferenceOnRandomViews) {
  std::mt19937 rng(1);
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = static_cast<int>(rng() % 7);
    Shape out = random_shape(rng, rank);
    Shape src_shape = out;
    for (auto& d : src_shape) d = std::max<int64_t>(d, 1) * 2;
    const Strides base = contiguous_strides(src_shape);
    Strides st(rank);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      int kind = static_cast<int>(rng() % 4);  // 0: broadcast, 1: forward, 2: reverse, 3: step 2
      if (kind == 0)
        st[d] = 0;
      else if (kind == 1)
        st[d] = base[d];
      else if (kind == 2) {
        st[d] = -base[d];
        offset += (std::max<int64_t>(out[d], 1) - 1) * base[d];
      } else
        st[d] = 2 * base[d];  // the source dims are twice as big: a stride-2 walk fits
    }
    for (DType dt : kSizes) {
      Tensor src = random_tensor(dt, src_shape, rng);
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      strided_copy(src.data(), offset, out, st, a.data(), dtype_size(dt));
      strided_copy_ref(src.data(), offset, out, st, b.data(), dtype_size(dt));
      ASSERT_TRUE(same_bytes(a, b)) << "iter " << iter << " shape " << shape_to_string(out);
    }
  }
}

// ------------------------------------------------------------------ Transpose
TEST(TensorTranspose, FastMatchesReferenceRank0To6) {
  std::mt19937 rng(2);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = iter % 7;
    Shape s = random_shape(rng, rank);
    std::vector<int64_t> perm(rank);
    for (int d = 0; d < rank; ++d) perm[d] = d;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor a = Tensor::zeros(dt, transpose_shape(s, perm)), b = Tensor::zeros(dt, transpose_shape(s, perm));
      transpose_cpu(x, perm, a);
      transpose_ref(x, perm, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s);
    }
  }
}

TEST(TensorTranspose, TiledPathsOnTileEdges) {
  std::mt19937 rng(3);
  // 2D, batched 2D (NCHW<->NHWC) and inner-block copies around the 32-element tile.
  struct Case {
    Shape s;
    std::vector<int64_t> perm;
  };
  std::vector<Case> cases = {{{31, 33}, {1, 0}},
                             {{32, 32}, {1, 0}},
                             {{33, 65}, {1, 0}},
                             {{1, 97}, {1, 0}},
                             {{3, 5, 31, 33}, {0, 2, 3, 1}},
                             {{2, 7, 33}, {0, 2, 1}},
                             {{2, 33, 5, 7}, {0, 3, 1, 2}},
                             {{4, 3, 9, 8}, {1, 0, 2, 3}},
                             {{300, 257}, {1, 0}},
                             {{8, 64, 130}, {2, 0, 1}},
                             {{0, 33}, {1, 0}}};
  for (const auto& c : cases)
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, c.s, rng);
      Tensor a = Tensor::zeros(dt, transpose_shape(c.s, c.perm)), b = Tensor::zeros(dt, transpose_shape(c.s, c.perm));
      transpose_cpu(x, c.perm, a);
      transpose_ref(x, c.perm, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(c.s);
    }
}

TEST(TensorTranspose, DefaultPermReversesAndBadPermErrors) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = run_op("Transpose", 13, {x});
  EXPECT_EQ(y[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(y[0].data_as<float>()[1], 4.f);
  std::string msg = error_of([&] { run_op("Transpose", 13, {x}, {{"perm", attr_ints({0, 0})}}); });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("perm"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Transpose", 13, {x}, {{"perm", attr_ints({0, 1, 2})}}); });
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
}

// ------------------------------------------------------------------ Slice
TEST(TensorSlice, FastMatchesReferenceWithNegativeStepsAndClamping) {
  std::mt19937 rng(4);
  const int64_t specials[] = {INT64_MIN, INT64_MAX, -100, -3, -1, 0, 1, 2, 4, 100};
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = 1 + iter % 6;
    Shape s = random_shape(rng, rank);
    std::vector<int64_t> starts, ends, axes, steps;
    for (int d = 0; d < rank; ++d) {
      if (rng() % 3 == 0) continue;
      axes.push_back(rng() % 2 ? d : d - rank);
      starts.push_back(specials[rng() % 10]);
      ends.push_back(specials[rng() % 10]);
      int64_t st = static_cast<int64_t>(rng() % 7) - 3;
      steps.push_back(st == 0 ? 1 : st);
    }
    SlicePlan p = slice_plan(s, starts, ends, axes, steps, "test");
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor a = Tensor::zeros(dt, p.out_shape), b = Tensor::zeros(dt, p.out_shape);
      slice_cpu(x, p, a);
      slice_ref(x, p, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " -> " << shape_to_string(p.out_shape);
    }
  }
}

TEST(TensorSlice, KnownResults) {
  // numpy: x[::-1], x[-2:0:-1], x[7:], x[1:100:3]
  Tensor x = i64({6}, {0, 1, 2, 3, 4, 5});
  auto run = [&](int64_t s, int64_t e, int64_t st) {
    auto y = run_op("Slice", 13, {x, i64({1}, {s}), i64({1}, {e}), i64({1}, {0}), i64({1}, {st})});
    return std::vector<int64_t>(y[0].data_as<int64_t>(), y[0].data_as<int64_t>() + y[0].numel());
  };
  EXPECT_EQ(run(-1, INT64_MIN, -1), (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(run(-2, 0, -1), (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(run(7, 10, 1), (std::vector<int64_t>{}));
  EXPECT_EQ(run(1, 100, 3), (std::vector<int64_t>{1, 4}));
  // opset 1-9: attributes.
  auto y = run_op("Slice", 9, {x}, {{"starts", attr_ints({-3})}, {"ends", attr_ints({INT64_MAX})}});
  EXPECT_EQ(y[0].numel(), 3);
  EXPECT_EQ(y[0].data_as<int64_t>()[0], 3);
}

TEST(TensorSlice, Errors) {
  Tensor x = i64({2, 3}, {0, 1, 2, 3, 4, 5});
  std::string msg = error_of([&] {
    run_op("Slice", 13, {x, i64({1}, {0}), i64({1}, {2}), i64({1}, {1}), i64({1}, {0})});
  });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("steps"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Slice", 13, {x, i64({2}, {0, 0}), i64({2}, {1, 1}), i64({2}, {1, -1})}); });
  EXPECT_NE(msg.find("twice"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Slice", 13, {x, i64({1}, {0}), i64({1}, {1}), i64({1}, {2})}); });
  EXPECT_NE(msg.find("axis 2"), std::string::npos) << msg;
}

// ------------------------------------------------------------------ Concat / Split
TEST(TensorConcat, FastMatchesReference) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 6;
    Shape s = random_shape(rng, rank);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    const int n = 1 + static_cast<int>(rng() % 4);
    for (DType dt : kSizes) {
      std::vector<Tensor> owned;
      std::vector<const Tensor*> ins;
      for (int i = 0; i < n; ++i) {
        Shape si = s;
        si[axis] = static_cast<int64_t>(rng() % 4);
        owned.push_back(random_tensor(dt, si, rng));
      }
      for (auto& t : owned) ins.push_back(&t);
      Shape out = concat_shape(ins, axis, "test");
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      concat_cpu(ins, axis, a);
      concat_ref(ins, axis, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(out);
    }
  }
  // Large enough for the OpenMP path.
  Tensor big1 = random_tensor(DType::kFloat32, {64, 100, 7}, rng),
         big2 = random_tensor(DType::kFloat32, {64, 33, 7}, rng);
  std::vector<const Tensor*> ins = {&big1, &big2};
  Tensor a = Tensor::zeros(DType::kFloat32, {64, 133, 7}), b = Tensor::zeros(DType::kFloat32, {64, 133, 7});
  concat_cpu(ins, 1, a);
  concat_ref(ins, 1, b);
  EXPECT_TRUE(same_bytes(a, b));
}

TEST(TensorConcat, MismatchErrorNamesShapes) {
  std::string msg = error_of([&] {
    run_op("Concat", 13, {f32({2, 3}, {0, 0, 0, 0, 0, 0}), f32({2, 2}, {0, 0, 0, 0})}, {{"axis", attr_int(0)}});
  });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dimension 1"), std::string::npos) << msg;
}

TEST(TensorSplit, EqualUnevenAndInputSizes) {
  Tensor x = i64({7}, {0, 1, 2, 3, 4, 5, 6});
  auto y = run_op("Split", 18, {x}, {{"num_outputs", attr_int(3)}}, 3);
  EXPECT_EQ(y[0].numel(), 3);
  EXPECT_EQ(y[2].numel(), 1);
  EXPECT_EQ(y[2].data_as<int64_t>()[0], 6);
  y = run_op("Split", 13, {x, i64({2}, {2, 5})}, {}, 2);
  EXPECT_EQ(y[1].numel(), 5);
  EXPECT_EQ(y[1].data_as<int64_t>()[0], 2);
  y = run_op("Split", 11, {x}, {{"split", attr_ints({4, 3})}}, 2);
  EXPECT_EQ(y[0].numel(), 4);
  std::string msg = error_of([&] { run_op("Split", 13, {x}, {}, 2); });
  EXPECT_NE(msg.find("equal parts"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Split", 13, {x, i64({2}, {2, 4})}, {}, 2); });
  EXPECT_NE(msg.find("sum to 6"), std::string::npos) << msg;
  // 2-D along axis 1 with outer > 1.
  Tensor m = i64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  y = run_op("Split", 13, {m}, {{"axis", attr_int(-1)}}, 2);
  EXPECT_EQ(y[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(y[1].data_as<int64_t>()[2], 6);
}

TEST(TensorSplit, RoundTripsThroughConcatOnAwkwardShapes) {
  std::mt19937 rng(12);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 6;
    Shape s = random_shape(rng, rank);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    std::vector<int64_t> sizes;
    for (int64_t left = s[axis]; left > 0;) {
      int64_t k = 1 + static_cast<int64_t>(rng() % 3);
      k = std::min(k, left);
      sizes.push_back(k);
      left -= k;
    }
    sizes.push_back(0);  // an empty chunk
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      std::vector<Tensor> parts;
      std::vector<Tensor*> outs;
      for (int64_t k : split_sizes(s[axis], sizes, static_cast<int64_t>(sizes.size()), false, "test")) {
        Shape ps = s;
        ps[axis] = k;
        parts.push_back(Tensor::zeros(dt, ps));
      }
      for (auto& p : parts) outs.push_back(&p);
      split_cpu(x, axis, outs);
      std::vector<const Tensor*> ins(outs.begin(), outs.end());
      Tensor back = Tensor::zeros(dt, s);
      concat_ref(ins, axis, back);
      ASSERT_TRUE(same_bytes(back, x)) << shape_to_string(s) << " axis " << axis;
    }
  }
}

// ------------------------------------------------------------------ Gather family
TEST(TensorGather, FastMatchesReference) {
  std::mt19937 rng(6);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = 1 + iter % 5;
    Shape s = random_shape(rng, rank);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    if (s[axis] == 0) s[axis] = 3;
    Shape is = random_shape(rng, static_cast<int>(rng() % 3));
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor idx = index_tensor(rng() % 2 ? DType::kInt64 : DType::kInt32, is, s[axis], rng);
      Shape out = gather_shape(s, is, axis);
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      gather_cpu(x, idx, axis, a, "test", "indices");
      gather_ref(x, idx, axis, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " axis " << axis;
    }
  }
}

TEST(TensorGather, OutOfRangeErrorNamesNodeInputValueAndRange) {
  Tensor x = f32({5, 2}, std::vector<float>(10, 0.f));
  std::string msg = error_of([&] { run_op("Gather", 13, {x, i64({3}, {0, 7, 1})}); });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'indices'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-5, 4]"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Gather", 13, {x, i64({1}, {-6})}); });
  EXPECT_NE(msg.find("-6"), std::string::npos) << msg;
  // Negative indices wrap.
  auto y = run_op("Gather", 13, {f32({3}, {10, 20, 30}), i64({2}, {-1, -3})});
  EXPECT_EQ(y[0].data_as<float>()[0], 30.f);
  EXPECT_EQ(y[0].data_as<float>()[1], 10.f);
  msg = error_of([&] { run_op("Gather", 13, {x, f32({1}, {0})}); });
  EXPECT_NE(msg.find("int32 or int64"), std::string::npos) << msg;
}

TEST(TensorGatherElements, FastMatchesReference) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 5;
    Shape s = random_shape(rng, rank, false);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    Shape is = s;
    for (int d = 0; d < rank; ++d)
      is[d] = d == axis ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % (s[d] + 1));
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor idx = index_tensor(DType::kInt64, is, s[axis], rng);
      Tensor a = Tensor::zeros(dt, is), b = Tensor::zeros(dt, is);
      gather_elements_cpu(x, idx, axis, a, "test", "indices");
      gather_elements_ref(x, idx, axis, b);
      ASSERT_TRUE(same_bytes(a, b));
    }
  }
  std::string msg = error_of([&] { run_op("GatherElements", 13, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {0, 2})}); });
  EXPECT_NE(msg.find("holds 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-2, 1]"), std::string::npos) << msg;
}

TEST(TensorGatherND, FastMatchesReferenceWithBatchDims) {
  std::mt19937 rng(8);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 4;
    Shape s = random_shape(rng, rank, false);
    const int64_t b = static_cast<int64_t>(rng() % rank);
    const int64_t k = 1 + static_cast<int64_t>(rng() % (rank - b));
    Shape is(s.begin(), s.begin() + b);
    for (int64_t extra = rng() % 3; extra > 0; --extra) is.push_back(static_cast<int64_t>(rng() % 4));
    is.push_back(k);
    Tensor idx = Tensor::allocate(DType::kInt64, is);
    for (int64_t i = 0; i < idx.numel(); ++i) {
      const int64_t dim = s[b + i % k];
      idx.data_as<int64_t>()[i] = static_cast<int64_t>(rng() % (2 * dim)) - dim;
    }
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Shape out = gather_nd_shape(s, is, b, "test");
      Tensor a1 = Tensor::zeros(dt, out), b1 = Tensor::zeros(dt, out);
      gather_nd_cpu(x, idx, b, a1, "test", "indices");
      gather_nd_ref(x, idx, b, b1);
      ASSERT_TRUE(same_bytes(a1, b1));
    }
  }
  std::string msg = error_of([&] { run_op("GatherND", 13, {f32({2, 3}, {0, 0, 0, 0, 0, 0}), i64({1, 2}, {1, 3})}); });
  EXPECT_NE(msg.find("holds 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-3, 2]"), std::string::npos) << msg;
}

TEST(TensorScatter, ReductionsAndErrors) {
  Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = i64({1, 2}, {1, 1});
  Tensor up = f32({1, 2}, {1.1f, 2.1f});
  auto y = run_op("ScatterElements", 18, {data, idx, up}, {{"axis", attr_int(1)}, {"reduction", attr_str("add")}});
  EXPECT_FLOAT_EQ(y[0].data_as<float>()[1], 5.2f);
  y = run_op("ScatterElements", 18, {data, idx, up}, {{"axis", attr_int(1)}, {"reduction", attr_str("max")}});
  EXPECT_FLOAT_EQ(y[0].data_as<float>()[1], 2.1f);
  std::string msg = error_of([&] {
    run_op("ScatterElements", 16, {data, idx, up}, {{"axis", attr_int(1)}, {"reduction", attr_str("max")}});
  });
  EXPECT_NE(msg.find("opset 18"), std::string::npos) << msg;
  msg = error_of([&] { run_op("ScatterElements", 13, {data, i64({1, 2}, {1, 5}), up}, {{"axis", attr_int(1)}}); });
  EXPECT_NE(msg.find("holds 5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'indices'"), std::string::npos) << msg;
  Tensor d2 = f32({4}, {1, 2, 3, 4});
  y = run_op("ScatterND", 16, {d2, i64({2, 1}, {0, 0}), f32({2}, {10, 20})}, {{"reduction", attr_str("mul")}});
  EXPECT_FLOAT_EQ(y[0].data_as<float>()[0], 200.f);
  msg = error_of([&] { run_op("ScatterND", 13, {d2, i64({1, 1}, {-5}), f32({1}, {1})}); });
  EXPECT_NE(msg.find("holds -5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-4, 3]"), std::string::npos) << msg;
}

// ------------------------------------------------------------------ Pad
TEST(TensorPad, FastMatchesReferenceAllModes) {
  std::mt19937 rng(9);
  const PadMode modes[] = {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge, PadMode::kWrap};
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = iter % 6;
    const PadMode mode = modes[rng() % 4];
    Shape s = random_shape(rng, rank, mode == PadMode::kConstant);
    std::vector<int64_t> pads(2 * rank);
    for (int d = 0; d < rank; ++d) {
      int64_t lo = static_cast<int64_t>(rng() % 8) - 2, hi = static_cast<int64_t>(rng() % 8) - 2;
      // Crop at most the size, and keep one element for non-constant modes.
      const int64_t keep = mode == PadMode::kConstant ? 0 : 1;
      while (std::max<int64_t>(0, -lo) + std::max<int64_t>(0, -hi) > s[d] - keep) {
        if (lo < 0)
          ++lo;
        else
          ++hi;
      }
      pads[d] = lo;
      pads[d + rank] = hi;
    }
    PadPlan p = pad_plan(s, pads, {}, mode, "test");
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      uint64_t value = 0x0123456789abcdefull;
      Tensor a = Tensor::zeros(dt, p.out_shape), b = Tensor::zeros(dt, p.out_shape);
      pad_cpu(x, p, &value, a);
      pad_ref(x, p, &value, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " mode " << static_cast<int>(mode);
    }
  }
}

TEST(TensorPad, KnownNumpyResultsAndErrors) {
  Tensor x = i64({3}, {1, 2, 3});
  auto pad1 = [&](const char* mode, int64_t lo, int64_t hi, int opset = 19) {
    auto y = run_op("Pad", opset, {x, i64({2}, {lo, hi})}, {{"mode", attr_str(mode)}});
    return std::vector<int64_t>(y[0].data_as<int64_t>(), y[0].data_as<int64_t>() + y[0].numel());
  };
  // np.pad([1,2,3], (5,2), 'reflect') / 'edge'; wrap is periodic (numpy 1.24 gives [2, 1, 2, ...] for
  // (4, 2) because it pads both sides in rounds; ONNX Runtime takes x mod n, as we do).
  EXPECT_EQ(pad1("reflect", 5, 2), (std::vector<int64_t>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(pad1("edge", 2, 1), (std::vector<int64_t>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(pad1("wrap", 4, 2), (std::vector<int64_t>{3, 1, 2, 3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(pad1("constant", -1, 2), (std::vector<int64_t>{2, 3, 0, 0}));
  // opset 2-10: attributes, float value cast to the element type.
  auto y = run_op("Pad", 10, {f32({2}, {1, 2})}, {{"pads", attr_ints({1, 0})}, {"value", attr_float(7.5f)}});
  EXPECT_EQ(y[0].data_as<float>()[0], 7.5f);
  // opset 18: axes.
  y = run_op("Pad", 18, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 0}), f32({}, {9}), i64({1}, {-1})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(y[0].data_as<float>()[3], 9.f);
  std::string msg = error_of([&] { pad1("wrap", 1, 1, 18); });
  EXPECT_NE(msg.find("opset 19"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Pad", 13, {x, i64({3}, {1, 1, 1})}); });
  EXPECT_NE(msg.find("pads"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Pad", 13, {i64({0}, {}), i64({2}, {1, 1})}, {{"mode", attr_str("edge")}}); });
  EXPECT_NE(msg.find("size 0"), std::string::npos) << msg;
}

// ------------------------------------------------------------------ Expand / Tile
TEST(TensorExpandTile, FastMatchesReference) {
  std::mt19937 rng(10);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = iter % 5;
    Shape s = random_shape(rng, rank);
    Shape target(rank + rng() % 2);
    for (size_t d = 0; d < target.size(); ++d) {
      const size_t pad = target.size() - rank;
      target[d] =
          d < pad ? static_cast<int64_t>(rng() % 3) : (s[d - pad] == 1 ? static_cast<int64_t>(rng() % 4) : s[d - pad]);
    }
    std::vector<int64_t> reps(rank);
    for (auto& r : reps) r = static_cast<int64_t>(rng() % 4);
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Shape out = broadcast_shape(s, target, "test");
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      expand_cpu(x, a);
      expand_ref(x, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " -> " << shape_to_string(out);
      Shape ts = tile_shape(s, reps, "test");
      Tensor c = Tensor::zeros(dt, ts), e = Tensor::zeros(dt, ts);
      tile_cpu(x, reps, c);
      tile_ref(x, reps, e);
      ASSERT_TRUE(same_bytes(c, e)) << shape_to_string(s) << " tiled";
    }
  }
  std::string msg = error_of([&] { run_op("Expand", 13, {f32({3}, {1, 2, 3}), i64({1}, {4})}); });
  EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;
}

// ------------------------------------------------------------------ shape ops
TEST(TensorShapeOps, ReshapeRulesAndZeroCopy) {
  Tensor x = f32({2, 3, 4}, std::vector<float>(24, 1.f));
  auto y = run_op("Reshape", 13, {x, i64({3}, {0, -1, 2})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(y[0].data(), x.data());  // aliasing, no copy
  Tensor empty = f32({0, 3}, {});
  y = run_op("Reshape", 14, {empty, i64({2}, {3, 0})}, {{"allowzero", attr_int(1)}});
  EXPECT_EQ(y[0].shape(), (Shape{3, 0}));
  // Without allowzero the 0 copies dim 1 (3): [3, 3] has 9 elements, not 0.
  std::string msg = error_of([&] { run_op("Reshape", 14, {empty, i64({2}, {3, 0})}); });
  EXPECT_NE(msg.find("cannot reshape"), std::string::npos) << msg;
}

TEST(TensorShapeOps, ReshapeErrors) {
  Tensor x = f32({2, 3}, std::vector<float>(6, 1.f));
  std::string msg = error_of([&] { run_op("Reshape", 13, {x, i64({2}, {-1, -1})}); });
  EXPECT_NE(msg.find("more than one -1"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({2}, {4, -1})}); });
  EXPECT_NE(msg.find("cannot reshape"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 14, {x, i64({2}, {0, -1})}, {{"allowzero", attr_int(1)}}); });
  EXPECT_NE(msg.find("allowzero"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({3}, {1, 1, 0})}); });
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
  // Requested sizes whose product overflows int64 (found by fuzz_run): an error, not UB.
  const int64_t big = int64_t(1) << 40;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({3}, {big, big, -1})}); });
  EXPECT_NE(msg.find("overflows int64"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({2}, {big, big})}); });
  EXPECT_NE(msg.find("overflows int64"), std::string::npos) << msg;
}

TEST(TensorShapeOps, SqueezeUnsqueezeFlattenShapeSize) {
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run_op("Squeeze", 13, {x})[0].shape(), (Shape{3}));
  EXPECT_EQ(run_op("Squeeze", 13, {x, i64({1}, {-1})})[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(run_op("Squeeze", 11, {x}, {{"axes", attr_ints({0})}})[0].shape(), (Shape{3, 1}));
  std::string msg = error_of([&] { run_op("Squeeze", 13, {x, i64({1}, {1})}); });
  EXPECT_NE(msg.find("not 1"), std::string::npos) << msg;
  EXPECT_EQ(run_op("Unsqueeze", 13, {x, i64({2}, {0, -1})})[0].shape(), (Shape{1, 1, 3, 1, 1}));
  EXPECT_EQ(run_op("Unsqueeze", 11, {x}, {{"axes", attr_ints({1})}})[0].shape(), (Shape{1, 1, 3, 1}));
  msg = error_of([&] { run_op("Unsqueeze", 13, {x, i64({2}, {0, 0})}); });
  EXPECT_NE(msg.find("twice"), std::string::npos) << msg;
  EXPECT_EQ(run_op("Flatten", 13, {x}, {{"axis", attr_int(-1)}})[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(run_op("Flatten", 13, {x}, {{"axis", attr_int(0)}})[0].shape(), (Shape{1, 3}));
  auto s = run_op("Shape", 15, {x}, {{"start", attr_int(-2)}})[0];
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.shape(), (Shape{2}));
  EXPECT_EQ(s.data_as<int64_t>()[0], 3);
  EXPECT_EQ(run_op("Shape", 15, {x}, {{"start", attr_int(2)}, {"end", attr_int(1)}})[0].numel(), 0);
  auto n = run_op("Size", 13, {x})[0];
  EXPECT_EQ(n.rank(), 0u);
  EXPECT_EQ(*n.data_as<int64_t>(), 3);
}

TEST(TensorShapeOps, ConstantRangeNonZeroOneHot) {
  auto c = run_op("Constant", 13, {}, {{"value_ints", attr_ints({4, 5})}})[0];
  EXPECT_EQ(c.shape(), (Shape{2}));
  auto cs = run_op("ConstantOfShape", 20, {i64({2}, {2, 3})}, {{"value", attr_tensor(i64({1}, {7}))}})[0];
  EXPECT_EQ(cs.shape(), (Shape{2, 3}));
  EXPECT_EQ(cs.data_as<int64_t>()[5], 7);
  auto r = run_op("Range", 11, {i64({}, {10}), i64({}, {4}), i64({}, {-3})})[0];
  EXPECT_EQ(r.numel(), 2);
  EXPECT_EQ(r.data_as<int64_t>()[1], 7);
  std::string msg = error_of([&] { run_op("Range", 11, {i64({}, {0}), i64({}, {4}), i64({}, {0})}); });
  EXPECT_NE(msg.find("delta"), std::string::npos) << msg;
  auto nz = run_op("NonZero", 13, {f32({2, 2}, {1, 0, 0, 3})})[0];
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  EXPECT_EQ(nz.data_as<int64_t>()[1], 1);  // row of the second non-zero
  auto oh = run_op("OneHot", 11, {i64({3}, {0, -1, 5}), i64({}, {3}), f32({2}, {0, 1})})[0];
  EXPECT_EQ(oh.shape(), (Shape{3, 3}));
  EXPECT_EQ(oh.data_as<float>()[0], 1.f);
  EXPECT_EQ(oh.data_as<float>()[5], 1.f);
  for (int i = 6; i < 9; ++i) EXPECT_EQ(oh.data_as<float>()[i], 0.f);  // out of range: all off
}

TEST(TensorShapeOps, MoreErrorPathsNameTheNode) {
  auto expect_error = [](const std::function<void()>& f, const char* needle) {
    std::string msg = error_of(f);
    EXPECT_NE(msg.find("node 'n1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  Tensor x = f32({2, 3}, std::vector<float>(6, 0.f));
  expect_error([&] { run_op("Tile", 13, {x, i64({1}, {2})}); }, "rank 2");
  expect_error([&] { run_op("Tile", 13, {x, i64({2}, {1, -1})}); }, "negative");
  expect_error([&] { run_op("Expand", 13, {x, i64({2}, {2, -3})}); }, "negative");
  expect_error([&] { run_op("ConstantOfShape", 9, {i64({2}, {2, -1})}); }, "negative");
  expect_error([&] { run_op("OneHot", 11, {i64({1}, {0}), i64({}, {0}), f32({2}, {0, 1})}); }, "depth");
  expect_error([&] { run_op("OneHot", 11, {i64({1}, {0}), i64({}, {2}), f32({3}, {0, 1, 2})}); }, "values");
  expect_error([&] { run_op("Concat", 13, {x, i64({2, 3}, {0, 0, 0, 0, 0, 0})}, {{"axis", attr_int(0)}}); }, "int64");
  expect_error([&] { run_op("Concat", 13, {x}, {{"axis", attr_int(2)}}); }, "axis 2");
  expect_error([&] { run_op("Flatten", 13, {x}, {{"axis", attr_int(3)}}); }, "'axis'");
  expect_error([&] { run_op("Pad", 13, {x, i64({4}, {0, 0, 0, 0})}, {{"mode", attr_str("mirror")}}); }, "mirror");
  expect_error([&] { run_op("GatherND", 13, {x, i64({1, 3}, {0, 0, 0})}); }, "last dimension");
  expect_error([&] { run_op("ScatterND", 13, {x, i64({1, 1}, {0}), f32({1, 2}, {0, 0})}); }, "updates");
  expect_error([&] { run_op("Split", 18, {x}, {{"num_outputs", attr_int(3)}}, 2); }, "num_outputs");
  expect_error([&] { run_op("Range", 11, {i64({}, {0}), i64({2}, {4, 5}), i64({}, {1})}); }, "scalar");
}

TEST(TensorShapeOps, ShapeAndSizeReadOnlyTheShape) {
  // Constant folding feeds Shape/Size a placeholder without data for statically shaped values.
  Tensor placeholder = Tensor::wrap(DType::kFloat32, {4, 0, 7}, nullptr);
  auto s = run_op("Shape", 13, {placeholder})[0];
  EXPECT_EQ(s.data_as<int64_t>()[2], 7);
  EXPECT_EQ(*run_op("Size", 13, {placeholder})[0].data_as<int64_t>(), 0);
}

// Every op of the family has rows with no gaps from its first opset (>= 7) up to 21.
TEST(TensorTable, RowsCoverOpsetsWithoutGaps) {
  const char* ops[] = {"Concat", "ConstantOfShape", "Constant", "Expand",  "Flatten",
                       "Gather", "GatherElements",  "GatherND", "Reshape", "Shape",
                       "Size",   "Slice",           "Split",    "Squeeze", "Unsqueeze",
                       "Tile",   "Transpose",       "Pad",      "Range",   "NonZero",
                       "OneHot", "ScatterElements", "ScatterND"};
  for (const char* op : ops) {
    auto rows = op_table().find_all("", op);
    ASSERT_FALSE(rows.empty()) << op;
    int first = 99;
    for (auto* e : rows) first = std::min(first, e->since);
    for (int v = first; v <= 21; ++v) EXPECT_NE(op_table().find("", op, v), nullptr) << op << " opset " << v;
  }
}
