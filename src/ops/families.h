// The operator families: one registration function each, and the one list of them.
// Adding a family = a folder src/ops/<family>/ with a table.cc defining `Family register_<family>()`,
// its declaration here and its entry in kFamilies (docs/architecture.md, "How to add an operator").
#pragma once
#include "ops/registry.h"

namespace pointrt {

Family register_onnx_control();      // ops/onnx/control (If, Loop, Scan; its fold-if pass)
Family register_onnx_elementwise();  // ops/onnx/elementwise
Family register_onnx_sequence();     // ops/onnx/sequence (sequence and optional operators)
Family register_onnx_tensor();       // ops/onnx/tensor
Family register_onnx_reduce();       // ops/onnx/reduce
Family register_onnx_nn();           // ops/onnx/nn (and its Conv+BatchNorm+Relu pass)
Family register_onnx_image();        // ops/onnx/image (Resize, GridSample, ...)
Family register_onnx_rnn();          // ops/onnx/rnn (RNN, GRU, LSTM)
Family register_onnx_signal();       // ops/onnx/signal (DFT, STFT, windows, MelWeightMatrix)
Family register_onnx_strings();      // ops/onnx/strings (string operators, TfIdfVectorizer)
Family register_onnx_training();     // ops/onnx/training (ai.onnx.preview.training optimizers)
Family register_onnx_quant();        // ops/onnx/quant (QuantizeLinear, QLinearConv, ..., and its QDQ pass)
Family register_pointnet2();         // ops/pointnet2 (and its ONNX schemas)
Family register_sparse();            // ops/sparse (and the NVIDIA scn.onnx importer)
Family register_pose();              // ops/pose (MeanShift, InstanceReduce, RigidFit; their ONNX schemas)
Family register_detect();            // ops/detect (CenterPointDecode, BoxNMS; their ONNX schemas)

/// Every family, in registration order (the order of graph passes and importers).
inline constexpr Family (*kFamilies[])() = {
    register_onnx_control,  // first: its fold-if pass inlines branches before the other families' fusions
    register_onnx_elementwise, register_onnx_tensor,   register_onnx_reduce,
    register_onnx_quant,  // before nn: its QDQ pass must see the float Convs first
    register_onnx_nn,          register_onnx_image,    register_onnx_rnn,      register_onnx_signal,
    register_onnx_strings,     register_onnx_training, register_onnx_sequence, register_pointnet2,
    register_sparse,           register_pose,          register_detect,
};

}  // namespace pointrt
