// Plugins for tests/unit/plugin_test.cc: one source, built as several libraries (CMake passes one
// TEST_PLUGIN_* definition each) that break the plugin contract in one way each.
#include <cstdio>
#include <stdexcept>

#include "pointrt/plugin.h"

namespace {

int same_shape(const void*, const PointrtTensorDesc* in, int32_t, PointrtTensorDesc* out, int32_t, char*, size_t) {
  out[0] = in[0];
  return 0;
}

int negative_shape(const void*, const PointrtTensorDesc* in, int32_t, PointrtTensorDesc* out, int32_t, char*, size_t) {
  out[0] = in[0];
  out[0].dims[0] = -5;
  return 0;
}

int copy_compute(const void*, const PointrtTensor* in, int32_t, PointrtTensor* out, int32_t, char*, size_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = 1;
  for (int32_t i = 0; i < in[0].desc.rank; ++i) n *= in[0].desc.dims[i];
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
  return 0;
}

int throwing_compute(const void*, const PointrtTensor*, int32_t, PointrtTensor*, int32_t, char*, size_t) {
  throw std::runtime_error("kernel exploded");
}

int failing_compute(const void*, const PointrtTensor*, int32_t, PointrtTensor*, int32_t, char* error, size_t cap) {
  std::snprintf(error, cap, "the input is not sorted\n");
  return 7;
}

int strict_create(const PointrtHostApi* host, const PointrtAttributes* attrs, void**, char* error, size_t cap) {
  int64_t bad = 0;
  if (host->attribute_int(attrs, "bad", &bad) < 0) {
    std::snprintf(error, cap, "attribute 'bad' must be an int");
    return 1;
  }
  if (bad) {
    std::snprintf(error, cap, "attribute 'bad' is %lld", static_cast<long long>(bad));
    return 1;
  }
  return 0;
}

#ifdef TEST_PLUGIN_TAKEN_DOMAIN
const char* kDomain = "pointrt";
#else
const char* kDomain = "test";
#endif

const PointrtOpDef kOps[] = {
    {kDomain, "Copy", 1, 1, 1, 1, 1, strict_create, nullptr, same_shape, copy_compute},
    {kDomain, "Throws", 1, 1, 1, 1, 1, nullptr, nullptr, same_shape, throwing_compute},
    {kDomain, "Fails", 1, 1, 1, 1, 1, nullptr, nullptr, same_shape, failing_compute},
    {kDomain, "NegativeShape", 1, 1, 1, 1, 1, nullptr, nullptr, negative_shape, copy_compute},
};

#ifdef TEST_PLUGIN_ABI_MISMATCH
const PointrtPlugin kPlugin = {POINTRT_PLUGIN_ABI_VERSION + 1, "from_the_future", 4, kOps};
#else
const PointrtPlugin kPlugin = {POINTRT_PLUGIN_ABI_VERSION, "test_plugin", 4, kOps};
#endif

}  // namespace

#ifdef TEST_PLUGIN_NO_ENTRY
extern "C" const PointrtPlugin* some_other_function(uint32_t) { return &kPlugin; }
#else
extern "C" const PointrtPlugin* pointrt_plugin_entry(uint32_t) {
#ifdef TEST_PLUGIN_REFUSES
  return nullptr;
#else
  return &kPlugin;
#endif
}
#endif
