// The tensor family's pass "tensor-fold-expand-into-gather": GatherElements(data, Expand(i, shape))
// becomes the internal GatherElementsExpanded(data, i, shape) when nothing else reads the Expand's
// output. torch.gather on an expanded index (kNN grouping in point transformers and PointNet++
// re-implementations) exports exactly that pair: the Expand writes C copies of each index as int64
// and GatherElements reads them all back; folded, only i is read (gather.h, stride 0 on the
// broadcast dims) and the node's result is the same.
#include "graph/ir.h"
#include "ops/onnx/tensor/kernels.h"
#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/registry.h"

namespace pointrt::tensor {

namespace {
bool is_onnx(const Node& n, const char* op) { return !n.removed && n.domain.empty() && n.op_type == op; }
}  // namespace

bool fold_expand_into_gather_elements(Graph& g) {
  const std::vector<int> readers = reader_counts(g);  // subgraph reads and graph outputs count
  bool changed = false;
  for (Node& gather : g.nodes) {
    if (!is_onnx(gather, "GatherElements") || gather.inputs.size() != 2) continue;
    const int expanded = gather.inputs[1];
    if (expanded < 0 || readers[expanded] != 1 || g.values[expanded].producer < 0) continue;
    Node& expand = g.nodes[g.values[expanded].producer];
    if (!is_onnx(expand, "Expand") || expand.inputs.size() != 2 || expand.outputs.size() != 1 ||
        expand.outputs[0] != expanded || expand.inputs[0] < 0 || expand.inputs[1] < 0)
      continue;
    gather.op_type = "GatherElementsExpanded";
    gather.domain = kInternalDomain;
    gather.opset = 1;
    gather.inputs = {gather.inputs[0], expand.inputs[0], expand.inputs[1]};
    expand.removed = true;
    changed = true;
  }
  return changed;
}

void add_gather_elements(Family& family) {
  family.rows.add({"", "GatherElements", 11, 21, kCopyTypes, make_gather_elements, ""});
  family.rows.add({kInternalDomain, "GatherElementsExpanded", 1, 1, kCopyTypes, make_gather_elements_expanded,
                   "internal: GatherElements whose indices come from an Expand nobody else reads (made by the tensor "
                   "pass); the broadcast indices are read in place"});
  family.passes.push_back({"tensor-fold-expand-into-gather",
                           "GatherElements(data, Expand(i, shape)) reads i broadcast in place when nothing else reads "
                           "the Expand",
                           fold_expand_into_gather_elements});
}

}  // namespace pointrt::tensor
