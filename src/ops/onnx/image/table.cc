// Operator table rows of the ONNX image family.
#include "ops/families.h"
#include "ops/onnx/image/affine_grid.h"
#include "ops/onnx/image/grid_sample.h"
#include "ops/onnx/image/non_max_suppression.h"
#include "ops/onnx/image/resize.h"
#include "ops/onnx/image/roi_align.h"

namespace pointrt {
Family register_onnx_image() {
  using namespace image;
  Family family{"onnx/image"};
  OpTable& t = family.rows;
  // Resize: rows split where the operator's inputs or semantics changed.
  t.add({"", "Resize", 10, 10, resize_types(), make_resize_kernel,
         "inputs (X, scales); nearest|linear, asymmetric coordinates, nearest floor (up) / ceil (down)"});
  t.add({"", "Resize", 11, 12, resize_types(), make_resize_kernel,
         "inputs (X, roi, scales, sizes); nearest|linear|cubic, every coordinate_transformation_mode, "
         "nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value"});
  t.add({"", "Resize", 13, 17, resize_types(), make_resize_kernel, "roi/scales optional (empty name or tensor)"});
  t.add({"", "Resize", 18, 18, resize_types(), make_resize_kernel, "adds antialias, axes, keep_aspect_ratio_policy"});
  t.add({"", "Resize", 19, 21, resize_types(), make_resize_kernel, "adds coordinate mode half_pixel_symmetric"});
  // Upsample: deprecated since opset 10 (use Resize); served for old models only.
  t.add({"", "Upsample", 1, 6, resize_types(), make_upsample_kernel,
         "DEPRECATED since opset 10; 4-D, height_scale/width_scale attributes; nearest|bilinear, asymmetric"});
  t.add({"", "Upsample", 7, 8, resize_types(), make_upsample_kernel,
         "DEPRECATED since opset 10; scales attribute; nearest|linear, asymmetric"});
  t.add({"", "Upsample", 9, 9, resize_types(), make_upsample_kernel,
         "DEPRECATED since opset 10; scales input; nearest|linear, asymmetric"});
  const std::vector<DType> grid_types = {DType::kFloat32, DType::kFloat64, DType::kFloat16};
  t.add({"", "GridSample", 16, 19, grid_types, make_grid_sample_kernel,
         "4-D; bilinear|nearest|bicubic; zeros|border|reflection; align_corners"});
  t.add({"", "GridSample", 20, 21, grid_types, make_grid_sample_kernel,
         "N-D; linear|nearest|cubic; zeros|border|reflection; align_corners"});
  t.add({"", "AffineGrid", 20, 21, grid_types, make_affine_grid_kernel, "2-D and 3-D; align_corners"});
  t.add({"", "RoiAlign", 10, 15, grid_types, make_roi_align_kernel,
         "avg|max; output_half_pixel coordinates (opset 10's behaviour)"});
  t.add({"", "RoiAlign", 16, 21, grid_types, make_roi_align_kernel,
         "avg|max; coordinate_transformation_mode half_pixel (default) | output_half_pixel"});
  t.add({"", "NonMaxSuppression", 10, 21, kFloat32Only, make_non_max_suppression_kernel,
         "center_point_box; optional max_output_boxes_per_class / iou_threshold / score_threshold"});
  return family;
}
}  // namespace pointrt
