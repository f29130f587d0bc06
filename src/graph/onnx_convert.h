// ONNX GraphProto -> pointrt Graph (values, nodes, attributes, subgraphs), for onnx_import.cc.
#pragma once

#include <map>
#include <string>

#include "graph/ir.h"
#include "graph/tensor_proto.h"

namespace onnx {
class GraphProto;
}  // namespace onnx

namespace pointrt {

/// Converts `gp` into `g`: initializers and Constant nodes become constants, every node gets its
/// attributes (graph attributes, the bodies of If/Loop/Scan, are converted recursively into
/// Attribute::g with the same opsets), values take the types and shapes the file declares, nodes
/// are sorted topologically (a node after the producers of every value its subgraphs read). In a
/// `subgraph`, a name the graph reads but does not define becomes an outer-scope reference (a value
/// with no producer, no constant, not an input: ir.h outer_scope_names); in a main graph it is an
/// error naming the file, the node and the value.
void convert_graph(const onnx::GraphProto& gp, const std::map<std::string, int64_t>& opsets,
                   const ExternalDataRoots& roots, const std::string& file, bool subgraph, Graph& g);

/// The types and shapes of `typed` (a graph's value_info and outputs after ONNX shape inference)
/// onto the converted main graph `g`, as convert_graph would have taken them from the file
/// (constants keep their own). Subgraphs are not visited: a graph with subgraphs takes its
/// inferred types before conversion.
void apply_inferred_types(const onnx::GraphProto& typed, Graph& g);

/// Every outer-scope name of every subgraph of `g` (at any depth) must be a value of an enclosing
/// graph; otherwise an error naming the file, the node owning the subgraph, the attribute and the
/// value.
void check_outer_scopes(const Graph& g, const std::string& file);

}  // namespace pointrt
