#include "ops/onnx/reduce/packed_matmul.h"

#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <mutex>
#include <new>
#include <unordered_map>

#include "core/omp_threads.h"
#include "ops/onnx/nn/dnnl_common.h"

namespace pointrt::reduce {
namespace {

// Products under this many multiply-adds run on the calling thread alone (oneDNN's OpenMP
// regions take omp_get_max_threads()): waking a second thread cost more than it saved
// (measured on 3 x 256 x 256: 7.3 us on one thread, 8.0 us on two).
constexpr int64_t kSerialMacs = int64_t(1) << 18;
// Scratchpads up to this size are kept with the node for the reusable run state below.
constexpr size_t kKeptScratchBytes = size_t(1) << 20;

struct AlignedDelete {
  void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(64)); }
};
using AlignedBytes = std::unique_ptr<uint8_t, AlignedDelete>;
AlignedBytes aligned_bytes(size_t n) {
  return AlignedBytes(static_cast<uint8_t*>(::operator new(std::max<size_t>(n, 1), std::align_val_t(64))));
}

}  // namespace

struct PackedMatmul::Impl {
  dnnl::matmul primitive;
  dnnl::memory weights, bias;
  dnnl::memory::desc src_md, dst_md, scratch_md;
  int64_t M = 0, K = 0, N = 0;
  bool accumulate = false;

  // Memory objects, argument map and scratchpad made once and used by one run at a time:
  // making them per run cost about 1 us (measured: 15 x 64 x 64 in 2.2 us per run against
  // 1.2 us reused), as much as the product itself. A run that finds them busy makes its own.
  struct RunState {
    std::mutex busy;
    dnnl::memory src, dst;
    AlignedBytes scratch;
    std::unordered_map<int, dnnl::memory> args;
  };
  mutable std::unique_ptr<RunState> kept;

  std::unordered_map<int, dnnl::memory> args_for(const dnnl::memory& src, const dnnl::memory& dst,
                                                 const dnnl::memory& scratch) const {
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}};
    if (bias) args[DNNL_ARG_BIAS] = bias;
    return args;
  }
};

PackedMatmul::PackedMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PackedMatmul::~PackedMatmul() = default;
int64_t PackedMatmul::M() const { return impl_->M; }
int64_t PackedMatmul::K() const { return impl_->K; }
bool PackedMatmul::accumulates() const { return impl_->accumulate; }

std::unique_ptr<PackedMatmul> PackedMatmul::create(const Spec& spec) {
  if (spec.M <= 0 || spec.K <= 0 || spec.N <= 0 || !spec.weights) return nullptr;
  try {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const dnnl::engine& engine = nn::cpu_engine();
    auto p = std::make_unique<Impl>();
    p->M = spec.M, p->K = spec.K, p->N = spec.N, p->accumulate = spec.accumulate;
    p->src_md = dnnl::memory::desc({spec.M, spec.K}, dt::f32, spec.trans_a ? tag::ba : tag::ab);
    p->dst_md = dnnl::memory::desc({spec.M, spec.N}, dt::f32, tag::ab);
    dnnl::memory::desc w_any({spec.K, spec.N}, dt::f32, tag::any);
    dnnl::memory::desc w_user({spec.K, spec.N}, dt::f32, spec.trans_w ? tag::ba : tag::ab);
    dnnl::memory::desc bias_md;
    if (spec.bias) bias_md = dnnl::memory::desc({1, spec.N}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (spec.accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(spec.beta);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->src_md, w_any, bias_md, p->dst_md), attr, engine);
    p->weights = dnnl::memory(pd.weights_desc(), engine);
    dnnl::memory user(w_user, engine, const_cast<float*>(spec.weights));
    dnnl::stream& s = nn::thread_stream();
    dnnl::reorder(user, p->weights).execute(s, user, p->weights);
    s.wait();
    if (spec.bias) {
      p->bias = dnnl::memory(bias_md, engine);
      std::copy(spec.bias, spec.bias + spec.N, static_cast<float*>(p->bias.get_data_handle()));
    }
    p->scratch_md = pd.scratchpad_desc();
    p->primitive = dnnl::matmul(pd);
    if (p->scratch_md.get_size() <= kKeptScratchBytes) {
      auto kept = std::make_unique<Impl::RunState>();
      kept->src = dnnl::memory(p->src_md, engine, nullptr);
      kept->dst = dnnl::memory(p->dst_md, engine, nullptr);
      kept->scratch = aligned_bytes(p->scratch_md.get_size());
      kept->args = p->args_for(kept->src, kept->dst, dnnl::memory(p->scratch_md, engine, kept->scratch.get()));
      p->kept = std::move(kept);
    }
    return std::unique_ptr<PackedMatmul>(new PackedMatmul(std::move(p)));
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

void PackedMatmul::run(const float* a, float* y) const {
  const Impl& p = *impl_;
  const ScopedOmpThreads threads(omp_get_max_threads() > 1 && p.M * p.N * p.K < kSerialMacs ? 1 : 0);
  dnnl::stream& s = nn::thread_stream();
  if (p.kept && p.kept->busy.try_lock()) {
    std::lock_guard<std::mutex> hold(p.kept->busy, std::adopt_lock);
    p.kept->src.set_data_handle(const_cast<float*>(a));
    p.kept->dst.set_data_handle(y);
    p.primitive.execute(s, p.kept->args);
    s.wait();
    return;
  }
  const dnnl::engine& engine = nn::cpu_engine();
  AlignedBytes scratch = aligned_bytes(p.scratch_md.get_size());
  p.primitive.execute(
      s, p.args_for(dnnl::memory(p.src_md, engine, const_cast<float*>(a)), dnnl::memory(p.dst_md, engine, y),
                    dnnl::memory(p.scratch_md, engine, scratch.get())));
  s.wait();
}

}  // namespace pointrt::reduce
