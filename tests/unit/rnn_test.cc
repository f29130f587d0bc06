// RNN, GRU and LSTM: the GEMM kernel and the oneDNN path against the reference on awkward sizes
// (T, N, I, H of 0, 1, odd and around the vector width) and every attribute (directions,
// activations with alpha/beta, clip, input_forget, linear_before_reset, layout, sequence_lens
// with 0 and full lengths, initial states, peepholes, constant or fed weights), plus errors.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "io/tensor_compare.h"
#include "ops/kernel.h"
#include "ops/onnx/rnn/rnn.h"
#include "support/kernel_runner.h"

using namespace pointrt;
using namespace pointrt::rnn;

namespace {

using pointrt::test::HeapAllocator;

struct RnnCase {
  Cell cell = Cell::kLstm;
  std::string direction = "forward";
  int64_t T = 3, N = 2, I = 5, H = 4;
  int64_t layout = 0;
  bool bias = true, lens = false, h0 = false, c0 = false, peepholes = false, constant_weights = true;
  std::vector<std::string> activations;
  std::vector<float> alphas, betas;
  float clip = 0;  // 0 = none
  bool input_forget = false, linear_before_reset = false;
  int outputs = 3;  // how many of Y, Y_h, Y_c the node names (LSTM; 2 for the others)
  DType dtype = DType::kFloat32;
  uint32_t seed = 1;

  std::string name() const {
    return str_cat(cell_name(cell), " ", direction, " T", T, " N", N, " I", I, " H", H, " layout", layout,
                   bias ? " B" : "", lens ? " lens" : "", h0 ? " h0" : "", c0 ? " c0" : "", peepholes ? " P" : "",
                   clip > 0 ? " clip" : "", input_forget ? " input_forget" : "", linear_before_reset ? " lbr" : "",
                   activations.empty() ? "" : " " + activations[0], constant_weights ? "" : " fed");
  }
};

Tensor random(DType dt, const Shape& s, std::mt19937& gen, double scale = 1.0) {
  Tensor t = Tensor::allocate(dt, s);
  std::uniform_real_distribution<double> u(-scale, scale);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::kFloat64)
      t.data_as<double>()[i] = u(gen);
    else
      t.data_as<float>()[i] = static_cast<float>(u(gen));
  }
  return t;
}

struct Built {
  Graph graph;
  std::vector<Tensor> inputs;  // undefined = absent
};

