// Operator table rows of the pointrt detector-decode family (docs/operators-detect.md). Kernels
// parse attributes at prepare time and check shapes and dtypes at run time; errors name the node,
// the input and the value.
#include <limits>
#include <memory>
#include <vector>
#include "ops/index_types.h"

#include "ops/detect/box_nms.h"
#include "ops/detect/center_point_decode.h"
#include "ops/detect/schemas.h"
#include "ops/families.h"

namespace pointrt::detect {
namespace {

void check_map(const Tensor& t, const Shape& expected, const std::string& where, const std::string& name) {
  if (t.dtype() != DType::kFloat32 || t.shape() != expected)
    fail(where, ": input ", name, " must be float32 ", shape_to_string(expected), ", got ", dtype_name(t.dtype()), " ",
         shape_to_string(t.shape()));
}

std::unique_ptr<OpKernel> decode_kernel(const KernelInit& init) {
  const DecodeAttrs attrs = parse_decode(init.attrs(), init.where());
  static const char* roles[] = {"heatmap", "offset", "height", "size", "rotation", "velocity"};
  std::vector<std::string> names;
  for (size_t i = 0; i < 6; ++i) names.push_back(init.input_label(i, roles[i]));
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& heat = ctx.input(0);
    if (heat.dtype() != DType::kFloat32 || heat.rank() != 4 || heat.dim(0) < 1 || heat.dim(1) < 1)
      fail(ctx.where(), ": input ", names[0], " must be float32 [B, C, H, W] with B, C >= 1, got ",
           dtype_name(heat.dtype()), " ", shape_to_string(heat.shape()));
    const int64_t batch = heat.dim(0), h = heat.dim(2), w = heat.dim(3);
    static const int64_t channels[] = {0, 2, 1, 3, 2, 2};
    const bool has_velocity = ctx.has_input(5);
    for (size_t i = 1; i < (has_velocity ? 6u : 5u); ++i)
      check_map(ctx.input(i), {batch, channels[i], h, w}, ctx.where(), names[i]);
    const int64_t k = attrs.max_detections, dim = has_velocity ? 9 : 7, hw = h * w;
    float* boxes = ctx.output(0, DType::kFloat32, {batch, k, dim}).data_as<float>();
    float* scores = ctx.output(1, DType::kFloat32, {batch, k}).data_as<float>();
    int32_t* labels = ctx.output(2, DType::kInt32, {batch, k}).data_as<int32_t>();
    int32_t* count = ctx.num_outputs() > 3 ? ctx.output(3, DType::kInt32, {batch}).data_as<int32_t>() : nullptr;
    auto map = [&](size_t i, int64_t b) { return ctx.input(i).data_as<float>() + b * channels[i] * hw; };
    for (int64_t b = 0; b < batch; ++b) {
      const HeadMaps m{heat.data_as<float>() + b * heat.dim(1) * hw, map(1, b),   map(2, b), map(3, b), map(4, b),
                       has_velocity ? map(5, b) : nullptr,           heat.dim(1), h,         w};
      const int64_t n = decode(m, attrs, boxes + b * k * dim, scores + b * k, labels + b * k);
      if (count) count[b] = static_cast<int32_t>(n);
    }
  });
}

// An optional [B, K] (labels) or [B] (count) integer input as int32.
std::vector<int32_t> read_ints(const Tensor& given, const Shape& expected, const std::string& where,
                               const std::string& name) {
  if (!is_index_dtype(given.dtype()) || given.shape() != expected)
    fail(where, ": input ", name, " must be ", index_dtypes_text(), " ", shape_to_string(expected), ", got ",
         dtype_name(given.dtype()), " ", shape_to_string(given.shape()));
  const Tensor t = as_signed_indices(given);
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = t.dtype() == DType::kInt32 ? t.data_as<int32_t>()[i] : t.data_as<int64_t>()[i];
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      fail(where, ": input ", name, " holds ", v, " at flat index ", i, ", outside the int32 range");
    out[i] = static_cast<int32_t>(v);
  }
  return out;
}

