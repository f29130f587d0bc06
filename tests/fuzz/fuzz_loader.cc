// libFuzzer target: arbitrary bytes as an ONNX file. Loading and preparing may fail only with
// pointrt::Error; any crash, hang, sanitizer report or other exception is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "pointrt/pointrt.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    pointrt::Model m = pointrt::Model::load_from_bytes(data, size, "", "fuzz.onnx");
    pointrt::SessionOptions o;
    o.max_tensor_bytes = size_t(64) << 20;  // constant folding of fuzzed shapes stays small
    pointrt::Session s(m, o);
    (void)s;
  } catch (const pointrt::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_loader: an exception that is not a pointrt::Error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