Built build(const RnnCase& c) {
  std::mt19937 gen(c.seed);
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, G = gate_count(c.cell);
  const bool lstm = c.cell == Cell::kLstm;
  Built b;
  b.inputs.resize(lstm ? 8 : 6);
  b.inputs[0] = random(c.dtype, c.layout == 0 ? Shape{c.T, c.N, c.I} : Shape{c.N, c.T, c.I}, gen);
  // Weights ~ 1/sqrt(fan-in) keep the recurrence from amplifying rounding differences.
  auto scale = [](int64_t fan_in) {
    return std::min(0.7, 2.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fan_in, 1))));
  };
  b.inputs[1] = random(c.dtype, {D, G * c.H, c.I}, gen, scale(c.I));
  b.inputs[2] = random(c.dtype, {D, G * c.H, c.H}, gen, scale(c.H));
  if (c.bias) b.inputs[3] = random(c.dtype, {D, 2 * G * c.H}, gen, 0.5);
  if (c.lens) {
    b.inputs[4] = Tensor::allocate(DType::kInt32, {c.N});
    for (int64_t n = 0; n < c.N; ++n)  // 0, T and values between
      b.inputs[4].data_as<int32_t>()[n] = static_cast<int32_t>(n == 0 ? 0 : n == 1 ? c.T : gen() % (c.T + 1));
  }
  const Shape state = c.layout == 0 ? Shape{D, c.N, c.H} : Shape{c.N, D, c.H};
  if (c.h0) b.inputs[5] = random(c.dtype, state, gen);
  if (lstm && c.c0) b.inputs[6] = random(c.dtype, state, gen);
  if (lstm && c.peepholes) b.inputs[7] = random(c.dtype, {D, 3 * c.H}, gen, 0.5);
  Node n;
  n.name = "rnn0";
  n.op_type = cell_name(c.cell);
  n.opset = 14;
  auto& a = n.attrs.items;
  a["direction"] = Attribute::make_string(c.direction);
  a["hidden_size"] = Attribute::make_int(c.H);
  a["layout"] = Attribute::make_int(c.layout);
  if (!c.activations.empty()) {
    Attribute s;
    s.kind = Attribute::Kind::kStrings;
    s.strings = c.activations;
    a["activations"] = s;
  }
  if (!c.alphas.empty()) a["activation_alpha"] = Attribute::make_floats(c.alphas);
  if (!c.betas.empty()) a["activation_beta"] = Attribute::make_floats(c.betas);
  if (c.clip > 0) a["clip"] = Attribute::make_float(c.clip);
  if (c.input_forget) a["input_forget"] = Attribute::make_int(1);
  if (c.linear_before_reset) a["linear_before_reset"] = Attribute::make_int(1);
  n.attrs.owner = n.describe();
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    if (!b.inputs[i].defined()) {
      n.inputs.push_back(-1);
      continue;
    }
    int id = b.graph.add_value("in" + std::to_string(i));
    Value& v = b.graph.values[id];
    v.dtype = b.inputs[i].dtype();
    v.has_shape = true;
    for (int64_t d : b.inputs[i].shape()) v.shape.push_back(Dim{d, ""});
    const bool weight = i == 1 || i == 2 || i == 3 || i == 7;
    if (weight && c.constant_weights) v.constant = b.inputs[i];
    n.inputs.push_back(id);
  }
  const int outs = std::min(c.outputs, lstm ? 3 : 2);
  for (int o = 0; o < outs; ++o) n.outputs.push_back(b.graph.add_value("out" + std::to_string(o)));
  b.graph.nodes.push_back(n);
  return b;
}

std::vector<Tensor> run_kernel(const Built& b, const OpKernel& kernel) {
  const Node& n = b.graph.nodes[0];
  std::vector<const Tensor*> ins;
  for (const Tensor& t : b.inputs) ins.push_back(t.defined() ? &t : nullptr);
  std::vector<Tensor> outs(n.outputs.size());
  HeapAllocator alloc;
  RunCache cache;
  KernelContext ctx(n, ins, outs, alloc, cache);
  kernel.run(ctx);
  return outs;
}

std::vector<Tensor> run(const Built& b, Cell cell, RnnPath path) {
  return run_kernel(b, *make_rnn_kernel(KernelInit{b.graph.nodes[0], b.graph}, cell, path));
}

void check_paths(const RnnCase& c) {
  SCOPED_TRACE(c.name());
  Built b = build(c);
  std::vector<Tensor> ref = run(b, c.cell, RnnPath::kReference);
  for (RnnPath path : {RnnPath::kGemm, RnnPath::kDnnl, RnnPath::kAuto}) {
    std::vector<Tensor> got = run(b, c.cell, path);
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      CompareResult r = compare_tensors(got[i], ref[i], 2e-5, 1e-4);
      EXPECT_TRUE(r.ok) << "path " << static_cast<int>(path) << " output " << i << ": " << r.message;
    }
  }
}

RnnCase make(Cell cell, int64_t T, int64_t N, int64_t I, int64_t H) {
  RnnCase c;
  c.cell = cell;
  c.T = T, c.N = N, c.I = I, c.H = H;
  c.seed = static_cast<uint32_t>(T * 1000 + N * 100 + I * 10 + H);
  return c;
}

const Cell kCells[] = {Cell::kRnn, Cell::kGru, Cell::kLstm};

TEST(Rnn, AwkwardSizesEveryDirection) {
  const int64_t sizes[][4] = {{1, 1, 1, 1},   {3, 2, 5, 4}, {7, 5, 3, 15}, {2, 3, 17, 16},
                              {4, 1, 16, 17}, {0, 2, 3, 4}, {3, 0, 3, 4},  {3, 2, 0, 4}};
  for (Cell cell : kCells)
    for (const auto& s : sizes)
      for (const char* dir : {"forward", "reverse", "bidirectional"}) {
        RnnCase c = make(cell, s[0], s[1], s[2], s[3]);
        c.direction = dir;
        check_paths(c);
      }
}

