// Operator table rows of the ONNX recurrent family (RNN, GRU, LSTM; contract in rnn.h).
#include "ops/families.h"
#include "ops/onnx/rnn/rnn.h"

#include <cstdlib>
#include <string>

namespace pointrt::rnn {
namespace {
// POINTRT_RNN=reference|gemm|dnnl forces one implementation (for benchmarks); unset = automatic.
rnn::RnnPath path_from_environment() {
  const char* v = std::getenv("POINTRT_RNN");
  const std::string s = v ? v : "";
  return s == "reference" ? rnn::RnnPath::kReference
         : s == "gemm"    ? rnn::RnnPath::kGemm
         : s == "dnnl"    ? rnn::RnnPath::kDnnl
                          : rnn::RnnPath::kAuto;
}
}  // namespace
}  // namespace pointrt::rnn

namespace pointrt {

Family register_onnx_rnn() {
  Family family{"onnx/rnn"};
  OpTable& t = family.rows;
  using rnn::Cell;
  auto factory = [](Cell cell) {
    return [cell](const KernelInit& init) { return rnn::make_rnn_kernel(init, cell, rnn::path_from_environment()); };
  };
  const char* common = "directions, every activation with alpha/beta, clip, sequence_lens, initial states, layout";
  t.add({"", "RNN", 1, 21, kFloatTypes, factory(Cell::kRnn),
         str_cat(common,
                 "; oneDNN primitive for Tanh/Relu/LeakyRelu/Sigmoid, no clip, full-length rows; else GEMM kernel")});
  t.add(
      {"", "GRU", 1, 21, kFloatTypes, factory(Cell::kGru),
       str_cat(common, ", linear_before_reset; oneDNN primitive for default activations, no clip, full-length rows")});
  t.add({"", "LSTM", 1, 21, kFloatTypes, factory(Cell::kLstm),
         str_cat(common,
                 ", input_forget, peepholes; oneDNN primitive for default activations, no clip/input_forget, "
                 "full-length rows")});
  return family;
}
}  // namespace pointrt
