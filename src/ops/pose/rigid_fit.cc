// RigidFit: the contract's moments and status (shared with the reference), a Jacobi eigen solver,
// and the production fit by Horn's quaternion method.
#include "ops/pose/rigid_fit.h"

#include <algorithm>
#include <cmath>

namespace pointrt::pose {

void symmetric_eigen(double* a, int n, double* values, double* vectors) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) vectors[i * n + j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, diag = 0;
    for (int i = 0; i < n; ++i) {
      diag += a[i * n + i] * a[i * n + i];
      for (int j = i + 1; j < n; ++j) off += a[i * n + j] * a[i * n + j];
    }
    if (off == 0.0 || off <= 1e-32 * diag) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (std::fabs(apq) < 1e-300) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int r = 0; r < n; ++r) {  // columns p, q of A
          const double arp = a[r * n + p], arq = a[r * n + q];
          a[r * n + p] = c * arp - s * arq;
          a[r * n + q] = s * arp + c * arq;
        }
        for (int r = 0; r < n; ++r) {  // rows p, q of A
          const double apr = a[p * n + r], aqr = a[q * n + r];
          a[p * n + r] = c * apr - s * aqr;
          a[q * n + r] = s * apr + c * aqr;
        }
        for (int r = 0; r < n; ++r) {
          const double vrp = vectors[r * n + p], vrq = vectors[r * n + q];
          vectors[r * n + p] = c * vrp - s * vrq;
          vectors[r * n + q] = s * vrp + c * vrq;
        }
      }
  }
  int order[4] = {0, 1, 2, 3};
  for (int i = 1; i < n; ++i)  // insertion sort, descending eigenvalues
    for (int j = i; j > 0 && a[order[j] * n + order[j]] > a[order[j - 1] * n + order[j - 1]]; --j)
      std::swap(order[j], order[j - 1]);
  double sorted[16];
  for (int k = 0; k < n; ++k) {
    values[k] = a[order[k] * n + order[k]];
    for (int r = 0; r < n; ++r) sorted[r * n + k] = vectors[r * n + order[k]];
  }
  std::copy(sorted, sorted + n * n, vectors);
}

FitMoments fit_moments(const float* source, const float* target, const float* weight, int64_t p) {
  FitMoments m;
  double ws = 0, ss = 0, tt = 0;
  int64_t used = 0;
  for (int64_t j = 0; j < p; ++j) {
    const double w = weight ? weight[j] : 1.0;
    if (!(w > 0)) continue;
    const float *s = source + 3 * j, *t = target + 3 * j;
    for (int d = 0; d < 3; ++d)
      if (!std::isfinite(s[d]) || !std::isfinite(t[d])) {
        m = FitMoments();
        m.status = kFitNonFinite;
        return m;
      }
    ws += w;
    ++used;
    for (int d = 0; d < 3; ++d) {
      m.cs[d] += w * s[d];
      m.ct[d] += w * t[d];
      ss += w * s[d] * s[d];
      tt += w * t[d] * t[d];
    }
  }
  if (used == 0) {
    m.status = kFitTooFewPoints;
    return m;
  }
  for (int d = 0; d < 3; ++d) {
    m.cs[d] /= ws;
    m.ct[d] /= ws;
  }
  if (used < 3) {
    m.status = kFitTooFewPoints;
    return m;
  }
  for (int64_t j = 0; j < p; ++j) {
    const double w = weight ? weight[j] : 1.0;
    if (!(w > 0)) continue;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m.h[r * 3 + c] += w * (source[3 * j + r] - m.cs[r]) * (target[3 * j + c] - m.ct[c]);
  }
  double hth[9], lambda[3], vectors[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) hth[i * 3 + j] = m.h[i] * m.h[j] + m.h[3 + i] * m.h[3 + j] + m.h[6 + i] * m.h[6 + j];
  symmetric_eigen(hth, 3, lambda, vectors);
  const double s1 = std::sqrt(std::max(lambda[0], 0.0)), s2 = std::sqrt(std::max(lambda[1], 0.0));
  if (s2 <= 1e-6 * s1 || s1 <= 1e-10 * std::sqrt(ss * tt)) m.status = kFitDegenerate;
  return m;
}

void write_fallback_pose(const FitMoments& m, float* pose) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) pose[i * 4 + j] = i == j ? 1.f : 0.f;
    pose[i * 4 + 3] = m.status == kFitNonFinite ? 0.f : static_cast<float>(m.ct[i] - m.cs[i]);
  }
}

void fit_each(const float* source, const float* target, const float* weight, int64_t fits, int64_t source_fits,
              int64_t p, float* pose, int32_t* status, RotationSolver solve, bool parallel) {
#pragma omp parallel for schedule(static) if (parallel && fits > 256)
  for (int64_t f = 0; f < fits; ++f) {
    const FitMoments m =
        fit_moments(source + (f % source_fits) * p * 3, target + f * p * 3, weight ? weight + f * p : nullptr, p);
    if (status) status[f] = m.status;
    float* out = pose + f * 12;
    if (m.status != kFitOk) {
      write_fallback_pose(m, out);
      continue;
    }
    double r[9];
    solve(m.h, r);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) out[i * 4 + j] = static_cast<float>(r[i * 3 + j]);
      out[i * 4 + 3] =
          static_cast<float>(m.ct[i] - (r[i * 3] * m.cs[0] + r[i * 3 + 1] * m.cs[1] + r[i * 3 + 2] * m.cs[2]));
    }
  }
}

namespace {

// Horn (1987): the rotation maximising sum w t'.(R s') is that of the unit quaternion of the
// largest eigenvalue of his symmetric matrix N(H).
void horn_rotation(const double* h, double* r) {
  const double sxx = h[0], sxy = h[1], sxz = h[2], syx = h[3], syy = h[4], syz = h[5], szx = h[6], szy = h[7],
               szz = h[8];
  double n[16] = {sxx + syy + szz, syz - szy, szx - sxz, sxy - syx,       syz - szy,        sxx - syy - szz,
                  sxy + syx,       szx + sxz, szx - sxz, sxy + syx,       -sxx + syy - szz, syz + szy,
                  sxy - syx,       szx + sxz, syz + szy, -sxx - syy + szz};
  double values[4], vectors[16];
  symmetric_eigen(n, 4, values, vectors);
  const double w = vectors[0], x = vectors[4], y = vectors[8], z = vectors[12];
  r[0] = w * w + x * x - y * y - z * z;
  r[1] = 2 * (x * y - w * z);
  r[2] = 2 * (x * z + w * y);
  r[3] = 2 * (y * x + w * z);
  r[4] = w * w - x * x + y * y - z * z;
  r[5] = 2 * (y * z - w * x);
  r[6] = 2 * (z * x - w * y);
  r[7] = 2 * (z * y + w * x);
  r[8] = w * w - x * x - y * y + z * z;
}

}  // namespace

void rigid_fit(const float* source, const float* target, const float* weight, int64_t fits, int64_t source_fits,
               int64_t p, float* pose, int32_t* status) {
  fit_each(source, target, weight, fits, source_fits, p, pose, status, horn_rotation, true);
}

}  // namespace pointrt::pose
