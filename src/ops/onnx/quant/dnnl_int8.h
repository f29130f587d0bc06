// oneDNN helpers of the quantization family: element types, channels-last layouts, and the
// parameters a quantized kernel reads as scalars.
#pragma once

#include <dnnl.hpp>

#include "ops/onnx/nn/dnnl_common.h"

namespace pointrt::quant {

inline dnnl::memory::data_type dnnl_type(DType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DType::kUInt8: return dt::u8;
    case DType::kInt8: return dt::s8;
    case DType::kInt32: return dt::s32;
    case DType::kFloat32: return dt::f32;
    default: fail("oneDNN: no data type for ", dtype_name(t));
  }
}

/// Plain (ncw/nchw/ncdhw) or channels-last (nwc/nhwc/ndhwc) tag for a tensor of `rank`.
inline dnnl::memory::format_tag activation_tag(size_t rank, bool channels_last) {
  using tag = dnnl::memory::format_tag;
  if (!channels_last) return nn::plain_tag(rank);
  switch (rank) {
    case 3: return tag::nwc;
    case 4: return tag::nhwc;
    case 5: return tag::ndhwc;
    default: fail("oneDNN: no channels-last layout for rank ", rank);
  }
}

inline dnnl::memory::desc activation_desc(const Shape& s, DType t, bool channels_last) {
  return dnnl::memory::desc(nn::to_dims(s), dnnl_type(t), activation_tag(s.size(), channels_last));
}

/// Reorders a tensor between plain and channels-last (same dtype and logical shape).
inline void relayout(const Tensor& from, bool from_cl, Tensor& to, bool to_cl) {
  nn::reorder_memory(activation_desc(from.shape(), from.dtype(), from_cl), from.data(),
                     activation_desc(to.shape(), to.dtype(), to_cl), to.data());
}

/// A scalar (or one-element) integer parameter such as a zero point; `name` for the message.
inline int32_t scalar_int(const Tensor& t, const std::string& where, const std::string& role, const std::string& name) {
  if (t.numel() != 1) fail(where, ": ", role, " '", name, "' must be a scalar, got shape ", shape_to_string(t.shape()));
  int32_t v = 0;
  dispatch_numeric(t.dtype(), "quantization", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value)
      v = static_cast<int32_t>(t.data_as<T>()[0]);
    else
      fail(where, ": ", role, " '", name, "' has element type ", dtype_name(t.dtype()), ", expected an integer");
  });
  return v;
}

/// A scalar float32 parameter (a scale).
inline float scalar_float(const Tensor& t, const std::string& where, const std::string& role, const std::string& name) {
  if (t.numel() != 1) fail(where, ": ", role, " '", name, "' must be a scalar, got shape ", shape_to_string(t.shape()));
  if (t.dtype() != DType::kFloat32)
    fail(where, ": ", role, " '", name, "' has element type ", dtype_name(t.dtype()), ", expected float");
  return t.data_as<float>()[0];
}

}  // namespace pointrt::quant
