#include "ops/pointnet2/common.h"
#include "ops/index_types.h"

namespace pointrt::pointnet2 {

void check_float_rank(const Tensor& t, const std::string& where, const std::string& name, size_t rank,
                      int64_t expected_batch) {
  if (t.dtype() != DType::kFloat32)
    fail(where, ": input ", name, " has element type ", dtype_name(t.dtype()), ", expected float32");
  if (t.rank() != rank)
    fail(where, ": input ", name, " must have rank ", rank, ", got shape ", shape_to_string(t.shape()));
  if (t.dim(0) < 1)
    fail(where, ": input ", name, " has batch ", t.dim(0), ", expected >= 1 (shape ", shape_to_string(t.shape()), ")");
  if (expected_batch >= 0 && t.dim(0) != expected_batch)
    fail(where, ": input ", name, " has batch ", t.dim(0), " but the first input has batch ", expected_batch,
         " (shape ", shape_to_string(t.shape()), ")");
}

int64_t check_point_cloud(const Tensor& t, const std::string& where, const std::string& name, int64_t expected_batch) {
  check_float_rank(t, where, name, 3, expected_batch);
  if (t.dim(2) != 3)
    fail(where, ": input ", name, " must be [B, N, 3], got shape ", shape_to_string(t.shape()), " (last dimension ",
         t.dim(2), ", expected 3)");
  if (t.dim(1) > std::numeric_limits<int32_t>::max())
    fail(where, ": input ", name, " has ", t.dim(1), " points; int32 indices allow at most ",
         std::numeric_limits<int32_t>::max());
  return t.dim(1);
}

void check_index_rank(const Tensor& t, const std::string& where, const std::string& name, size_t rank,
                      int64_t expected_batch) {
  if (!is_index_dtype(t.dtype()))
    fail(where, ": input ", name, " has element type ", dtype_name(t.dtype()), ", expected ", index_dtypes_text());
  if (t.rank() != rank)
    fail(where, ": input ", name, " must have rank ", rank, ", got shape ", shape_to_string(t.shape()));
  if (expected_batch >= 0 && t.dim(0) != expected_batch)
    fail(where, ": input ", name, " has batch ", t.dim(0), " but the first input has batch ", expected_batch,
         " (shape ", shape_to_string(t.shape()), ")");
}

namespace {
template <typename Index>
int64_t first_out_of_range(const Index* p, int64_t n, int64_t limit) {
  // Branch-free scan of the common all-valid case; locate the culprit only on failure.
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) bad |= (p[i] < 0) | (static_cast<int64_t>(p[i]) >= limit);
  if (!bad) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (p[i] < 0 || static_cast<int64_t>(p[i]) >= limit) return i;
  return -1;
}

std::string position_text(int64_t flat, const Shape& shape) {
  std::string s = "]";
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = shape[d] > 0 ? shape[d] : 1;
    s = str_cat(d ? ", " : "", flat % extent, s);
    flat /= extent;
  }
  return "[" + s;
}
}  // namespace

void check_indices_in_range(const Tensor& t, int64_t limit, const std::string& where, const std::string& name,
                            const char* limit_name) {
  dispatch_index(t.dtype(), where, name, [&](auto tag) {
    using Index = decltype(tag);
    const Index* p = t.data_as<Index>();
    int64_t bad = first_out_of_range(p, t.numel(), limit);
    if (bad >= 0)
      fail(where, ": input ", name, " has index ", static_cast<int64_t>(p[bad]), " at ", position_text(bad, t.shape()),
           ", out of range [0, ", limit, ") (", limit_name, " = ", limit, ")");
  });
}

}  // namespace pointrt::pointnet2
