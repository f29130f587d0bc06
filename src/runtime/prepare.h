// Prepare: the named, ordered list of graph passes a Session runs on its copy of the model's
// graph before the executor builds the plan (`pointrt inspect --passes MODEL` prints the list and
// what each pass did). The list is: check-supported (subgraphs included), float16-via-float32
// (runtime/low_precision.h), prepare-subgraphs (each
// If/Loop/Scan body, copied, runs the passes below), then (with SessionOptions::optimize)
// fold-constants (keeping DequantizeLinear for the QDQ pass), eliminate-common-subexpressions
// (runtime/common_subexpressions.h), every family's passes
// (ops/registry.h) in family order, fold-constants again; then eliminate-dead-nodes. After the passes the session
// builds the ExecutionPlan (runtime/executor.h) and releases constants whose readers keep packed copies.
#pragma once

#include <string>
#include <vector>

#include "graph/pass.h"
#include "runtime/executor.h"

namespace pointrt {

/// The passes of prepare, in order. `file` names the model in errors (check-supported reports
/// every node that cannot run in one Error). `table` serves the kernels (a session's table has its
/// plugins' rows too, runtime/plugin.h); the passes keep a pointer to it: it must outlive them.
std::vector<GraphPass> prepare_passes(const SessionOptions& options, const std::string& file,
                                      const OpTable& table = op_table());

/// What one pass did (for `inspect --passes`).
struct PassReport {
  std::string name;
  bool changed = false;
  size_t nodes_after = 0;
  double milliseconds = 0;
};

/// Runs `passes` in order on `g` (compacting it after each change); appends a report per pass to
/// `reports` when given.
void run_passes(Graph& g, const std::vector<GraphPass>& passes, std::vector<PassReport>* reports = nullptr);

/// After the plan is built: a constant whose every reader keeps a packed copy
/// (OpKernel::releases_constant_input), or that no node reads any more, is replaced by a
/// data-less placeholder of the same dtype and shape.
void release_packed_constants(Graph& g, const ExecutionPlan& plan);

}  // namespace pointrt
