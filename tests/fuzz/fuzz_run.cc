// libFuzzer target: fuzzed feeds for a set of small models (tests/fuzz/fuzz_models.h). A run may
// fail only with pointrt::Error; a crash, hang, leak, sanitizer report or any other exception is a
// bug. Input format (tests/fuzz/make_corpus.py writes seeds in it):
//   byte 0: model (mod the number of models)
//   then one byte per symbolic dimension, in order of first appearance over the inputs: its
//   value, 0..63
//   then per input, one mode byte and the data: mode % 3 == 0 small values (float: int8 / 8,
//   int: byte % 16), 1 raw little-endian values, 2 special floats (NaN, +-Inf, -0, huge, tiny)
//   / raw int8 for integers. Data missing at the end reads as zeros.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>

#include "fuzz/fuzz_models.h"

namespace {

using namespace pointrt;

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  template <typename T>
  T raw() {
    uint8_t buf[sizeof(T)] = {};
    for (auto& b : buf) b = byte();
    T v;
    std::memcpy(&v, buf, sizeof(T));
    return v;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

struct Prepared {
  std::vector<ValueInfo> inputs;
  std::unique_ptr<Session> session;
};

std::vector<Prepared>& prepared_models() {
  static std::vector<Prepared> models = [] {
    std::vector<Prepared> r;
    SessionOptions o;
    o.intra_op_threads = 1;
    o.max_tensor_bytes = size_t(16) << 20;  // fuzzed shapes must not exhaust the fuzzer's memory
    for (auto& m : fuzz::fuzz_models()) {
      Prepared p;
      p.session = std::make_unique<Session>(m.builder.load(m.name + ".onnx"), o);
      p.inputs = p.session->inputs();
      r.push_back(std::move(p));
    }
    return r;
  }();
  return models;
}

float special_float(uint8_t b) {
  static const float table[] = {NAN, INFINITY, -INFINITY, -0.f, 3e38f, -3e38f, 1e-45f, 1.f};
  return table[b % 8];
}

void fill(Tensor& t, ByteReader& in) {
  uint8_t mode = in.byte() % 3;
  int64_t n = t.numel();
  if (t.dtype() == DType::kFloat32) {
    float* p = t.data_as<float>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = mode == 0 ? static_cast<int8_t>(in.byte()) / 8.f : mode == 1 ? in.raw<float>() : special_float(in.byte());
  } else if (t.dtype() == DType::kInt64) {
    int64_t* p = t.data_as<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = mode == 0 ? in.byte() % 16 : mode == 1 ? in.raw<int64_t>() : static_cast<int8_t>(in.byte());
  } else if (t.dtype() == DType::kInt32) {
    int32_t* p = t.data_as<int32_t>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = mode == 0 ? in.byte() % 16 : mode == 1 ? in.raw<int32_t>() : static_cast<int8_t>(in.byte());
  }
}

std::map<std::string, Tensor> make_feeds(const std::vector<ValueInfo>& inputs, ByteReader& in) {
  std::map<std::string, int64_t> symbols;
  for (const auto& v : inputs)
    for (const auto& d : v.shape)
      if (!d.symbol.empty() && !symbols.count(d.symbol)) symbols[d.symbol] = in.byte() % 64;
  std::map<std::string, Tensor> feeds;
  for (const auto& v : inputs) {
    Shape s;
    for (const auto& d : v.shape) s.push_back(d.is_fixed() ? d.value : symbols[d.symbol]);
    Tensor t = Tensor::zeros(v.dtype, s);
    fill(t, in);
    feeds[v.name] = t;
  }
  return feeds;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto& models = prepared_models();
    ByteReader in(data, size);
    Prepared& m = models[in.byte() % models.size()];
    auto feeds = make_feeds(m.inputs, in);
    m.session->run(feeds);
  } catch (const pointrt::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_run: an exception that is not a pointrt::Error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
