// PackedProduct: a oneDNN matmul primitive with weights reordered once (see rnn_packed.h).
#include "ops/onnx/rnn/rnn_packed.h"

#include <omp.h>

#include <dnnl.hpp>

#include "ops/onnx/nn/dnnl_common.h"

namespace pointrt::rnn {

struct PackedProduct::Impl {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory weights;
};

PackedProduct::~PackedProduct() = default;

std::unique_ptr<PackedProduct> PackedProduct::create(const float* w, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  if (M <= 0 || N <= 0 || K <= 0) return nullptr;
  using dnnl::memory;
  try {
    const auto& eng = nn::cpu_engine();
    const memory::desc src({M, K}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc dst({M, N}, memory::data_type::f32, memory::dims{ldy, 1});
    const memory::desc any({K, N}, memory::data_type::f32, memory::format_tag::any);
    const memory::desc user({K, N}, memory::data_type::f32, memory::format_tag::ba);  // w is [N, K]
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto impl = std::make_unique<Impl>();
    impl->pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, any, dst), attr, eng);
    impl->prim = dnnl::matmul(impl->pd);
    impl->weights = memory(impl->pd.weights_desc(), eng);
    nn::reorder_memory(user, w, impl->pd.weights_desc(), impl->weights.get_data_handle());
    std::unique_ptr<PackedProduct> p(new PackedProduct());
    p->impl_ = std::move(impl);
    return p;
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

void PackedProduct::run(KernelContext& ctx, const float* x, float* y) const {
  const auto& eng = nn::cpu_engine();
  std::unordered_map<int, dnnl::memory> args;
  args[DNNL_ARG_SRC] = dnnl::memory(impl_->pd.src_desc(), eng, const_cast<float*>(x));
  args[DNNL_ARG_WEIGHTS] = impl_->weights;
  args[DNNL_ARG_DST] = dnnl::memory(impl_->pd.dst_desc(), eng, y);
  nn::RunBuffers buffers(ctx);
  nn::execute_with_scratchpad(impl_->prim, impl_->pd, args, buffers);
}

const PackedProduct* PackedProducts::get(int dir, int part, const float* w, int64_t M, int64_t N, int64_t K,
                                         int64_t ldy) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int64_t> key = {dir, part, M, N, K, ldy, omp_get_max_threads()};
  auto it = products_.find(key);
  if (it == products_.end()) it = products_.emplace(key, PackedProduct::create(w, M, N, K, ldy)).first;
  return it->second.get();
}

}  // namespace pointrt::rnn
