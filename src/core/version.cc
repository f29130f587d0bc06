// Version and build information (`pointrt --version`, pointrt.build_info()).
#include <google/protobuf/stubs/common.h>
#include <oneapi/dnnl/dnnl.h>

#include "core/common.h"
#include "onnx/common/version.h"

#ifndef POINTRT_VERSION_STRING
#define POINTRT_VERSION_STRING "unknown"
#endif
#ifndef POINTRT_BUILD_TYPE
#define POINTRT_BUILD_TYPE "unknown"
#endif
#ifndef POINTRT_BUILD_FLAGS
#define POINTRT_BUILD_FLAGS ""
#endif

namespace pointrt {

const char* version() { return POINTRT_VERSION_STRING; }

std::string build_info() {
  const dnnl_version_t* dnnl = dnnl_version();
  int pb = GOOGLE_PROTOBUF_VERSION;
  std::string compiler =
#if defined(__clang__)
      str_cat("clang ", __clang_major__, ".", __clang_minor__, ".", __clang_patchlevel__);
#elif defined(__GNUC__)
      str_cat("gcc ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
#else
      "unknown";
#endif
  std::string flags = POINTRT_BUILD_FLAGS;
  return str_cat("pointrt ", version(), "\nONNX ", onnx::LAST_RELEASE_VERSION, " (libonnx)\nprotobuf ", pb / 1000000,
                 ".", pb / 1000 % 1000, ".", pb % 1000, "\noneDNN ", dnnl->major, ".", dnnl->minor, ".", dnnl->patch,
                 " (", dnnl->hash, ")\ncompiler ", compiler, "\nbuild ", POINTRT_BUILD_TYPE, flags.empty() ? "" : ", ",
                 flags);
}

}  // namespace pointrt
