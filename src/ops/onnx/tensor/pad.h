// Pad. pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over `axes` (all axes when absent,
// axes since opset 18). Negative pads crop: the input is first cut to
// [max(0, -begin), dim - max(0, -end)) (as ONNX Runtime does; numpy has no negative pads),
// then padded by max(0, pad). Output coordinate i maps to cropped coordinate x = i - begin:
//   constant: outside [0, n) -> the constant value;
//   edge:     clamp(x, 0, n-1);
//   reflect:  mirror without repeating the edge, periodically (numpy 'reflect'); n = 1 -> 0;
//   wrap:     x mod n (opset 19; numpy differs when one side pads beyond the size and the other
//             pads too, since it pads in rounds; ONNX Runtime and we are periodic).
// edge/reflect/wrap on an axis of size 0 that gets padding is an error.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

PadMode parse_pad_mode(const std::string& mode, bool allow_wrap, const std::string& where);

struct PadPlan {
  Shape out_shape;
  std::vector<int64_t> crop;    // first kept input coordinate per dim
  std::vector<int64_t> kept;    // input extent kept per dim (n)
  std::vector<int64_t> before;  // positive padding before per dim
  PadMode mode = PadMode::kConstant;
};

/// pads has 2 * axes.size() values; axes empty = all dims (then pads has 2 * rank values).
PadPlan pad_plan(const Shape& in, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes, PadMode mode,
                 const std::string& where);

/// Cropped coordinate for output coordinate i, or -1 for the constant value.
inline int64_t pad_map(int64_t i, int64_t before, int64_t n, PadMode mode) {
  int64_t x = i - before;
  if (x >= 0 && x < n) return x;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return x < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((x % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      x = ((x % period) + period) % period;
      return x < n ? x : period - x;
    }
  }
  return -1;
}

/// `value` points at one element of x's dtype (the constant).
void pad_cpu(const Tensor& x, const PadPlan& plan, const void* value, Tensor& y);
void pad_ref(const Tensor& x, const PadPlan& plan, const void* value, Tensor& y);

}  // namespace pointrt::tensor