TEST(Rnn, StatesLengthsLayoutAndPeepholes) {
  for (Cell cell : kCells)
    for (int64_t layout : {0, 1})
      for (int variant = 0; variant < 4; ++variant) {
        RnnCase c = make(cell, 5, 4, 6, 7);
        c.layout = layout;
        c.direction = variant % 2 ? "bidirectional" : "reverse";
        c.lens = variant >= 2;
        c.h0 = variant != 1;
        c.c0 = variant == 1 || variant == 3;  // LSTM given only one of the two states, too
        c.peepholes = variant >= 1;
        c.bias = variant != 2;
        c.constant_weights = variant != 3;
        check_paths(c);
      }
}

TEST(Rnn, OutputSubsets) {
  for (Cell cell : kCells)
    for (int outputs = 1; outputs <= 3; ++outputs) {
      RnnCase c = make(cell, 4, 3, 5, 6);
      c.outputs = outputs;
      c.h0 = true;
      check_paths(c);
    }
}

TEST(Rnn, ActivationsClipAndCellOptions) {
  struct Acts {
    std::vector<std::string> names;
    std::vector<float> alphas, betas;
  };
  const std::vector<Acts> sets = {
      {{"Relu"}, {}, {}},
      {{"LeakyRelu"}, {0.3f}, {}},
      {{"Sigmoid"}, {}, {}},
      {{"HardSigmoid", "Elu", "Softsign"}, {0.3f, 0.7f}, {0.4f}},
      {{"Affine", "ScaledTanh", "ThresholdedRelu"}, {0.5f, 1.5f, 0.1f}, {0.2f, 0.8f}},
      {{"softplus", "TANH", "sigmoid"}, {}, {}},
  };
  for (Cell cell : kCells)
    for (const Acts& s : sets) {
      RnnCase c = make(cell, 4, 3, 5, 6);
      const size_t per = static_cast<size_t>(activation_count(cell));
      c.activations.assign(s.names.begin(), s.names.begin() + std::min(per, s.names.size()));
      while (c.activations.size() < per) c.activations.push_back("Tanh");
      c.alphas = s.alphas;
      c.betas = s.betas;
      c.h0 = true;
      check_paths(c);
      c.direction = "bidirectional";  // one list serves both directions
      check_paths(c);
    }
  for (Cell cell : kCells) {
    RnnCase c = make(cell, 6, 3, 4, 5);
    c.clip = 0.4f;
    c.direction = "bidirectional";
    check_paths(c);
  }
  RnnCase lstm = make(Cell::kLstm, 5, 3, 4, 6);
  lstm.input_forget = true;
  lstm.peepholes = true;
  check_paths(lstm);
  for (const char* dir : {"forward", "bidirectional"}) {
    RnnCase gru = make(Cell::kGru, 5, 3, 4, 6);
    gru.linear_before_reset = true;
    gru.direction = dir;
    gru.h0 = true;
    check_paths(gru);
    gru.lens = true;
    check_paths(gru);
  }
}

// One kernel (its oneDNN plans and packed weights made on first use) run from several threads.
TEST(Rnn, ConcurrentRunsAgree) {
  for (Cell cell : kCells)
    for (RnnPath path : {RnnPath::kGemm, RnnPath::kDnnl}) {
      RnnCase c = make(cell, 6, 4, 8, 16);
      c.direction = "bidirectional";
      Built b = build(c);
      auto kernel = make_rnn_kernel(KernelInit{b.graph.nodes[0], b.graph}, cell, path);
      std::vector<std::vector<Tensor>> results(4);
      std::vector<std::thread> threads;
      for (auto& r : results) threads.emplace_back([&] { r = run_kernel(b, *kernel); });
      for (auto& t : threads) t.join();
      std::vector<Tensor> ref = run(b, cell, RnnPath::kReference);
      for (const auto& r : results)
        for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(compare_tensors(r[i], ref[i], 2e-5, 1e-4).ok);
    }
}

