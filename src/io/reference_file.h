// Named reference tensors saved by other tools: an .npz, or Polygraphy's `--save-outputs` JSON.
#pragma once

#include <map>
#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

/// Read every named array of `path`: ".npz" (numpy.savez), or ".json" written by
/// `polygraphy run --save-outputs` (RunResults: the first iteration of the runner named
/// `runner`, or of the first runner when `runner` is empty). Throws Error naming the file and
/// the entry that cannot be read.
std::map<std::string, Tensor> read_reference_file(const std::string& path, const std::string& runner = "");

/// The arrays of a Polygraphy RunResults JSON text (see read_reference_file).
std::map<std::string, Tensor> parse_polygraphy_json(const std::string& text, const std::string& where,
                                                    const std::string& runner = "");

/// Standard base64 (RFC 4648, '=' padding, whitespace ignored); an Error names `where` on bad input.
std::string base64_decode(const std::string& text, const std::string& where);

}  // namespace pointrt
