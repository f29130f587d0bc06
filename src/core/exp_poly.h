// Cephes' minimax polynomial for exp on [-ln2/2, ln2/2], shared by the vectorisable float exps
// (elementwise Exp, Softmax, LogSumExp). Straight-line arithmetic, so loops over it vectorise.
#pragma once

namespace pointrt {

/// The Horner chain of Cephes' expf: exp(r) = exp_poly(r) * r * r + r + 1 for |r| <= ln2/2.
/// Callers keep their own association of that last step (their results are bit-exact as before).
inline float exp_poly(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p;
}

}  // namespace pointrt
