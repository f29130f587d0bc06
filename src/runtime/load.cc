// Model::load: read the file, import it (graph/onnx_import.h) with the families' schemas and
// foreign importers registered (ops/registry.h).
#include <fstream>

#include "graph/onnx_import.h"
#include "ops/registry.h"

namespace pointrt {

Model Model::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot open the model file");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string dir = ".";
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos) dir = path.substr(0, slash);
  if (dir.empty()) dir = "/";
  return load_from_bytes(bytes.data(), bytes.size(), dir, path);
}

Model Model::load_from_bytes(const void* data, size_t size, const std::string& base_dir,
                             const std::string& display_name) {
  Model m;
  m.impl_ = import_onnx(data, size, base_dir, display_name, registry().importers);
  return m;
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
const std::map<std::string, int64_t>& Model::opsets() const { return impl_->graph.opsets; }
std::string Model::path() const { return impl_->path; }

}  // namespace pointrt
