// Explicit registration of the operator families. Each family has one function,
// `Family register_<family>()` (declared and listed in ops/families.h), that returns everything it
// contributes: kernel table rows, graph passes, ONNX schemas of its own domain's operators (so that
// ONNX shape inference at import knows them) and importers of foreign files. Nothing registers
// itself from a static initializer; registry() calls every family once, in the order of
// kFamilies, on first use (thread-safe), and is the only place that touches ONNX's global schema
// registry.
#pragma once

#include <string>
#include <vector>

#include "graph/onnx_import.h"
#include "graph/pass.h"
#include "onnx/defs/schema.h"
#include "ops/kernel.h"

namespace pointrt {

/// What one operator family contributes.
struct Family {
  std::string name;                        // "onnx/nn", "pointnet2": the family's folder under src/ops
  OpTable rows;                            // its kernel table rows (merged into op_table())
  std::vector<GraphPass> passes;           // run by prepare, in family order, after constant folding
  std::vector<onnx::OpSchema> schemas;     // ONNX schemas of its custom-domain operators
  std::vector<ForeignImporter> importers;  // rewrites of foreign ONNX dialects (NVIDIA scn.onnx)
};

/// Everything the families registered, merged.
struct Registry {
  std::vector<std::string> families;       // names, in registration order
  OpTable table;                           // every row (overlapping opset ranges are an error)
  std::vector<GraphPass> passes;           // every family pass, in family order
  std::vector<ForeignImporter> importers;  // tried in family order at import; the first that rewrites wins
  // The families' ONNX schemas (also registered with ONNX): the one statement of each custom operator's
  // inputs, outputs and attributes, which the Python side is checked against (_pointrt.operator_schemas()).
  std::vector<onnx::OpSchema> schemas;
};

/// The registry, built on first use from ops/families.h's list. Building it also registers the
/// families' ONNX schemas (and their domains) with the ONNX library, once per process.
const Registry& registry();

}  // namespace pointrt
