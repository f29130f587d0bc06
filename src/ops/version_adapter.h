// Old operator versions served by the newer version's kernel: an adapter turns the old
// version's inputs and attributes (e.g. Reshape-1's `shape` attribute, Add-6's legacy
// `broadcast`/`axis`) into the inputs the newer kernel takes, and runs it. The adapter sees the
// node's run-time inputs; tensors it returns may be views of them (Tensor::reshaped) or new ones.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ops/kernel.h"

namespace pointrt {

/// Returns the newer kernel's inputs (an undefined Tensor = an omitted optional input).
using InputAdapter = std::function<std::vector<Tensor>(KernelContext& ctx)>;

/// A kernel that runs `inner` on `adapt(ctx)`.
std::unique_ptr<OpKernel> make_adapted_kernel(std::unique_ptr<OpKernel> inner, InputAdapter adapt);

/// The node's inputs as tensors (absent ones undefined), for adapters that change one of them.
std::vector<Tensor> node_inputs(KernelContext& ctx);

/// Legacy (opset < 7) broadcasting of input `b` to input `a`: with broadcast = 0 the shapes must
/// be equal; with broadcast = 1, b's shape must match a's dimensions starting at `axis` (default:
/// aligned to a's trailing dimensions), size-1 dimensions of b repeating. Returns b as a view
/// shaped for numpy broadcasting against a (trailing 1s appended).
Tensor legacy_broadcast_view(const Tensor& a, const Tensor& b, bool broadcast, bool has_axis, int64_t axis,
                             const std::string& where);

/// Factory for an opset < 7 binary operator (Add-1..6, Pow-1, And-1, ...): reads `broadcast` and
/// `axis`, reshapes input 1 with legacy_broadcast_view and runs the kernel `inner` builds.
KernelFactory legacy_broadcast_factory(KernelFactory inner);

}  // namespace pointrt
