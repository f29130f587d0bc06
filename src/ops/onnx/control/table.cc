// Operator table rows of the ONNX control-flow family (If, Loop, Scan; contract in control.h) and
// its fold-if pass.
#include "ops/families.h"
#include "ops/onnx/control/control.h"
#include "ops/onnx/control/fold_if.h"

namespace pointrt {

Family register_onnx_control() {
  Family family{"onnx/control"};
  OpTable& t = family.rows;
  t.add({"",
         "If",
         1,
         21,
         {},
         control::make_if,
         "tensor, sequence or optional outputs; branch outputs may differ in shape; a constant condition builds one "
         "branch (fold-if "
         "inlines it)"});
  t.add({"",
         "Loop",
         1,
         21,
         {},
         control::make_loop,
         "loop-carried tensors, sequences or optionals (shapes may change per iteration), scan outputs stacked "
         "on axis 0"});
  t.add({"",
         "Scan",
         8,
         21,
         {},
         control::make_scan,
         "axes and directions of scan inputs and outputs; Scan-8's batch axis, sequence_lens full length only"});
  family.passes.push_back({"fold-if", "an If whose condition is constant is replaced by the chosen branch's nodes",
                           control::fold_constant_ifs});
  return family;
}

}  // namespace pointrt
