#include "ops/onnx/tensor/concat.h"

#include <algorithm>
#include <cstring>

namespace pointrt::tensor {

Shape concat_shape(const std::vector<const Tensor*>& inputs, int64_t axis, const std::string& where) {
  if (inputs.empty()) fail(where, ": Concat needs at least one input");
  const Shape& first = inputs[0]->shape();
  Shape out = first;
  out[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (t.dtype() != inputs[0]->dtype())
      fail(where, ": input ", i, " is ", dtype_name(t.dtype()), " but input 0 is ", dtype_name(inputs[0]->dtype()));
    if (t.rank() != first.size())
      fail(where, ": input ", i, " has shape ", shape_to_string(t.shape()), " of rank ", t.rank(), ", input 0 has ",
           shape_to_string(first), " of rank ", first.size());
    for (size_t d = 0; d < first.size(); ++d)
      if (static_cast<int64_t>(d) != axis && t.dim(d) != first[d])
        fail(where, ": input ", i, " has shape ", shape_to_string(t.shape()), ", which differs from input 0's ",
             shape_to_string(first), " on dimension ", d, " (only axis ", axis, " may differ)");
    out[axis] += t.dim(axis);
  }
  return out;
}

void concat_cpu(const std::vector<const Tensor*>& inputs, int64_t axis, Tensor& y) {
  const size_t es = dtype_size(y.dtype());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.dim(d);
  const int64_t out_row = y.numel() / std::max<int64_t>(outer, 1) * es;  // bytes per outer index
  if (y.numel() == 0) return;
  std::vector<int64_t> row_bytes(inputs.size()), offset(inputs.size());
  int64_t acc = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    row_bytes[i] = inputs[i]->numel() / outer * es;
    offset[i] = acc;
    acc += row_bytes[i];
  }
  char* dst = static_cast<char*>(y.data());
  const int64_t n_in = static_cast<int64_t>(inputs.size());
#pragma omp parallel for schedule(static) if (worth_parallel(y.numel() * es) && outer > 1)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n_in; ++i)
      if (row_bytes[i])
        std::memcpy(dst + o * out_row + offset[i], static_cast<const char*>(inputs[i]->data()) + o * row_bytes[i],
                    static_cast<size_t>(row_bytes[i]));
}

std::vector<int64_t> split_sizes(int64_t dim, const std::vector<int64_t>& split, int64_t num_parts, bool allow_uneven,
                                 const std::string& where) {
  if (!split.empty()) {
    if (static_cast<int64_t>(split.size()) != num_parts)
      fail(where, ": 'split' has ", split.size(), " entries but the node has ", num_parts, " outputs");
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) fail(where, ": 'split' holds a negative size ", s);
      sum += s;
    }
    if (sum != dim) fail(where, ": 'split' sizes sum to ", sum, " but the split axis has size ", dim);
    return split;
  }
  if (num_parts <= 0) fail(where, ": the number of outputs must be positive, got ", num_parts);
  if (dim % num_parts == 0) return std::vector<int64_t>(num_parts, dim / num_parts);
  if (!allow_uneven)
    fail(where, ": axis of size ", dim, " cannot be split into ", num_parts, " equal parts (give 'split' sizes)");
  const int64_t chunk = dim / num_parts + 1;
  std::vector<int64_t> r(num_parts, chunk);
  r.back() = dim - chunk * (num_parts - 1);
  if (r.back() < 0)
    fail(where, ": axis of size ", dim, " cannot be split into ", num_parts, " chunks of ", chunk,
         " (the last chunk would be negative)");
  return r;
}

void split_cpu(const Tensor& x, int64_t axis, const std::vector<Tensor*>& outputs) {
  const size_t es = dtype_size(x.dtype());
  if (x.numel() == 0) return;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  const int64_t in_row = x.numel() / outer * es;
  std::vector<int64_t> row_bytes(outputs.size()), offset(outputs.size());
  int64_t acc = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    row_bytes[i] = outputs[i] ? outputs[i]->numel() / outer * es : 0;
    offset[i] = acc;
    acc += outputs[i] ? row_bytes[i] : 0;
  }
  const char* src = static_cast<const char*>(x.data());
  const int64_t n_out = static_cast<int64_t>(outputs.size());
#pragma omp parallel for schedule(static) if (worth_parallel(x.numel() * es) && outer > 1)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n_out; ++i)
      if (row_bytes[i])
        std::memcpy(static_cast<char*>(outputs[i]->data()) + o * row_bytes[i], src + o * in_row + offset[i],
                    static_cast<size_t>(row_bytes[i]));
}

}  // namespace pointrt::tensor
