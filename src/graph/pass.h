// A graph rewrite that prepare runs (constant folding, a family's fusions). Passes work on the IR
// only; they never see kernels.
#pragma once

#include <functional>
#include <string>

#include "graph/ir.h"

namespace pointrt {

/// One named graph pass. `run` returns true when it changed the graph (prepare then compacts it).
struct GraphPass {
  std::string name;         // short, unique: "nn-fuse-conv" (`pointrt inspect --passes` prints it)
  std::string description;  // one line: what it rewrites
  std::function<bool(Graph&)> run;
};

}  // namespace pointrt
