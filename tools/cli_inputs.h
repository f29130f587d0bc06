// Building a run's feeds from command-line options: files, or seeded random data.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/tensor_compare.h"
#include "pointrt/pointrt.h"

namespace pointrt {

struct InputOptions {
  std::vector<std::string> inputs;  // "NAME=FILE" or "FILE.npz"
  std::vector<std::string> dims;    // "SYMBOL=VALUE"
  unsigned seed = 0;
  int bin_fields = 0;  // floats per point in .bin clouds; 0: the model's last input
                       // dimension when it is 4 or more (nuScenes 5), else 4 (KITTI)
};

/// Feeds for every model input: from the given files, else random (uniform [-1, 1) floats,
/// zeros for integers) with symbolic dimensions from --dim (default 1).
std::map<std::string, Tensor> make_feeds(const std::vector<ValueInfo>& inputs, const InputOptions& options);

}  // namespace pointrt
