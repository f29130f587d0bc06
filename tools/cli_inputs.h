// Building a run's feeds from command-line options: files, or seeded random data. Every
// argument is checked: unknown input names and --dim symbols, duplicate inputs, an .npz that lacks
// a model input are errors; extra .npz arrays and NaN/Inf values are warnings (or errors with
// --nonfinite error).
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "io/nonfinite.h"
#include "pointrt/pointrt.h"
#include "tools/cli_common.h"

namespace pointrt {

struct InputOptions {
  std::vector<std::string> inputs;  // "NAME=FILE" or "FILE.npz" (or "FILE" for one-input models)
  std::vector<std::string> dims;    // "SYMBOL=VALUE"
  unsigned seed = 0;
  int bin_fields = 0;                                    // floats per point in .bin clouds; 0: the model's last input
                                                         // dimension when it is 4 or more (nuScenes 5), else 4 (KITTI)
  std::string nonfinite = "warn";                        // error | warn | allow, for float inputs read from files
  size_t max_tensor_bytes = default_max_tensor_bytes();  // for random inputs
  std::string model;                                     // the model's file, for messages
};

/// --input, --dim, --seed, --bin-fields, --nonfinite.
void add_input_flags(CLI::App* app, InputOptions& options);

/// Feeds for every model input: from the given files, else random (uniform [-1, 1) floats,
/// zeros for integers) with symbolic dimensions from --dim (default 1). Notes and warnings go
/// to `log`.
std::map<std::string, Tensor> make_feeds(const std::vector<ValueInfo>& inputs, const InputOptions& options,
                                         std::ostream& log);

/// Feeds for a model whose inputs include sequences or optionals (ValueInfo::sequence/optional).
/// Tensor inputs as make_feeds gives them. A sequence input NAME takes the arrays NAME.0, NAME.1, ...
/// of the --input .npz files (consecutive from 0; none: an empty sequence); an optional tensor input
/// takes the array NAME, an optional sequence NAME.0, ...; neither given: an empty optional.
std::map<std::string, AnyValue> make_any_feeds(const std::vector<ValueInfo>& inputs, const InputOptions& options,
                                               std::ostream& log);

}  // namespace pointrt
