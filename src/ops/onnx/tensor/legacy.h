// Factories of tensor-family operator versions before opset 7 whose inputs differ from the
// newer version's (legacy.cc says how each is adapted).
#pragma once
#include "ops/kernel.h"

namespace pointrt::tensor {

std::unique_ptr<OpKernel> make_reshape_v1(const KernelInit& init);  // Reshape-1..4
std::unique_ptr<OpKernel> make_split_v1(const KernelInit& init);    // Split-1
std::unique_ptr<OpKernel> make_tile_v1(const KernelInit& init);     // Tile-1..5
std::unique_ptr<OpKernel> make_pad_v1(const KernelInit& init);      // Pad-1

}  // namespace pointrt::tensor
