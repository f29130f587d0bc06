#include "ops/registry.h"

#include <algorithm>
#include <map>

#include "ops/families.h"

namespace pointrt {

namespace {

// Tell ONNX about the families' custom domains (version range from their schemas) and schemas,
// so the checker and shape inference at import know these operators.
void register_with_onnx(std::vector<onnx::OpSchema> schemas) {
  std::map<std::string, std::pair<int, int>> domains;
  for (const auto& s : schemas) {
    auto [it, inserted] = domains.emplace(s.domain(), std::make_pair(s.since_version(), s.since_version()));
    it->second.first = std::min(it->second.first, s.since_version());
    it->second.second = std::max(it->second.second, s.since_version());
  }
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  for (const auto& [domain, range] : domains)
    if (!ranges.Map().count(domain)) ranges.AddDomainToVersion(domain, range.first, range.second);
  for (auto& s : schemas) onnx::RegisterSchema(std::move(s));
}

Registry build_registry() {
  Registry r;
  std::vector<onnx::OpSchema> schemas;
  for (auto register_family : kFamilies) {
    Family f = register_family();
    r.families.push_back(f.name);
    for (const OpEntry& e : f.rows.entries()) r.table.add(e);
    for (auto& p : f.passes) r.passes.push_back(std::move(p));
    for (auto& s : f.schemas) schemas.push_back(std::move(s));
    for (auto importer : f.importers) r.importers.push_back(importer);
  }
  r.schemas = schemas;
  register_with_onnx(std::move(schemas));
  return r;
}

}  // namespace

const Registry& registry() {
  static const Registry r = build_registry();
  return r;
}

const OpTable& op_table() { return registry().table; }

}  // namespace pointrt
