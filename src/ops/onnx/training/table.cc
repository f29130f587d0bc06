// The ONNX training family: ai.onnx.preview.training Adagrad, Momentum, Adam.
#include "ops/families.h"
#include "ops/onnx/training/optimizers.h"

namespace pointrt {

Family register_onnx_training() {
  using namespace training;
  Family family{"onnx/training"};
  add_training_rows(family.rows);
  return family;
}

}  // namespace pointrt
