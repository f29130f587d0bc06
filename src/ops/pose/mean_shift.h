// pointrt::MeanShift (docs/operators-pose.md; reference: PVN3D's MeanShiftTorch and its use in
// pvn3d_eval_utils.eval_one_frame_pose, ethnhe/PVN3D).
//
//   votes [B, K, N, 3] float32 (K vote sets per point, e.g. 8 keypoints + the centre, in metres)
//   labels [B, N] int32/int64 (the instance of each point, e.g. ArgMax of the segmentation)
//   -> modes [B, C, K, 3] float32, counts [B, C, K] int32
//   attributes: num_instances C >= 1 (required); bandwidth > 0 (required); max_iterations >= 0
//   (300); stop_threshold >= 0 (bandwidth * 1e-3); ignore_label (-1); filter_vote in [-1, K) (-1).
//
// Per batch b, instance c (c != ignore_label; negative labels belong to no instance) and vote set k:
//   P = the points i with labels[b, i] == c, in index order. With filter_vote = f >= 0 the set f is
//   processed first over P; the other sets use only its inliers (PVN3D's centre-cluster filter).
//   S = those points whose vote v_i = votes[b, k, i] is finite; counts[b, c, k] = |S|.
//   |S| = 0: modes[b, c, k] = (0, 0, 0) (the flag: a count of 0 means "no mode").
//   1. Density: n_i = #{j in S : d2(v_i, v_j) < bandwidth^2} (float32 d2 as the PointNet++
//      family, no FMA; bandwidth^2 rounded to float32). seed = argmax n_i, ties to the lowest i.
//      Inliers (for the filter): {j in S : d2(v_seed, v_j) < bandwidth^2} (never empty).
//   2. Shift, PVN3D's Gaussian kernel: m = v_seed; up to max_iterations times
//      m' = sum_j w_j v_j / sum_j w_j, w_j = exp(-d2(m, v_j) / (2 bandwidth^2)), j in S;
//      stop after the step where |m' - m| < stop_threshold. If every weight underflows to 0 the
//      shift stops with the current m (never NaN).
// Difference to PVN3D: PVN3D shifts every point and stops when all have moved less than the
// threshold (or after max_iter + 1 rounds), then returns the shifted position of the densest
// point. Each point's trajectory depends only on the votes, so shifting the densest point alone
// gives the same mode up to when the loop stops (within a few stop_threshold; tested), at 1/N
// of the cost.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace pointrt::pose {

struct MeanShiftAttrs {
  int64_t num_instances = 0;
  float bandwidth = 0.f;
  int64_t max_iterations = 300;
  float stop_threshold = 0.f;
  int64_t ignore_label = -1;
  int64_t filter_vote = -1;
};

/// Reads and checks the attributes (filter_vote < K is checked at run time).
MeanShiftAttrs parse_mean_shift(const Attributes& attrs, const std::string& where);

/// Naive reference (the oracle): `labels` int32 already checked to be < C; shift in double.
void mean_shift_ref(const float* votes, const int32_t* labels, int64_t batch, int64_t sets, int64_t n,
                    const MeanShiftAttrs& attrs, float* modes, int32_t* counts);
/// Optimised: points bucketed per instance into SoA copies, density count with a core (or symmetric
/// and vectorised over all pairs), float32 vectorised shift; OpenMP over (batch, instance, vote set).
void mean_shift(const float* votes, const int32_t* labels, int64_t batch, int64_t sets, int64_t n,
                const MeanShiftAttrs& attrs, float* modes, int32_t* counts);

namespace detail {

/// Reused buffers of density_counts (one per task).
struct DensityScratch {
  std::vector<uint8_t> kind;   // of each vote: boundary, far, core
  std::vector<int64_t> order;  // boundary votes, far votes, core votes
  std::vector<float> x, y, z;  // the votes in that order (x first: the median sample)
  std::vector<int32_t> count;
};

/// count[i] = #{j < n : d2(v_i, v_j) < bw2} for the n votes (x, y, z) (SoA, finite), the float32
/// d2 of the header above. Takes density_counts_core when it applies, else direct.
void density_counts(const float* x, const float* y, const float* z, int64_t n, float bw2, int32_t* count,
                    DensityScratch& scratch);
/// Every pair tested once (symmetric, vectorised): O(n^2).
void density_counts_direct(const float* x, const float* y, const float* z, int64_t n, float bw2, int32_t* count);
/// The core = the votes within about bandwidth / 2 of a centre (a sampled median): its pairs all hit
/// and are added wholesale; a non-core vote surely beyond the bandwidth of every core vote is not
/// tested against them; the remaining pairs are tested. Same counts as direct, with margins of
/// 1e-3 relative on both decisions. Returns false (count untouched) when the
/// core holds fewer than a quarter of the votes.
bool density_counts_core(const float* x, const float* y, const float* z, int64_t n, float bw2, int32_t* count,
                         DensityScratch& scratch);

}  // namespace detail

}  // namespace pointrt::pose