std::unique_ptr<OpKernel> nms_kernel(const KernelInit& init) {
  const NmsAttrs attrs = parse_nms(init.attrs(), init.where());
  const std::vector<std::string> names = {init.input_label(0, "boxes"), init.input_label(1, "scores"),
                                          init.input_label(2, "labels"), init.input_label(3, "count")};
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& boxes = ctx.input(0);
    if (boxes.dtype() != DType::kFloat32 || boxes.rank() != 3 || boxes.dim(2) < 7 || boxes.dim(0) < 1)
      fail(ctx.where(), ": input ", names[0], " must be float32 [B, K, D] with D >= 7 (x, y, z, dx, dy, dz, yaw), got ",
           dtype_name(boxes.dtype()), " ", shape_to_string(boxes.shape()));
    const int64_t batch = boxes.dim(0), k = boxes.dim(1), dim = boxes.dim(2), m = attrs.max_output;
    check_map(ctx.input(1), {batch, k}, ctx.where(), names[1]);
    std::vector<int32_t> labels, count;
    if (ctx.has_input(2)) labels = read_ints(ctx.input(2), {batch, k}, ctx.where(), names[2]);
    if (ctx.has_input(3)) count = read_ints(ctx.input(3), {batch}, ctx.where(), names[3]);
    for (size_t b = 0; b < count.size(); ++b)
      if (count[b] < 0 || count[b] > k)
        fail(ctx.where(), ": input ", names[3], " has count ", count[b], " for batch ", b, ", outside [0, K = ", k,
             "]");
    int32_t* num = ctx.output(0, DType::kInt32, {batch}).data_as<int32_t>();
    float* out_boxes = ctx.output(1, DType::kFloat32, {batch, m, dim}).data_as<float>();
    float* out_scores = ctx.output(2, DType::kFloat32, {batch, m}).data_as<float>();
    int32_t* out_labels = ctx.output(3, DType::kInt32, {batch, m}).data_as<int32_t>();
    Tensor scratch;
    int32_t* kept = ctx.num_outputs() > 4 ? ctx.output(4, DType::kInt32, {batch, m}).data_as<int32_t>()
                                          : (scratch = Tensor::allocate(DType::kInt32, {batch, m})).data_as<int32_t>();
    const float* in_boxes = boxes.data_as<float>();
    const float* in_scores = ctx.input(1).data_as<float>();
    for (int64_t b = 0; b < batch; ++b) {
      const int32_t* lb = labels.empty() ? nullptr : labels.data() + b * k;
      const int64_t used = count.empty() ? k : count[b];
      int32_t* kb = kept + b * m;
      const int64_t n = box_nms(in_boxes + b * k * dim, in_scores + b * k, lb, used, dim, attrs, kb);
      num[b] = static_cast<int32_t>(n);
      for (int64_t i = 0; i < m; ++i) {
        const bool valid = i < n;
        const int64_t src = valid ? kb[i] : 0;
        for (int64_t d = 0; d < dim; ++d)
          out_boxes[(b * m + i) * dim + d] = valid ? in_boxes[(b * k + src) * dim + d] : 0.f;
        out_scores[b * m + i] = valid ? in_scores[b * k + src] : 0.f;
        out_labels[b * m + i] = valid ? (lb ? lb[src] : 0) : -1;
        if (!valid) kb[i] = -1;
      }
    }
  });
}

}  // namespace
}  // namespace pointrt::detect

namespace pointrt {

Family register_detect() {
  using namespace detect;
  Family family{"detect"};
  OpTable& t = family.rows;
  family.schemas = detect_schemas();
  t.add({"pointrt", "CenterPointDecode", 1, 1, kFloat32Only, decode_kernel,
         "float32 head maps; CUDA-CenterPoint decode, optional max-pool peaks, top K", 0});
  t.add({"pointrt", "BoxNMS", 1, 1, kFloat32Only, nms_kernel,
         "float32 boxes; rotated BEV IoU (CUDA-CenterPoint) or circle NMS; EfficientNMS-style outputs", 0});
  return family;
}

}  // namespace pointrt
