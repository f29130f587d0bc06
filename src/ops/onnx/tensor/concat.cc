#include "ops/onnx/tensor/concat.h"

#include <algorithm>
#include <cstring>

namespace pointrt::tensor {

namespace {

// Concat's and Split's copies: part i of row o (row_bytes[i] bytes) goes from src(o, i) to
// dst(o, i). With many rows, threads take rows. With few (Concat or Split on axis 0: one row of
// a few large parts), each part is cut into pieces so that the copy still spreads over threads
// (one thread copies 40 MB at a fraction of the machine's bandwidth); below 1 MB such a copy stays
// on one thread: its data sits in one core's cache, and Split/rows_halves/1e5 from Python took
// 17-24 us on 2 threads against 11 us on one.
template <typename Src, typename Dst>
void copy_parts(int64_t outer, const std::vector<int64_t>& row_bytes, int64_t total_bytes, Src src, Dst dst) {
  const int64_t parts = static_cast<int64_t>(row_bytes.size());
  const bool parallel = worth_parallel(total_bytes) && (outer >= 64 || total_bytes >= (int64_t(1) << 20));
  if (outer >= 64 || !parallel) {
#pragma omp parallel for schedule(static) if (parallel && outer > 1)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < parts; ++i)
        if (row_bytes[i]) std::memcpy(dst(o, i), src(o, i), static_cast<size_t>(row_bytes[i]));
    return;
  }
  constexpr int64_t kPiece = int64_t{256} << 10;
  std::vector<int64_t> first_piece(static_cast<size_t>(parts) + 1, 0);  // of each part, within a row
  for (int64_t i = 0; i < parts; ++i) first_piece[i + 1] = first_piece[i] + (row_bytes[i] + kPiece - 1) / kPiece;
  const int64_t per_row = first_piece[parts];
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < outer * per_row; ++p) {
    const int64_t o = p / per_row, q = p % per_row;
    const int64_t i = std::upper_bound(first_piece.begin(), first_piece.end(), q) - first_piece.begin() - 1;
    const int64_t begin = (q - first_piece[i]) * kPiece, len = std::min(kPiece, row_bytes[i] - begin);
    std::memcpy(static_cast<char*>(dst(o, i)) + begin, static_cast<const char*>(src(o, i)) + begin,
                static_cast<size_t>(len));
  }
}

}  // namespace

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
  copy_parts(
      outer, row_bytes, y.numel() * static_cast<int64_t>(es),
      [&](int64_t o, int64_t i) { return static_cast<const char*>(inputs[i]->data()) + o * row_bytes[i]; },
      [&](int64_t o, int64_t i) { return dst + o * out_row + offset[i]; });
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
  copy_parts(
      outer, row_bytes, x.numel() * static_cast<int64_t>(es),
      [&](int64_t o, int64_t i) { return src + o * in_row + offset[i]; },
      [&](int64_t o, int64_t i) { return static_cast<char*>(outputs[i]->data()) + o * row_bytes[i]; });
}

}  // namespace pointrt::tensor
