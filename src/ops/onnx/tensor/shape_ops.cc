#include "ops/onnx/tensor/shape_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/checked_size.h"
#include "ops/onnx/tensor/kernels.h"

namespace pointrt::tensor {

Shape reshape_shape(const Shape& in, const std::vector<int64_t>& req, bool allow_zero, const std::string& where) {
  Shape out(req.size());
  int64_t infer_at = -1, known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i];
    if (d == -1) {
      if (infer_at >= 0) fail(where, ": shape ", shape_to_string(req), " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) fail(where, ": shape ", shape_to_string(req), " holds ", d, " (only -1 and sizes >= 0 are allowed)");
    if (d == 0) {
      has_zero = true;
      if (!allow_zero) {
        if (i >= in.size())
          fail(where, ": shape ", shape_to_string(req), " has 0 at position ", i,
               " (copy the input dim) but the input ", shape_to_string(in), " has rank ", in.size());
        d = in[i];
      }
    }
    out[i] = d;
    // A zero anywhere makes the product 0; only a product of nonzero dims can overflow.
    known = (known == 0 || d == 0) ? 0 : checked_dim_product(known, d, where, ": shape ", ShapeText{req});
  }
  const int64_t numel = shape_numel(in);
  if (infer_at >= 0) {
    if (allow_zero && has_zero)
      fail(where, ": shape ", shape_to_string(req), " combines -1 with a literal 0 under allowzero=1");
    if (known == 0)
      fail(where, ": cannot infer the -1 in shape ", shape_to_string(req), " for input ", shape_to_string(in),
           " (the other dims multiply to 0)");
    if (numel % known != 0)
      fail(where, ": cannot reshape input ", shape_to_string(in), " (", numel, " elements) to ", shape_to_string(req));
    out[infer_at] = numel / known;
  } else if (known != numel) {
    fail(where, ": cannot reshape input ", shape_to_string(in), " (", numel, " elements) to ", shape_to_string(req),
         " (resolved ", shape_to_string(out), ", ", known, " elements)");
  }
  return out;
}

Shape squeeze_shape(const Shape& in, const std::vector<int64_t>& axes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) drop[d] = in[d] == 1;
  } else {
    for (int64_t a : axes) {
      int64_t d = normalize_axis(a, rank, where);
      if (in[d] != 1)
        fail(where, ": cannot squeeze axis ", a, " of input ", shape_to_string(in), ": its size is ", in[d], ", not 1");
      drop[d] = true;
    }
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d]) out.push_back(in[d]);
  return out;
}

Shape unsqueeze_shape(const Shape& in, const std::vector<int64_t>& axes, const std::string& where) {
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) {
    int64_t d = normalize_axis(a, out_rank, where);
    if (inserted[d]) fail(where, ": 'axes' ", shape_to_string(axes), " names output axis ", d, " twice");
    inserted[d] = true;
  }
  Shape out(out_rank);
  size_t k = 0;
  for (int64_t d = 0; d < out_rank; ++d) out[d] = inserted[d] ? 1 : in[k++];
  return out;
}

namespace {
Tensor int64_vector(KernelContext& ctx, const std::vector<int64_t>& v) {
  Tensor& y = ctx.output(0, DType::kInt64, {static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(y.data(), v.data(), v.size() * 8);
  return y;
}
}  // namespace

std::unique_ptr<OpKernel> make_shape(const KernelInit& init, bool has_start_end) {
  const int64_t start = has_start_end ? init.attrs().get_int("start", 0) : 0;
  const bool has_end = has_start_end && init.attrs().has("end");
  const int64_t end = has_end ? init.attrs().get_int("end") : 0;
  return make_function_kernel([=](KernelContext& ctx) {
    const Shape& s = ctx.input(0).shape();
    const int64_t r = static_cast<int64_t>(s.size());
    int64_t b = start < 0 ? start + r : start, e = has_end ? (end < 0 ? end + r : end) : r;
    b = std::clamp<int64_t>(b, 0, r);
    e = std::clamp<int64_t>(e, 0, r);
    std::vector<int64_t> v;
    for (int64_t d = b; d < e; ++d) v.push_back(s[d]);
    int64_vector(ctx, v);
  });
}

std::unique_ptr<OpKernel> make_size(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    Tensor& y = ctx.output(0, DType::kInt64, {});
    *y.data_as<int64_t>() = ctx.input(0).numel();
  });
}

std::unique_ptr<OpKernel> make_reshape(const KernelInit& init, bool has_allowzero) {
  const bool allow_zero = has_allowzero && init.attrs().get_int("allowzero", 0) != 0;
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> req = read_int_list(ctx.input(1), ctx.where(), "input 1 (shape)");
    ctx.set_output(0, x.reshaped(reshape_shape(x.shape(), req, allow_zero, ctx.where())));
  });
}

std::unique_ptr<OpKernel> make_flatten(const KernelInit& init) {
  const int64_t axis_attr = init.attrs().get_int("axis", 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t r = static_cast<int64_t>(x.rank());
    if (axis_attr < -r || axis_attr > r)
      fail(ctx.where(), ": attribute 'axis' is ", axis_attr, ", outside [", -r, ", ", r, "] for input ",
           shape_to_string(x.shape()));
    const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < r; ++d) (d < axis ? outer : inner) *= x.dim(d);
    ctx.set_output(0, x.reshaped({outer, inner}));
  });
}

