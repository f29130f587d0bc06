#include "ops/pose/pose_common.h"
#include "ops/index_types.h"

namespace pointrt::pose {

namespace {
template <typename Label>
std::vector<int32_t> convert_labels(const Label* p, const Shape& shape, int64_t num_instances, const std::string& where,
                                    const std::string& name) {
  const int64_t total = shape_numel(shape);
  std::vector<int32_t> out(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    const int64_t v = static_cast<int64_t>(p[i]);
    if (v >= num_instances)
      fail(where, ": input ", name, " has label ", v, " at [", i / shape[1], ", ", i % shape[1],
           "], out of range (num_instances = ", num_instances, "; negative labels mean no instance)");
    out[static_cast<size_t>(i)] = static_cast<int32_t>(v < 0 ? -1 : v);
  }
  return out;
}
}  // namespace

std::vector<int32_t> read_labels(const Tensor& labels, int64_t num_instances, const std::string& where,
                                 const std::string& name) {
  if (labels.rank() != 2) fail(where, ": input ", name, " must be [B, N], got shape ", shape_to_string(labels.shape()));
  switch (labels.dtype()) {
    case DType::kInt32: return convert_labels(labels.data_as<int32_t>(), labels.shape(), num_instances, where, name);
    case DType::kInt64: return convert_labels(labels.data_as<int64_t>(), labels.shape(), num_instances, where, name);
    case DType::kUInt32: return convert_labels(labels.data_as<uint32_t>(), labels.shape(), num_instances, where, name);
    default:
      fail(where, ": input ", name, " has element type ", dtype_name(labels.dtype()), ", expected ",
           index_dtypes_text());
  }
}

InstanceBuckets bucket_by_instance(const int32_t* labels, int64_t n, int64_t num_instances, int64_t ignore_label) {
  InstanceBuckets b;
  b.offsets.assign(static_cast<size_t>(num_instances + 1), 0);
  auto counted = [&](int32_t l) { return l >= 0 && l != ignore_label; };
  for (int64_t i = 0; i < n; ++i)
    if (counted(labels[i])) ++b.offsets[labels[i] + 1];
  for (int64_t c = 0; c < num_instances; ++c) b.offsets[c + 1] += b.offsets[c];
  b.order.resize(static_cast<size_t>(b.offsets[num_instances]));
  std::vector<int64_t> next(b.offsets.begin(), b.offsets.end() - 1);
  for (int64_t i = 0; i < n; ++i)
    if (counted(labels[i])) b.order[next[labels[i]]++] = static_cast<int32_t>(i);
  return b;
}

}  // namespace pointrt::pose
