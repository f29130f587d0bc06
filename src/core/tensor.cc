// Tensor, dtype and shape helpers of the public API.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include "core/checked_size.h"
#include "core/common.h"
#include "pointrt/pointrt.h"

namespace pointrt {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
    case DType::kUInt16: return 2;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kFloat64: return 8;
    case DType::kUInt32: return 4;
    case DType::kUInt64: return 8;
    case DType::kBFloat16: return 2;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4: return 1;  // unpacked, one per byte
    case DType::kString: return sizeof(std::string);
    default: return 0;
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kFloat64: return "float64";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUInt4: return "uint4";
    case DType::kInt4: return "int4";
    default: return "undefined";
  }
}

std::string shape_to_string(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n)) {
      for (int64_t z : s)
        if (z == 0) return 0;
      throw Error("shape " + shape_to_string(s) + " has more elements than int64 can count");
    }
  return n;
}

size_t Tensor::nbytes() const {
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel()), dtype_size(dtype_), &bytes))
    throw Error(std::string(dtype_name(dtype_)) + " " + shape_to_string(shape_) +
                " has more bytes than size_t can count");
  return bytes;
}

namespace {
// 64-byte aligned storage so SIMD kernels and oneDNN get aligned rows.
std::shared_ptr<void> aligned_storage(size_t bytes, DType dtype, const Shape& shape) {
  size_t padded = ((bytes + 63) / 64) * 64;
  if (padded == 0) padded = 64;
  void* p = padded < bytes ? nullptr : std::aligned_alloc(64, padded);
  if (!p)
    throw Error(str_cat("out of memory allocating ", format_bytes(bytes), " for a ", dtype_name(dtype), " ",
                        shape_to_string(shape), " tensor"));
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}
}  // namespace

Tensor Tensor::allocate(DType dtype, Shape shape) {
  size_t bytes = checked_nbytes(dtype, shape, "cannot allocate a tensor");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  if (dtype == DType::kString) {  // constructed std::string elements, destroyed with the storage
    const size_t n = static_cast<size_t>(t.numel());
    std::string* p = new (std::nothrow) std::string[n == 0 ? 1 : n];
    if (!p)
      throw Error(str_cat("out of memory allocating ", format_bytes(bytes), " for a string ", shape_to_string(t.shape_),
                          " tensor"));
    t.owner_ = std::shared_ptr<void>(p, [](void* q) { delete[] static_cast<std::string*>(q); });
  } else {
    t.owner_ = aligned_storage(bytes, dtype, t.shape_);
  }
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t = allocate(dtype, std::move(shape));
  if (dtype != DType::kString) std::memset(t.data_, 0, t.nbytes());  // strings start empty
  return t;
}

Tensor Tensor::wrap(DType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::wrap_shared(DType dtype, Shape shape, std::shared_ptr<void> owner, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.owner_ = std::move(owner);
  t.data_ = data;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = allocate(dtype_, shape_);
  if (dtype_ == DType::kString)
    std::copy(data_as<std::string>(), data_as<std::string>() + numel(), t.data_as<std::string>());
  else if (nbytes())
    std::memcpy(t.data_, data_, nbytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel())
    throw Error("cannot reshape " + shape_to_string(shape_) + " to " + shape_to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace pointrt
