// The RNN/GRU/LSTM kernel: attributes decoded at prepare time, inputs checked per run, then the
// reference, the oneDNN primitive or the GEMM kernel (rnn.h RnnPath says which runs when).
#include "ops/onnx/rnn/rnn.h"
#include "ops/onnx/rnn/rnn_dnnl.h"
#include "ops/onnx/rnn/rnn_packed.h"

namespace pointrt::rnn {
namespace {

class RnnKernel : public OpKernel {
 public:
  RnnKernel(const KernelInit& init, Cell cell, RnnPath path)
      : attrs_(parse_rnn_attributes(init.attrs(), init.where(), cell)), path_(path) {
    if (path == RnnPath::kAuto || path == RnnPath::kDnnl) dnnl_ = DnnlRnn::create(init, attrs_);
    const Tensor *w = init.constant_input(1), *r = init.constant_input(2);
    if (w && r && w->dtype() == DType::kFloat32) constant_w_ = w->data(), constant_r_ = r->data();
  }

  void run(KernelContext& ctx) const override {
    RnnTensors io;
    const RnnDims d = bind_rnn_run(ctx, attrs_, io);
    if (io.x->dtype() != DType::kFloat32 || path_ == RnnPath::kReference) {
      rnn_reference(attrs_, d, io);
      return;
    }
    if (dnnl_ && dnnl_->run(ctx, d, io)) return;
    // Packed products only for the prepare-time constants (a feed may override an initializer).
    const bool constant = constant_w_ && io.w->data() == constant_w_ && io.r->data() == constant_r_;
    rnn_gemm(ctx, attrs_, d, io, constant ? &packed_ : nullptr);
  }

 private:
  RnnAttributes attrs_;
  RnnPath path_;
  std::unique_ptr<DnnlRnn> dnnl_;
  const void *constant_w_ = nullptr, *constant_r_ = nullptr;
  PackedProducts packed_;
};

}  // namespace

std::unique_ptr<OpKernel> make_rnn_kernel(const KernelInit& init, Cell cell, RnnPath path) {
  return std::make_unique<RnnKernel>(init, cell, path);
}

}  // namespace pointrt::rnn
