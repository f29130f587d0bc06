// libFuzzer targets for the array and point-cloud readers: one executable per reader, chosen at
// build time with -DFUZZ_READER_<NAME> (npy, npz, ply, pcd, bin). Reading may fail only with
// pointrt::Error; a crash, hang, leak, sanitizer report or any other exception is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "io/npy.h"
#include "io/point_cloud.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
#if defined(FUZZ_READER_NPY)
    pointrt::parse_npy(data, size, "fuzz.npy");
#elif defined(FUZZ_READER_NPZ)
    pointrt::parse_npz(data, size, "fuzz.npz");
#elif defined(FUZZ_READER_PLY)
    pointrt::parse_ply(data, size, "fuzz.ply");
#elif defined(FUZZ_READER_PCD)
    pointrt::parse_pcd(data, size, "fuzz.pcd");
#elif defined(FUZZ_READER_BIN)
    // The first byte picks the floats per point (as --bin-fields would), the rest is the file.
    if (size == 0) return 0;
    pointrt::parse_bin_cloud(data + 1, size - 1, data[0] % 8, "fuzz.bin");
#else
#error "define FUZZ_READER_NPY, _NPZ, _PLY, _PCD or _BIN"
#endif
  } catch (const pointrt::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz reader: an exception that is not a pointrt::Error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
