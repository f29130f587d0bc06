// The fold-if pass (control family): If nodes with a condition constant in prepare are replaced by
// the chosen branch's nodes (fold_if.cc says how, and when an If stays).
#pragma once

#include "graph/ir.h"

namespace pointrt::control {

/// Inlines every If of `g` whose condition is a constant; true when it changed `g`.
bool fold_constant_ifs(Graph& g);

}  // namespace pointrt::control
