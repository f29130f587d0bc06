// Reference RigidFit: Kabsch with the reflection fix, as PVN3D's best_fit_transform, via the
// eigenvectors V of H^T H (singular values s = sqrt of the eigenvalues, u_i = H v_i / s_i).
#include <cmath>

#include "ops/pose/rigid_fit.h"

namespace pointrt::pose {

namespace {

double det3(const double* m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}

// R = v1 u1^T + v2 u2^T + det(V) v3 (u1 x u2)^T: the Kabsch rotation V diag(1, 1, d) U^T written
// without u3, whose sign is arbitrary when s3 is (nearly) zero (d u3 = det(V) (u1 x u2)).
void kabsch_rotation(const double* h, double* r) {
  double hth[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      hth[i * 3 + j] = h[0 * 3 + i] * h[0 * 3 + j] + h[1 * 3 + i] * h[1 * 3 + j] + h[2 * 3 + i] * h[2 * 3 + j];
  double lambda[3], v[9];
  symmetric_eigen(hth, 3, lambda, v);
  double u[2][3];
  for (int k = 0; k < 2; ++k) {
    double norm = 0;
    for (int i = 0; i < 3; ++i) {
      u[k][i] = h[i * 3 + 0] * v[0 * 3 + k] + h[i * 3 + 1] * v[1 * 3 + k] + h[i * 3 + 2] * v[2 * 3 + k];
      norm += u[k][i] * u[k][i];
    }
    norm = std::sqrt(norm);
    for (int i = 0; i < 3; ++i) u[k][i] /= norm;
  }
  const double u3[3] = {u[0][1] * u[1][2] - u[0][2] * u[1][1], u[0][2] * u[1][0] - u[0][0] * u[1][2],
                        u[0][0] * u[1][1] - u[0][1] * u[1][0]};
  const double dv = det3(v) < 0 ? -1.0 : 1.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r[i * 3 + j] = v[i * 3 + 0] * u[0][j] + v[i * 3 + 1] * u[1][j] + dv * v[i * 3 + 2] * u3[j];
}

}  // namespace

void rigid_fit_ref(const float* source, const float* target, const float* weight, int64_t fits, int64_t source_fits,
                   int64_t p, float* pose, int32_t* status) {
  fit_each(source, target, weight, fits, source_fits, p, pose, status, kabsch_rotation, false);
}

}  // namespace pointrt::pose
