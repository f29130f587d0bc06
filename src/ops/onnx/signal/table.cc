// The ONNX signal family: DFT, STFT, window functions, MelWeightMatrix.
#include "ops/families.h"
#include "ops/onnx/signal/windows.h"

namespace pointrt {

Family register_onnx_signal() {
  using namespace signal;
  Family family{"onnx/signal"};
  add_signal_rows(family.rows);
  return family;
}

}  // namespace pointrt
