// libFuzzer target: arbitrary bytes as an ONNX file. Loading and preparing may fail only with
// pointrt::Error; any crash, hang, sanitizer report or other exception is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "pointrt/pointrt.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    pointrt::Model m = pointrt::Model::load_from_bytes(data, size, "", "fuzz.onnx");
    pointrt::Session s(m);
    (void)s;
  } catch (const pointrt::Error&) {}
  return 0;
}
