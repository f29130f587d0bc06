// oneDNN plumbing shared by the nn kernels: one CPU engine, a stream and a scratchpad per
// calling thread, and the memory-format tags pointrt uses.
//
// Layout convention (see fusion_pass.cc): an edge between two nn kernels may carry its data in
// oneDNN's channel-blocked layout (nCw16c / nChw16c / nCdhw16c on AVX-512, 8c on AVX2) instead
// of plain NC[D]HW. The Tensor keeps its logical shape [N, C, ...]; blocking is only chosen when
// C is a multiple of the block, so the element count is unchanged. Which edges are blocked is
// decided once by the graph pass and written into the producer's and consumers' attributes; no
// other kernel ever sees a blocked tensor and graph outputs are always plain.
#pragma once

#include <omp.h>
#include <dnnl.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common.h"
#include "ops/kernel.h"

namespace pointrt::nn {

// Internal attribute names written by the nn graph pass (prefixed so no model uses them).
inline constexpr const char* kAttrSrcBlocked = "__pointrt_src_blocked";  // input 0 arrives blocked
// int8/uint8 MaxPool: X and Y channels-last (NHWC), between int8 convolutions (the QDQ pass).
inline constexpr const char* kAttrInt8Nhwc = "__pointrt_int8_nhwc";
inline constexpr const char* kAttrDstBlocked = "__pointrt_dst_blocked";  // output 0 must be blocked
inline constexpr const char* kAttrPostRelu = "__pointrt_post_relu";      // FusedConv: ReLU after sum
inline constexpr const char* kAttrSumInput = "__pointrt_sum_input";      // FusedConv: input 3 is added
inline constexpr const char* kAttrSumInPlace = "__pointrt_sum_inplace";  // FusedConv: may write into input 3
inline constexpr const char* kAttrSqueeze = "__pointrt_squeeze";         // global max: output [N, C]
inline constexpr const char* kAttrGlobalMax = "__pointrt_global_max";    // FusedConv: max over points

/// The process-wide CPU engine.
const dnnl::engine& cpu_engine();
/// A stream for the calling thread (streams are cheap but not free to create).
dnnl::stream& thread_stream();

enum BufferSlot {
  kScratchpadSlot = 0,
  kSrcSlot = 1,
  kDstSlot = 2,
  kWeightsSlot = 3,
  kS2bSrcSlot = 4,
  kS2bDstSlot = 5,
  kNumSlots = 6
};
/// The temporary buffers of one kernel run (scratchpad, reordered source, temporary destination,
/// ...; `slot` tells them apart), 4096-byte aligned, taken from the run's allocator
/// (KernelContext::temporary): in the session's arena they share memory with dead activations
/// instead of staying allocated per thread for the process's life. A slot is reused within the
/// run when it is big enough (e.g. by every chunk of a chunked conv).
class RunBuffers {
 public:
  explicit RunBuffers(KernelContext& ctx) : ctx_(ctx) {}
  void* get(int slot, size_t bytes);

 private:
  KernelContext& ctx_;
  Tensor held_[kNumSlots];
  size_t size_[kNumSlots] = {};
};

/// Channel block of the blocked layout: 16 with AVX-512, 8 otherwise.
int64_t channel_block();
/// Plain row-major tag (ncw / nchw / ncdhw) for a tensor of `rank`.
dnnl::memory::format_tag plain_tag(size_t rank);
/// Blocked tag (nCw16c / nChw16c / nCdhw16c, or the 8c ones) for a tensor of `rank`.
dnnl::memory::format_tag blocked_tag(size_t rank);
/// True when a tensor of `rank` with `channels` may travel blocked.
bool blockable(size_t rank, int64_t channels);

inline dnnl::memory::dims to_dims(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }
inline dnnl::memory::desc f32_desc(const Shape& s, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(to_dims(s), dnnl::memory::data_type::f32, tag);
}

/// Key of a per-shape primitive cache: the shape plus the OpenMP thread count of the calling
/// thread, because oneDNN fixes its work split (and its thread count) when a primitive is
/// created; a primitive made for 2 threads and run under 1 would still start 2.
inline Shape plan_key(const Shape& s) {
  Shape k = s;
  k.push_back(omp_get_max_threads());
  return k;
}

/// Name of the implementation oneDNN picked ("brg:avx512_core", "ref:any", ...).
inline std::string impl_name(const dnnl::primitive_desc_base& pd) { return pd.impl_info_str(); }

/// Execute `prim` with `args` on the calling thread's stream, giving it a thread-owned
/// scratchpad of the size `pd` asks for.
void execute_with_scratchpad(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
                             std::unordered_map<int, dnnl::memory>& args, RunBuffers& buffers);

/// A reorder primitive made once (at prepare time) and run many times: creating one per call
/// costs far more than moving a small tensor.
struct PreparedReorder {
  dnnl::memory::desc from, to;
  dnnl::reorder prim;
  bool valid() const { return static_cast<bool>(prim); }
  void run(const void* src, void* dst) const;
};
PreparedReorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

/// Reorder `src` (format `from`) into `dst` (format `to`) for the same logical shape (creates a
/// reorder primitive: for prepare time and cold paths).
void reorder_memory(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to, void* dst);

}  // namespace pointrt::nn
