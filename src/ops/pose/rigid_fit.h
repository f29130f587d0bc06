// pointrt::RigidFit (docs/operators-pose.md; reference: PVN3D's best_fit_transform, i.e. the
// Kabsch/Umeyama least-squares rotation with the reflection fix, here weighted).
//
//   source [S..., P, 3] float32 (e.g. the objects' model keypoints [C, K, 3]),
//   target [T..., P, 3] float32 (e.g. the voted keypoints [B, C, K, 3]); S... is a suffix of T...
//   (the source repeats over the leading target dimensions); optional weight [T..., P] float32 >= 0
//   -> pose [T..., 3, 4] float32 ([R | t], target ~ R source + t), optional status [T...] int32.
//
// Per fit, with the points of weight > 0 (all points when no weight is given; weight 0 drops a
// point, whatever its coordinates):
//   centroids c_s, c_t (weighted means), H = sum w (s - c_s)(t - c_t)^T, all in float64.
//   SVD H = U diag(s1 >= s2 >= s3) V^T; R = V diag(1, 1, sign det(V U^T)) U^T; t = c_t - R c_s.
//   status 0: that fit. Otherwise R = I and (never NaN):
//   1: fewer than 3 points of positive weight; t = c_t - c_s (t = 0 without points);
//   2: degenerate (the points are collinear or coincident in source or target:
//      s2 <= 1e-6 s1, or s1 <= 1e-10 sqrt(sum w |s|^2 sum w |t|^2)); t = c_t - c_s;
//   3: a non-finite coordinate among the points of positive weight; t = 0.
// A negative or non-finite weight is an error naming the value and its position.
#pragma once

#include <cstdint>

namespace pointrt::pose {

enum FitStatus : int32_t { kFitOk = 0, kFitTooFewPoints = 1, kFitDegenerate = 2, kFitNonFinite = 3 };

/// Weighted centroids and cross-covariance of one fit, and how the contract classifies it.
struct FitMoments {
  FitStatus status = kFitOk;
  double cs[3] = {0, 0, 0}, ct[3] = {0, 0, 0};
  double h[9] = {0};  // row-major H = sum w (s - c_s)(t - c_t)^T
};
/// `weight` may be null (all 1). Decides the status (status 2 uses the singular values of H).
FitMoments fit_moments(const float* source, const float* target, const float* weight, int64_t p);

/// Eigen-decomposition of a symmetric n x n matrix (n <= 4, row-major, destroyed) by cyclic
/// Jacobi rotations in float64: eigenvalues descending, eigenvectors as the columns of `vectors`.
void symmetric_eigen(double* a, int n, double* values, double* vectors);

/// Writes [R | t] (float32, row-major 3 x 4) for the status of `m` (R = I unless status 0).
void write_fallback_pose(const FitMoments& m, float* pose);
/// The rotation (row-major 3 x 3) maximising the correlation with cross-covariance h.
using RotationSolver = void (*)(const double* h, double* r);
/// Every fit: moments, status, then `solve` or the fallback pose; OpenMP over fits when `parallel`.
void fit_each(const float* source, const float* target, const float* weight, int64_t fits, int64_t source_fits,
              int64_t p, float* pose, int32_t* status, RotationSolver solve, bool parallel);

/// Naive reference (the oracle): Kabsch through the SVD of H (from the eigenvectors of H^T H).
/// `fits` poses; source row of fit f = f % source_fits.
void rigid_fit_ref(const float* source, const float* target, const float* weight, int64_t fits, int64_t source_fits,
                   int64_t p, float* pose, int32_t* status);
/// Production kernel: Horn's closed form (the unit quaternion of the largest eigenvalue of his
/// symmetric 4 x 4 matrix), an independent algorithm with the same optimum; OpenMP over fits.
void rigid_fit(const float* source, const float* target, const float* weight, int64_t fits, int64_t source_fits,
               int64_t p, float* pose, int32_t* status);

}  // namespace pointrt::pose
