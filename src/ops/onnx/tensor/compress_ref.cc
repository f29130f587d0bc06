#include "ops/onnx/tensor/compress.h"

namespace pointrt::tensor {

std::vector<int64_t> compress_selection(const Tensor& condition, int64_t dim, const std::string& where) {
  if (condition.dtype() != DType::kBool)
    fail(where, ": input 1 (condition) must be bool, got ", dtype_name(condition.dtype()));
  if (condition.rank() != 1) fail(where, ": input 1 (condition) must be 1-D, got ", shape_to_string(condition.shape()));
  if (condition.numel() > dim)
    fail(where, ": input 1 (condition) has ", condition.numel(), " entries but the axis has only ", dim);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < condition.numel(); ++i)
    if (condition.data_as<uint8_t>()[i]) kept.push_back(i);
  return kept;
}

void compress_ref(const Tensor& x, int64_t axis, const std::vector<int64_t>& kept, Tensor& y) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t dim = x.dim(axis), k = static_cast<int64_t>(kept.size());
  const size_t row = static_cast<size_t>(inner) * dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(y.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      if (row) std::memcpy(dst + (o * k + j) * row, src + (o * dim + kept[j]) * row, row);
}

}  // namespace pointrt::tensor
