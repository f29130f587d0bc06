// Index and label inputs of the pointrt operators: int32, int64 or uint32 (NVIDIA's CUDA
// pipelines feed uint32 site indices; numpy's default integer is int64). The kernels read int32
// and int64 natively; a uint32 tensor is widened to int64 first (index tensors are small next to
// the features they select, and the widened copy keeps every range check exact).
#pragma once

#include "pointrt/pointrt.h"

namespace pointrt {

inline bool is_index_dtype(DType t) { return t == DType::kInt32 || t == DType::kInt64 || t == DType::kUInt32; }

/// "int32, int64 or uint32", for messages.
inline const char* index_dtypes_text() { return "int32, int64 or uint32"; }

/// `t` itself when it is not uint32; else an int64 copy (same shape).
Tensor as_signed_indices(const Tensor& t);

}  // namespace pointrt
