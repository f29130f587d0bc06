#include "graph/tensor_proto.h"

#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "core/checked_size.h"
#include "core/common.h"
#include "core/file_io.h"
#include "core/subbyte.h"
#include "onnx/onnx_pb.h"

namespace pointrt {

DType dtype_from_onnx_code(int32_t t, const std::string& where) {
  switch (t) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::BFLOAT16:
    case 17:  // FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ (IR 9), UINT4, INT4 (IR 10):
    case 18:  // Debian's libonnx 1.12 has no names for them
    case 19:
    case 20:
    case 21:
    case 22: return static_cast<DType>(t);
    case onnx::TensorProto::STRING: return DType::kString;
    default: fail(where, ": unsupported element type code ", t);
  }
}

namespace {

// realpath(3), or "" when the path does not resolve.
std::string real_path(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> r(::realpath(path.c_str(), nullptr), &std::free);
  return r ? std::string(r.get()) : std::string();
}

bool is_inside(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (dir == "/") return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

struct ExternalLocation {
  std::string location;
  uint64_t offset = 0;
  bool has_length = false;
  uint64_t length = 0;
};

ExternalLocation parse_external_fields(const onnx::TensorProto& p, const std::string& where) {
  ExternalLocation r;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location")
      r.location = kv.value();
    else if (kv.key() == "offset")
      r.offset = static_cast<uint64_t>(parse_int64_strict(kv.value(), where + ": external data offset"));
    else if (kv.key() == "length") {
      r.length = static_cast<uint64_t>(parse_int64_strict(kv.value(), where + ": external data length"));
      r.has_length = true;
    }
  }
  if (r.location.empty()) fail(where, ": external data without a location");
  if (r.location.find('\0') != std::string::npos) fail(where, ": external data location contains a NUL byte");
  if (r.location[0] == '/')
    fail(where, ": external data location '", r.location, "' must be a relative path inside the model's folder");
  return r;
}

// The real path of the external data file, which must lie inside one of the allowed folders.
std::string resolve_external_file(const std::string& location, const ExternalDataRoots& roots,
                                  const std::string& where) {
  if (roots.base_dir.empty()) fail(where, ": external data '", location, "' but the model was not loaded from a file");
  std::string joined = roots.base_dir + "/" + location;
  std::string resolved = real_path(joined);
  int err = errno;
  if (resolved.empty()) fail(where, ": cannot open external data file '", joined, "' (", std::strerror(err), ")");
  std::vector<std::string> dirs = {roots.base_dir};
  dirs.insert(dirs.end(), roots.allowed_dirs.begin(), roots.allowed_dirs.end());
  for (const auto& d : dirs)
    if (is_inside(resolved, real_path(d))) return resolved;
  fail(where, ": external data location '", location, "' resolves to '", resolved,
       "', outside the model's folder (symbolic links are resolved; allow another folder with "
       "LoadOptions::external_data_dirs or --external-data-dir)");
}

Tensor read_external(const onnx::TensorProto& p, DType dt, const Shape& shape, size_t bytes,
                     const ExternalDataRoots& roots, const std::string& where) {
  ExternalLocation loc = parse_external_fields(p, where);
  if (loc.has_length && loc.length != bytes)
    fail(where, ": external data length ", loc.length, " does not match ", bytes, " bytes of ", dtype_name(dt), " ",
         shape_to_string(shape));
  std::string path = resolve_external_file(loc.location, roots, where);
  RegularFile file(path, where + " external data");
  if (loc.offset > file.size() || bytes > file.size() - loc.offset)
    fail(where, ": external data '", loc.location, "' has ", file.size(), " bytes, the tensor needs ", bytes,
         " at offset ", loc.offset);
  Tensor t = Tensor::allocate(dt, shape);  // size known to be backed by the file
  file.read_at(loc.offset, t.data(), bytes);
  return t;
}

template <typename Src, typename Dst>
void copy_typed(const google::protobuf::RepeatedField<Src>& src, Dst* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(src[static_cast<int>(i)]);
}

// Number of values in the typed field that holds `dt`.
int64_t typed_count(const onnx::TensorProto& p, DType dt) {
  if (is_int4_type(dt)) return p.int32_data_size();  // one packed byte (two elements) per int32
  switch (dt) {
    case DType::kFloat32: return p.float_data_size();
    case DType::kFloat64: return p.double_data_size();
    case DType::kInt64: return p.int64_data_size();
    case DType::kUInt32:
    case DType::kUInt64: return p.uint64_data_size();
    default: return p.int32_data_size();
  }
}

void copy_typed_field(const onnx::TensorProto& p, Tensor& t, int64_t n) {
  switch (t.dtype()) {
    case DType::kFloat32: copy_typed(p.float_data(), t.data_as<float>(), n); break;
    case DType::kFloat64: copy_typed(p.double_data(), t.data_as<double>(), n); break;
    case DType::kInt64: copy_typed(p.int64_data(), t.data_as<int64_t>(), n); break;
    case DType::kInt32: copy_typed(p.int32_data(), t.data_as<int32_t>(), n); break;
    case DType::kInt16: copy_typed(p.int32_data(), t.data_as<int16_t>(), n); break;
    case DType::kInt8: copy_typed(p.int32_data(), t.data_as<int8_t>(), n); break;
    case DType::kUInt8:
    case DType::kBool:
    case DType::kFloat8E4M3FN:  // float8 codes, one per int32
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: copy_typed(p.int32_data(), t.data_as<uint8_t>(), n); break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16: copy_typed(p.int32_data(), t.data_as<uint16_t>(), n); break;
    case DType::kUInt32: copy_typed(p.uint64_data(), t.data_as<uint32_t>(), n); break;
    case DType::kUInt64: copy_typed(p.uint64_data(), t.data_as<uint64_t>(), n); break;
    default: fail("unsupported element type ", dtype_name(t.dtype()));
  }
}

// string_data holds one bytes value per element (strings are never raw or external data).
Tensor string_tensor_from_proto(const onnx::TensorProto& p, const std::string& where) {
  Shape shape(p.dims().begin(), p.dims().end());
  int64_t n = checked_numel(shape, where);
  if (p.string_data_size() != n)
    fail(where, ": has ", p.string_data_size(), " strings, expected ", n, " for shape ", shape_to_string(shape));
  Tensor t = Tensor::allocate(DType::kString, shape);
  for (int64_t i = 0; i < n; ++i) t.data_as<std::string>()[i] = p.string_data(static_cast<int>(i));
  return t;
}

// int4/uint4: raw, external or int32_data hold packed bytes; the tensor gets one element per byte.
Tensor int4_tensor_from_proto(const onnx::TensorProto& p, DType dt, const Shape& shape, const ExternalDataRoots& roots,
                              const std::string& where) {
  const int64_t n = checked_numel(shape, where);
  const size_t packed = packed_int4_bytes(n);
  // The data present is checked before anything of the declared size is allocated (a file may
  // declare [2^62] with a few bytes).
  std::vector<uint8_t> bytes;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    const Tensor raw = read_external(p, DType::kUInt8, {static_cast<int64_t>(packed)}, packed, roots, where);
    bytes.assign(raw.data_as<uint8_t>(), raw.data_as<uint8_t>() + packed);
  } else if (p.has_raw_data()) {
    if (p.raw_data().size() != packed)
      fail(where, ": has ", p.raw_data().size(), " bytes of data, expected ", packed, " (", n, " packed ",
           dtype_name(dt), " values) for shape ", shape_to_string(shape));
    bytes.assign(p.raw_data().begin(), p.raw_data().end());
  } else {
    if (static_cast<size_t>(p.int32_data_size()) != packed)
      fail(where, ": has ", p.int32_data_size(), " int32_data values, expected ", packed, " (", n, " packed ",
           dtype_name(dt), " values) for shape ", shape_to_string(shape));
    bytes.resize(packed);
    for (size_t i = 0; i < packed; ++i) bytes[i] = static_cast<uint8_t>(p.int32_data(static_cast<int>(i)));
  }
  Tensor t = Tensor::allocate(dt, shape);
  unpack_int4(bytes.data(), n, dt == DType::kInt4, t.data_as<uint8_t>());
  return t;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& p, const ExternalDataRoots& roots, const std::string& where_in) {
  std::string where = where_in + " tensor '" + p.name() + "'";
  if (p.has_segment()) fail(where, ": segmented tensors are not supported");
  DType dt = dtype_from_onnx_code(p.data_type(), where);
  if (dt == DType::kString) return string_tensor_from_proto(p, where);
  Shape shape(p.dims().begin(), p.dims().end());
  // Every size is checked against the data actually present before memory is reserved: a file
  // may declare [1e12] with 4 bytes of data.
  int64_t n = checked_numel(shape, where);
  size_t bytes = checked_nbytes(dt, shape, where);
  if (is_int4_type(dt)) return int4_tensor_from_proto(p, dt, shape, roots, where);
  if (p.data_location() == onnx::TensorProto::EXTERNAL) return read_external(p, dt, shape, bytes, roots, where);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != bytes)
      fail(where, ": has ", p.raw_data().size(), " bytes of data, expected ", bytes, " for ", dtype_name(dt), " ",
           shape_to_string(shape));
    Tensor t = Tensor::allocate(dt, shape);
    if (bytes) std::memcpy(t.data(), p.raw_data().data(), bytes);
    return t;
  }
  int64_t got = typed_count(p, dt);
  if (got != n) fail(where, ": has ", got, " values, expected ", n, " for shape ", shape_to_string(shape));
  Tensor t = Tensor::allocate(dt, shape);
  copy_typed_field(p, t, n);
  return t;
}

}  // namespace pointrt
