// ONNX control flow: If, Loop and Scan. Their bodies are subgraphs (graph attributes) that run
// through the executor (runtime/executor.h) with a nested RunContext and the node's frame as the
// enclosing scope, so a body reads outer-scope values by name, at any depth. Each body's plan is
// built once, in the kernel factory. There is no separate oracle and optimised kernel: the work is
// in the bodies, which are ordinary graphs; the kernels only bind values and copy slices.
//
// Sequences and optionals: If branches run with ExecutionPlan::run_any (a branch may return a
// sequence or an optional, typed or not); a Loop body does when its types or its carried values at
// run time include a sequence or an optional.
// If (opsets 1-21): input `cond` (bool, one element); attributes then_branch, else_branch (graphs
//   without inputs, as many outputs as the node). The chosen branch's outputs become the node's; they
//   may differ in shape between branches, not in element type (where the file declares both: an
//   error at prepare naming the node and the output), nor in rank where the node's output declares
//   one (an output of unknown rank is the union of both: torch 1.13 exports squeeze() of a dynamic
//   axis as an If between Squeeze and Identity). A condition that is a constant at
//   prepare builds only the chosen branch (and the fold-if pass in fold_if.cc inlines it).
// Loop (opsets 1-21): inputs M (int64 trip count, optional), cond (bool, optional), N loop-carried
//   initial values; attribute body with inputs (iteration_num, cond_in, N carried) and outputs
//   (cond_out, N carried, K scan outputs). Runs while (M absent or i < M) and (cond), cond being the
//   input (true if absent) and then each iteration's cond_out. Outputs: the N final carried values
//   (their shapes may change between iterations) and K scan outputs, each iteration's value stacked
//   along a new axis 0 (equal shapes across iterations, else an error). Zero iterations: carried
//   outputs are the initial values, scan outputs have 0 rows (the rest of the shape as the body
//   declares it when fixed, else shape [0]; float32 when the body declares no element type).
// Scan (opset 8 with a leading batch axis and optional sequence_lens, which must be absent or full
//   length; opsets 9-21 without): N state inputs, M scan inputs; attributes body, num_scan_inputs,
//   scan_input_axes, scan_input_directions, scan_output_axes, scan_output_directions (axes may be
//   negative from opset 11). Every scan input has the same length T along its axis; iteration t
//   feeds element t (T-1-t for a reverse direction) of each scan input to the body; the body's K
//   scan outputs are stacked along their output axis, in reverse for a reverse direction.
// Errors (one line, naming the node): a missing body, a body with the wrong number of inputs or
// outputs, a condition or trip count that is not one element, scan inputs of different lengths,
// a scan output whose shape changes between iterations, an axis out of range.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "runtime/executor.h"

namespace pointrt::control {

std::unique_ptr<OpKernel> make_if(const KernelInit& init);
std::unique_ptr<OpKernel> make_loop(const KernelInit& init);
std::unique_ptr<OpKernel> make_scan(const KernelInit& init);

/// The graph attribute `name` of the node (an error naming the node when it is missing).
const Graph& body_graph(const KernelInit& init, const std::string& name);

/// The plan of a body graph, built with the operator table.
std::shared_ptr<const ExecutionPlan> make_body_plan(const KernelInit& init, const std::string& name);

/// Runs `plan` (the node's attribute `attr`) with `inputs` bound to its graph inputs: a fresh run
/// cache, profile rows scoped "<node>/<attr>/", the node's frame as the enclosing scope.
std::vector<Tensor> run_body(const KernelContext& ctx, const ExecutionPlan& plan, const std::string& attr,
                             std::vector<Tensor> inputs);

/// The same with values of any kind (a body taking or making sequences or optionals).
std::vector<AnyValue> run_body_any(const KernelContext& ctx, const ExecutionPlan& plan, const std::string& attr,
                                   std::vector<AnyValue> inputs);

/// True when the graph's inputs or outputs include a sequence or an optional (its plan must then
/// run with ExecutionPlan::run_any).
bool has_non_tensor_io(const Graph& g);

/// Element `index` along `axis` of `t` (that axis removed), copied.
Tensor slice_along_axis(const Tensor& t, int axis, int64_t index);

/// Copies `part` (one iteration's value) into position `index` along the axis `axis` of `out`,
/// whose shape is part's with that axis inserted.
void place_along_axis(Tensor& out, int axis, int64_t index, const Tensor& part);

/// The body output's declared shape when every dimension is fixed (for zero-iteration scan
/// outputs), else nullopt.
std::optional<Shape> fixed_declared_shape(const Graph& body, int output);

/// One element of a bool (or numeric) tensor as a truth value; an error naming `what` otherwise.
bool scalar_truth(const KernelContext& ctx, const Tensor& t, const char* what);

}  // namespace pointrt::control
