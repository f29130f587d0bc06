// Cephes' minimax polynomial for exp on [-ln2/2, ln2/2], shared by the vectorisable float exps
// (elementwise Exp, Softmax, LogSumExp). Straight-line arithmetic, so loops over it vectorise.
#pragma once

namespace pointrt {

/// Cephes' coefficients, highest degree first (the fused and vector forms use the same ones).
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

/// The Horner chain of Cephes' expf: exp(r) = exp_poly(r) * r * r + r + 1 for |r| <= ln2/2.
/// Callers keep their own association of that last step (their results are bit-exact as before).
/// Written out, not as a loop: GCC 12 leaves a caller's loop around an inner loop scalar
/// ("control flow in loop"; LogSumExp and 16-wide Softmax rows ran 4-7x slower that way).
inline float exp_poly(float r) {
  const float* k = kExpPoly;
  float p = k[0];
  p = p * r + k[1];
  p = p * r + k[2];
  p = p * r + k[3];
  p = p * r + k[4];
  p = p * r + k[5];
  return p;
}

}  // namespace pointrt
