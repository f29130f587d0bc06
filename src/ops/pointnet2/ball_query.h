// BallQuery (OPS.md "PointNet++ family"; reference: pointnet2_ops query_ball_point_kernel,
// with PVN3D's min_radius variant).
//
//   xyz [B, N, 3] float32 (points), new_xyz [B, M, 3] float32 (centres)
//   -> idx [B, M, nsample] int32
//   attributes: radius float > 0 (required); nsample int >= 1 (required); min_radius float >= 0,
//   default 0.
//
// Per centre: scan k = 0 .. N-1 IN POINT ORDER; point k is accepted when
//   d2 == 0 or (d2 >= min_radius^2 and d2 < radius^2)      (strict upper bound)
// with d2 = squared_distance(centre, point) and both squares rounded to float32. The first
// accepted index fills all nsample slots; each further accepted index overwrites the next slot;
// the scan stops after nsample accepted. No accepted point -> all zeros (also when N = 0).
// This is "the first nsample hits in point order", NOT "the nearest nsample": the optimised
// kernel uses a grid but returns exactly these indices in this order.
#pragma once

#include <cstdint>
#include <string>

#include "graph/ir.h"
#include "ops/pointnet2/common.h"

namespace pointrt::pointnet2 {

struct BallQueryAttrs {
  float radius = 0;
  int64_t nsample = 1;
  float min_radius = 0;
  float radius2() const { return radius * radius; }
  float min_radius2() const { return min_radius * min_radius; }
};

/// Reads and checks the attributes (radius > 0 and finite, nsample >= 1, min_radius >= 0).
BallQueryAttrs parse_ball_query(const Attributes& attrs, const std::string& where);

/// The acceptance test of one point (radius2 = radius * radius in float32).
POINTNET2_HD inline bool ball_query_accepts(float d2, float radius2, float min_radius2) {
  return d2 == 0.0f || (d2 >= min_radius2 && d2 < radius2);
}

/// Naive reference (the test oracle): the OPS.md scan.
void ball_query_ref(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m,
                    const BallQueryAttrs& attrs, int32_t* idx);
/// Optimised: one uniform grid per batch (cell = radius); each centre scans only the cells
/// overlapping its ball — in one pass over the box's x-row spans, or in blocks of increasing
/// point index so that it can stop as soon as nsample hits are certain to be the first ones
/// (ball_query.cc). OpenMP over batches (grid build) and queries.
void ball_query(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m,
                const BallQueryAttrs& attrs, int32_t* idx);

}  // namespace pointrt::pointnet2
