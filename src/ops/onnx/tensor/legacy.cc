// Tensor-family operator versions whose inputs changed (ops/version_adapter.h): each adapts the
// old version's attributes or inputs and runs the newer version's kernel.
//   Reshape-1..4: `shape` attribute                  -> Reshape-5 (shape input)
//   Split-1:      split lengths as optional input 1 (any numeric type) or attribute -> Split-13
//   Tile-1..5:    scalar inputs `tiles`, `axis`      -> Tile-6 (one repeats value per axis)
//   Pad-1:        `paddings` / `value` attributes    -> Pad-11 (pads, constant_value inputs)
#include "ops/onnx/tensor/legacy.h"
#include "ops/onnx/tensor/kernels.h"
#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/version_adapter.h"

namespace pointrt::tensor {
namespace {

Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

// Every element of a numeric tensor of rank <= 1 as a count (Split-1's `split` input has the
// data's type T, floats included).
std::vector<int64_t> read_counts(const Tensor& t, const std::string& where, const std::string& what) {
  if (t.rank() > 1) fail(where, ": ", what, " must be a 1-D tensor, got shape ", shape_to_string(t.shape()));
  std::vector<double> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kFloat16) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = half_to_float(t.data_as<uint16_t>()[i]);
  } else {
    dispatch_numeric(t.dtype(), where.c_str(), [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(t.data_as<T>()[i]);
    });
  }
  std::vector<int64_t> r;
  for (double d : v) {
    if (!(d >= 0 && d < 9.0e15) || d != static_cast<double>(static_cast<int64_t>(d)))
      fail(where, ": ", what, " holds ", d, ", not a length");
    r.push_back(static_cast<int64_t>(d));
  }
  return r;
}

}  // namespace

std::unique_ptr<OpKernel> make_reshape_v1(const KernelInit& init) {
  const Tensor shape = int64_tensor(init.attrs().get_ints("shape", {}));
  return make_adapted_kernel(make_reshape(init, false), [shape](KernelContext& ctx) {
    return std::vector<Tensor>{ctx.input(0), shape};
  });
}

std::unique_ptr<OpKernel> make_split_v1(const KernelInit& init) {
  const std::vector<int64_t> split_attr = init.attrs().get_ints("split", {});
  return make_adapted_kernel(make_split(init, true, false), [split_attr](KernelContext& ctx) {
    if (ctx.has_input(1) && !split_attr.empty())
      fail(ctx.where(), ": give the split lengths as input 1 or as attribute 'split', not both");
    std::vector<int64_t> split = split_attr;
    if (ctx.has_input(1)) split = read_counts(ctx.input(1), ctx.where(), "input 1 (split)");
    return std::vector<Tensor>{ctx.input(0), split.empty() ? Tensor() : int64_tensor(split)};
  });
}

std::unique_ptr<OpKernel> make_tile_v1(const KernelInit& init) {
  return make_adapted_kernel(make_tile(init), [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t tiles = read_int_scalar(ctx.input(1), ctx.where(), "input 1 (tiles)");
    const int64_t axis = normalize_axis(read_int_scalar(ctx.input(2), ctx.where(), "input 2 (axis)"),
                                        static_cast<int64_t>(x.rank()), ctx.where());
    std::vector<int64_t> repeats(x.rank(), 1);
    repeats[axis] = tiles;
    return std::vector<Tensor>{x, int64_tensor(repeats)};
  });
}

std::unique_ptr<OpKernel> make_pad_v1(const KernelInit& init) {
  const Tensor pads = int64_tensor(init.attrs().get_ints("paddings"));
  const float value = init.attrs().get_float("value", 0.f);
  return make_adapted_kernel(make_pad(init, true, false, false), [pads, value](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor v = Tensor::allocate(x.dtype(), {});
    if (x.dtype() == DType::kFloat16) {
      *v.data_as<uint16_t>() = float_to_half(value);
    } else {
      dispatch_all(x.dtype(), ctx.where().c_str(), [&](auto tag) {
        using T = decltype(tag);
        *v.data_as<T>() = static_cast<T>(value);
      });
    }
    return std::vector<Tensor>{x, pads, v};
  });
}

}  // namespace pointrt::tensor
