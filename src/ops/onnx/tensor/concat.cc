#include "ops/onnx/tensor/concat.h"

#include <algorithm>
#include <cstring>

#include "core/copy_row.h"

namespace pointrt::tensor {

namespace {

// Concat's and Split's copies: part i of row o (bytes of part i) goes from src + o * src_stride
// to dst + o * dst_stride. With many rows, threads take rows. With few (Concat or Split on axis
// 0: one row of a few large parts), each part is cut into pieces so that the copy still spreads
// over threads (one thread copies 40 MB at a fraction of the machine's bandwidth); below 1 MB such
// a copy stays on one thread: its data sits in one core's cache, and Split/rows_halves/1e5 from
// Python took 17-24 us on 2 threads against 11 us on one.
struct PartCopy {
  const char* src;
  int64_t src_stride;
  char* dst;
  int64_t dst_stride;
  int64_t bytes;  // per row
};

// The parts' addresses and strides are worked out before the loops: reaching them through the
// tensors per row cost as much as the copies (Split of 1562 rows into two halves of 128 bytes).
void copy_parts(int64_t outer, const std::vector<PartCopy>& part_list, int64_t total_bytes) {
  const int64_t parts = static_cast<int64_t>(part_list.size());
  const PartCopy* part = part_list.data();
  const bool parallel = worth_parallel(total_bytes) && (outer >= 64 || total_bytes >= (int64_t(1) << 20));
  if (outer >= 64 || !parallel) {
#pragma omp parallel for schedule(static) if (parallel && outer > 1)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < parts; ++i)
        copy_row_bytes(part[i].dst + o * part[i].dst_stride, part[i].src + o * part[i].src_stride, part[i].bytes);
    return;
  }
  constexpr int64_t kPiece = int64_t{256} << 10;
  std::vector<int64_t> first_piece(static_cast<size_t>(parts) + 1, 0);  // of each part, within a row
  for (int64_t i = 0; i < parts; ++i) first_piece[i + 1] = first_piece[i] + (part[i].bytes + kPiece - 1) / kPiece;
  const int64_t per_row = first_piece[parts];
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < outer * per_row; ++p) {
    const int64_t o = p / per_row, q = p % per_row;
    const int64_t i = std::upper_bound(first_piece.begin(), first_piece.end(), q) - first_piece.begin() - 1;
    const int64_t begin = (q - first_piece[i]) * kPiece, len = std::min(kPiece, part[i].bytes - begin);
    std::memcpy(part[i].dst + o * part[i].dst_stride + begin, part[i].src + o * part[i].src_stride + begin,
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
  std::vector<PartCopy> parts(inputs.size());
  char* dst = static_cast<char*>(y.data());
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t row_bytes = inputs[i]->numel() / outer * static_cast<int64_t>(es);
    parts[i] = {static_cast<const char*>(inputs[i]->data()), row_bytes, dst + offset, out_row, row_bytes};
    offset += row_bytes;
  }
  copy_parts(outer, parts, y.numel() * static_cast<int64_t>(es));
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
  std::vector<PartCopy> parts;
  const char* src = static_cast<const char*>(x.data());
  int64_t offset = 0;
  for (Tensor* out : outputs) {
    const int64_t row_bytes = out->numel() / outer * static_cast<int64_t>(es);
    parts.push_back({src + offset, in_row, static_cast<char*>(out->data()), row_bytes, row_bytes});
    offset += row_bytes;
  }
  copy_parts(outer, parts, x.numel() * static_cast<int64_t>(es));
}

}  // namespace pointrt::tensor
