// Cephes' minimax polynomial for exp on [-ln2/2, ln2/2], shared by the vectorisable float exps
// (elementwise Exp, Softmax, LogSumExp). Straight-line arithmetic, so loops over it vectorise.
#pragma once

namespace pointrt {

/// Cephes' coefficients, highest degree first (the fused and vector forms use the same ones).
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

/// The Horner chain of Cephes' expf: exp(r) = exp_poly(r) * r * r + r + 1 for |r| <= ln2/2.
/// Callers keep their own association of that last step (their results are bit-exact as before).
inline float exp_poly(float r) {
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i) p = p * r + kExpPoly[i];
  return p;
}

}  // namespace pointrt
