// The prepare pass "eliminate-common-subexpressions": a node that computes what an earlier node
// already computed (same domain, operator, opset, inputs and attributes) is removed and its
// readers read the earlier node's outputs. Exported graphs repeat work the exporter unrolled:
// yanx27's PointNet++ transposes the same input points 514 times (once per FPS step).
#pragma once

#include "graph/ir.h"

namespace pointrt {

/// Operators whose result is not a function of their inputs and attributes (random draws); never
/// merged nor folded.
bool is_nondeterministic(const Node& n);

/// Merges duplicate nodes in one sweep in node order (duplicates of duplicates included). Only
/// ai.onnx and pointrt-domain nodes without subgraphs; a node whose outputs are graph outputs or
/// are read by a subgraph is kept. Returns true when it removed a node.
bool eliminate_common_subexpressions(Graph& g);

}  // namespace pointrt
