// Model::load: read the file, import it (graph/onnx_import.h) with the families' schemas and
// foreign importers registered (ops/registry.h).
#include <climits>
#include <cstdint>

#include "core/file_io.h"
#include "graph/onnx_import.h"
#include "ops/registry.h"
#include "runtime/error_context.h"

namespace pointrt {

Model Model::load(const std::string& path, const LoadOptions& options) {
  return with_error_context(path, [&] {
    // Protobuf cannot parse more than 2 GiB; larger files must keep their weights external.
    std::string bytes = RegularFile(path).read_all(uint64_t(INT32_MAX));
    std::string dir = ".";
    auto slash = path.find_last_of('/');
    if (slash != std::string::npos) dir = path.substr(0, slash);
    if (dir.empty()) dir = "/";
    return load_from_bytes(bytes.data(), bytes.size(), dir, path, options);
  });
}

Model Model::load_from_bytes(const void* data, size_t size, const std::string& base_dir,
                             const std::string& display_name, const LoadOptions& options) {
  return with_error_context(display_name, [&] {
    Model m;
    m.impl_ = import_onnx(data, size, ExternalDataRoots(base_dir, options.external_data_dirs), display_name,
                          registry().importers);
    return m;
  });
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
const std::map<std::string, int64_t>& Model::opsets() const { return impl_->graph.opsets; }
std::string Model::path() const { return impl_->path; }

}  // namespace pointrt