// float64 runs the reference in double: it must agree with the float32 kernels on the same data.
TEST(Rnn, DoubleAgreesWithFloat) {
  for (Cell cell : kCells) {
    RnnCase c = make(cell, 3, 2, 3, 4);
    c.direction = "bidirectional";
    c.h0 = true;
    std::vector<Tensor> single = run(build(c), cell, RnnPath::kAuto);
    c.dtype = DType::kFloat64;
    std::vector<Tensor> dbl = run(build(c), cell, RnnPath::kAuto);
    ASSERT_EQ(single.size(), dbl.size());
    for (size_t i = 0; i < dbl.size(); ++i) {
      ASSERT_EQ(dbl[i].dtype(), DType::kFloat64);
      for (int64_t k = 0; k < dbl[i].numel(); ++k)
        EXPECT_NEAR(dbl[i].data_as<double>()[k], single[i].data_as<float>()[k], 1e-5) << cell_name(cell);
    }
  }
}

// A hand-checked value: one step of a 1-unit LSTM, all weights 0.5, x = 1, no bias:
// i = f = o = sigmoid(0.5), c~ = tanh(0.5), C = i * c~, H = o * tanh(C).
TEST(Rnn, OneStepByHand) {
  RnnCase c = make(Cell::kLstm, 1, 1, 1, 1);
  c.bias = false;
  Built b = build(c);
  for (int i : {0, 1, 2}) std::fill_n(b.inputs[i].data_as<float>(), b.inputs[i].numel(), i == 0 ? 1.0f : 0.5f);
  // (the graph's constants share storage with b.inputs, so they see the same values)
  const double s = 1.0 / (1.0 + std::exp(-0.5)), cell = s * std::tanh(0.5), h = s * std::tanh(cell);
  for (RnnPath path : {RnnPath::kReference, RnnPath::kGemm, RnnPath::kDnnl}) {
    std::vector<Tensor> out = run(b, Cell::kLstm, path);
    EXPECT_NEAR(out[0].data_as<float>()[0], h, 1e-6);
    EXPECT_NEAR(out[1].data_as<float>()[0], h, 1e-6);
    EXPECT_NEAR(out[2].data_as<float>()[0], cell, 1e-6);
  }
}

void expect_error(const RnnCase& c, int input, const Shape& shape, const std::string& fragment) {
  Built b = build(c);
  std::mt19937 gen(7);
  if (input == 4) {
    b.inputs[4] = Tensor::zeros(DType::kInt32, shape);
    b.inputs[4].data_as<int32_t>()[0] = static_cast<int32_t>(c.T + 1);
  } else {
    b.inputs[input] = random(DType::kFloat32, shape, gen);
  }
  for (Value& v : b.graph.values) v.constant.reset();
  try {
    run(b, c.cell, RnnPath::kAuto);
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("node 'rnn0'"), std::string::npos) << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Rnn, BadInputsNameTheNodeAndTheInput) {
  RnnCase c = make(Cell::kLstm, 3, 2, 5, 4);
  c.lens = true;
  expect_error(c, 1, {1, 16, 6}, "input W has shape [1, 16, 6]; expected [1, 16, 5]");
  expect_error(c, 2, {1, 12, 4}, "input R has shape [1, 12, 4]; expected [1, 16, 4]");
  expect_error(c, 3, {1, 16}, "input B has shape [1, 16]; expected [1, 32]");
  expect_error(c, 4, {2}, "input sequence_lens[0] = 4 is outside [0, 3]");
  expect_error(c, 5, {2, 2, 4}, "input initial_h has shape [2, 2, 4]; expected [1, 2, 4]");
  expect_error(c, 0, {3, 2}, "input X must be 3-D");
  RnnCase bad = c;
  bad.activations = {"Sigmoid", "Swish", "Tanh"};
  try {
    Built b = build(bad);
    make_rnn_kernel(KernelInit{b.graph.nodes[0], b.graph}, Cell::kLstm);
    ADD_FAILURE() << "unknown activation accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("activation 'Swish' is not one of"), std::string::npos) << e.what();
  }
}

}  // namespace
