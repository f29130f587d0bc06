#include "ops/onnx/nn/dnnl_common.h"

#include <cstdint>
#include <cstdlib>

namespace pointrt::nn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

void* RunBuffers::get(int slot, size_t bytes) {
  constexpr size_t kAlign = 4096;
  if (bytes > size_[slot] || !held_[slot].defined()) {
    held_[slot] = Tensor();  // give the smaller one back first
    held_[slot] = ctx_.temporary(bytes + kAlign);
    size_[slot] = bytes;
  }
  auto p = reinterpret_cast<uintptr_t>(held_[slot].data());
  return reinterpret_cast<void*>((p + kAlign - 1) / kAlign * kAlign);
}

int64_t channel_block() {
  static const int64_t block = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto avx512 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core);
    return (isa & avx512) == avx512 ? 16 : 8;
  }();
  return block;
}

dnnl::memory::format_tag plain_tag(size_t rank) {
  using tag = dnnl::memory::format_tag;
  switch (rank) {
    case 3: return tag::ncw;
    case 4: return tag::nchw;
    case 5: return tag::ncdhw;
    default: fail("oneDNN: no plain layout for rank ", rank);
  }
}

dnnl::memory::format_tag blocked_tag(size_t rank) {
  using tag = dnnl::memory::format_tag;
  bool b16 = channel_block() == 16;
  switch (rank) {
    case 3: return b16 ? tag::nCw16c : tag::nCw8c;
    case 4: return b16 ? tag::nChw16c : tag::nChw8c;
    case 5: return b16 ? tag::nCdhw16c : tag::nCdhw8c;
    default: fail("oneDNN: no blocked layout for rank ", rank);
  }
}

bool blockable(size_t rank, int64_t channels) {
  return rank >= 3 && rank <= 5 && channels > 0 && channels % channel_block() == 0;
}

void execute_with_scratchpad(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                             std::unordered_map<int, dnnl::memory>& args, RunBuffers& buffers) {
  dnnl::memory::desc sd = pd.scratchpad_desc();
  size_t bytes = sd.get_size();
  if (bytes) args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(sd, cpu_engine(), buffers.get(kScratchpadSlot, bytes));
  dnnl::stream& s = thread_stream();
  prim.execute(s, args);
  s.wait();
}

PreparedReorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  PreparedReorder r;
  r.from = from;
  r.to = to;
  r.prim = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to));
  return r;
}

void PreparedReorder::run(const void* src, void* dst) const {
  dnnl::memory a(from, cpu_engine(), const_cast<void*>(src));
  dnnl::memory b(to, cpu_engine(), dst);
  dnnl::stream& s = thread_stream();
  prim.execute(s, a, b);
  s.wait();
}

void reorder_memory(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to, void* dst) {
  dnnl::memory a(from, cpu_engine(), const_cast<void*>(src));
  dnnl::memory b(to, cpu_engine(), dst);
  dnnl::reorder r(a, b);
  dnnl::stream& s = thread_stream();
  r.execute(s, a, b);
  s.wait();
}

}  // namespace pointrt::nn
