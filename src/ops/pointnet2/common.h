// Shared pieces of the PointNet++ family (OPS.md "PointNet++ family"): the float32 squared
// distance every operator uses, input checks that name the node and the input, and index
// validation for the gather-style operators.
//
// Floating-point contract: OPS.md defines d2 = dx*dx + dy*dy + dz*dz in float32, evaluated
// left to right WITHOUT fused multiply-adds. GCC would contract a*b+c into an FMA with
// -march=native, so the build passes -ffp-contract=off to every file (CMakeLists.txt); the
// reference and the optimised kernels then agree bit for bit. A future .cu file must use __fmul_rn/__fadd_rn (or
// -fmad=false) for the same reason.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/common.h"

#if defined(__CUDACC__)
#define POINTNET2_HD __host__ __device__
#else
#define POINTNET2_HD
#endif

namespace pointrt::pointnet2 {

/// d2 = dx*dx + dy*dy + dz*dz with dx = a.x - b.x (OPS.md general rules).
POINTNET2_HD inline float squared_distance(float ax, float ay, float az, float bx, float by, float bz) {
  float dx = ax - bx, dy = ay - by, dz = az - bz;
  float xx = dx * dx, yy = dy * dy, zz = dz * dz;
  return (xx + yy) + zz;
}
POINTNET2_HD inline float squared_distance(const float* a, const float* b) {
  return squared_distance(a[0], a[1], a[2], b[0], b[1], b[2]);
}

POINTNET2_HD inline bool is_finite_point(const float* p) {
  return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]);
}

/// Checks that `t` is float32 [B, N, 3]; returns N. `name` labels the input in messages,
/// e.g. "'xyz' (value 'points')".
int64_t check_point_cloud(const Tensor& t, const std::string& where, const std::string& name,
                          int64_t expected_batch = -1);
/// Checks that `t` is float32 of the given rank with dim 0 == expected_batch (when >= 0).
void check_float_rank(const Tensor& t, const std::string& where, const std::string& name, size_t rank,
                      int64_t expected_batch = -1);
/// Checks that `t` is int32 or int64 of the given rank with dim 0 == expected_batch.
void check_index_rank(const Tensor& t, const std::string& where, const std::string& name, size_t rank,
                      int64_t expected_batch = -1);

/// Every index of `t` (int32 or int64) must lie in [0, limit). The error names the input, the
/// offending value, its position and the valid range.
void check_indices_in_range(const Tensor& t, int64_t limit, const std::string& where, const std::string& name,
                            const char* limit_name);

/// Dispatch on an index tensor's dtype (int32 or int64).
template <typename F>
void dispatch_index(DType t, const std::string& where, const std::string& name, F&& f) {
  switch (t) {
    case DType::kInt32: f(int32_t{}); return;
    case DType::kInt64: f(int64_t{}); return;
    default: fail(where, ": input ", name, " has element type ", dtype_name(t), ", expected int32 or int64");
  }
}

}  // namespace pointrt::pointnet2