std::unique_ptr<OpKernel> make_squeeze(const KernelInit& init, bool axes_is_input) {
  const std::vector<int64_t> attr_axes = axes_is_input ? std::vector<int64_t>{} : init.attrs().get_ints("axes", {});
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = attr_axes;
    if (axes_is_input && ctx.has_input(1)) axes = read_int_list(ctx.input(1), ctx.where(), "input 1 (axes)");
    ctx.set_output(0, x.reshaped(squeeze_shape(x.shape(), axes, ctx.where())));
  });
}

std::unique_ptr<OpKernel> make_unsqueeze(const KernelInit& init, bool axes_is_input) {
  const std::vector<int64_t> attr_axes = axes_is_input ? std::vector<int64_t>{} : init.attrs().get_ints("axes");
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = axes_is_input ? read_int_list(ctx.input(1), ctx.where(), "input 1 (axes)") : attr_axes;
    ctx.set_output(0, x.reshaped(unsqueeze_shape(x.shape(), axes, ctx.where())));
  });
}

std::unique_ptr<OpKernel> make_constant(const KernelInit& init) {
  const Attributes& a = init.attrs();
  Tensor value;
  if (a.items.size() != 1)
    fail(init.where(), ": a Constant node needs exactly one value attribute, got ", a.items.size());
  if (const Tensor* t = a.get_tensor("value"))
    value = *t;
  else if (a.has("value_float")) {
    value = Tensor::allocate(DType::kFloat32, {});
    *value.data_as<float>() = a.get_float("value_float");
  } else if (a.has("value_int")) {
    value = Tensor::allocate(DType::kInt64, {});
    *value.data_as<int64_t>() = a.get_int("value_int");
  } else if (a.has("value_floats")) {
    auto v = a.get_floats("value_floats");
    value = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), value.data_as<float>());
  } else if (a.has("value_ints")) {
    auto v = a.get_ints("value_ints");
    value = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), value.data_as<int64_t>());
  } else {
    fail(init.where(), ": Constant attribute '", a.items.begin()->first, "' is not supported");
  }
  if (!value.defined()) fail(init.where(), ": Constant attribute 'value' holds no tensor");
  return make_function_kernel([value](KernelContext& ctx) {
    // A copy: callers may write into a graph output, the attribute must stay intact.
    Tensor& y = ctx.output(0, value.dtype(), value.shape());
    if (value.nbytes()) std::memcpy(y.data(), value.data(), value.nbytes());
  });
}

std::unique_ptr<OpKernel> make_constant_of_shape(const KernelInit& init) {
  Tensor value;
  if (const Tensor* t = init.attrs().get_tensor("value")) {
    if (t->numel() != 1)
      fail(init.where(), ": attribute 'value' must hold one element, got shape ", shape_to_string(t->shape()));
    value = *t;
  } else {
    value = Tensor::zeros(DType::kFloat32, {1});
  }
  return make_function_kernel([value](KernelContext& ctx) {
    std::vector<int64_t> shape = read_int_list(ctx.input(0), ctx.where(), "input 0 (shape)");
    for (int64_t d : shape)
      if (d < 0) fail(ctx.where(), ": input 0 (shape) ", shape_to_string(shape), " holds a negative dimension");
    Tensor& y = ctx.output(0, value.dtype(), shape);
    dispatch_by_size(value.dtype(), ctx.where().c_str(), [&](auto tag) {
      using E = decltype(tag);
      E v;
      std::memcpy(&v, value.data(), sizeof(E));
      std::fill(y.data_as<E>(), y.data_as<E>() + y.numel(), v);
    });
  });
}

std::unique_ptr<OpKernel> make_range(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor &ts = ctx.input(0), &tl = ctx.input(1), &td = ctx.input(2);
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx.input(i);
      if (t.dtype() != ts.dtype())
        fail(ctx.where(), ": input ", i, " is ", dtype_name(t.dtype()), " but input 0 (start) is ",
             dtype_name(ts.dtype()));
      if (t.numel() != 1) fail(ctx.where(), ": input ", i, " must be a scalar, got shape ", shape_to_string(t.shape()));
    }
    dispatch_numeric(ts.dtype(), ctx.where().c_str(), [&](auto tag) {
      using T = decltype(tag);
      const T start = *ts.data_as<T>(), limit = *tl.data_as<T>(), delta = *td.data_as<T>();
      if (delta == T(0)) fail(ctx.where(), ": input 2 (delta) is 0");
      int64_t n;
      if constexpr (std::is_floating_point<T>::value) {
        n = static_cast<int64_t>(std::ceil((static_cast<double>(limit) - start) / delta));
      } else {
        const double span = static_cast<double>(limit) - static_cast<double>(start);
        if ((span > 0) != (delta > T(0)) || span == 0)
          n = 0;
        else {
          const int64_t s = static_cast<int64_t>(limit) - static_cast<int64_t>(start), d = static_cast<int64_t>(delta);
          n = d > 0 ? (s + d - 1) / d : (s + d + 1) / d;
        }
      }
      n = std::max<int64_t>(n, 0);
      Tensor& y = ctx.output(0, ts.dtype(), {n});
      T* p = y.data_as<T>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    });
  });
}

}  // namespace pointrt::tensor
