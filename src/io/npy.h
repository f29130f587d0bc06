// NumPy .npy / .npz reading and writing (C order; the dtypes pointrt runs; big-endian arrays are
// converted on reading). Readers are strict: a malformed header, trailing bytes, a size that does
// not match the data or a corrupt zip are Errors naming the file (and member).
#pragma once

#include <map>
#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

/// Parse an .npy image. `where` names the source in errors.
Tensor parse_npy(const void* data, size_t size, const std::string& where);
Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);
/// Serialise to an .npy image in memory.
std::string npy_bytes(const Tensor& t);
/// Every array of an .npz (stored or deflated members), keyed by name without ".npy".
std::map<std::string, Tensor> parse_npz(const void* data, size_t size, const std::string& where);
std::map<std::string, Tensor> read_npz(const std::string& path);
/// Write an uncompressed .npz.
void write_npz(const std::string& path, const std::map<std::string, Tensor>& arrays);

}  // namespace pointrt
