// Every operator family's list of table rows. Adding a family = one line here and one call in
// op_table() (kernel.cc).
#pragma once
#include "ops/kernel.h"

namespace pointrt {
void register_onnx_elementwise(OpTable& t);  // ops/onnx/elementwise
void register_onnx_tensor(OpTable& t);       // ops/onnx/tensor
void register_onnx_reduce(OpTable& t);       // ops/onnx/reduce
void register_onnx_nn(OpTable& t);           // ops/onnx/nn
void register_onnx_image(OpTable& t);        // ops/onnx/image (Resize, GridSample, ...)
void register_onnx_quant(OpTable& t);        // ops/onnx/quant (QuantizeLinear, QLinearConv, the QDQ pass)
void register_pointnet2(OpTable& t);         // ops/pointnet2
void register_sparse(OpTable& t);            // ops/sparse
void register_pose(OpTable& t);              // ops/pose (MeanShift, InstanceReduce, RigidFit)
void register_detect(OpTable& t);            // ops/detect (CenterPointDecode, BoxNMS)
}  // namespace pointrt
