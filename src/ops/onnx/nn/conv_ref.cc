// Conv/ConvTranspose attribute parsing, shape rules and the naive reference kernels.
#include <algorithm>

#include "ops/onnx/nn/conv.h"

namespace pointrt::nn {

namespace {
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Pads the geometry out to three spatial dimensions (leading size-1 dims) so the loops below
// need one shape only.
struct Geo3 {
  int64_t in[3], out[3], k[3], s[3], d[3], p[3];
};
Geo3 to_geo3(const ConvGeometry& g) {
  Geo3 r{};
  size_t n = g.in_spatial.size(), off = 3 - n;
  for (int i = 0; i < 3; ++i) {
    r.in[i] = r.out[i] = r.k[i] = r.s[i] = r.d[i] = 1;
    r.p[i] = 0;
  }
  for (size_t i = 0; i < n; ++i) {
    r.in[off + i] = g.in_spatial[i];
    r.out[off + i] = g.out_spatial[i];
    r.k[off + i] = g.kernel[i];
    r.s[off + i] = g.strides[i];
    r.d[off + i] = g.dilations[i];
    r.p[off + i] = g.pad_begin[i];
  }
  return r;
}
}  // namespace

AutoPad parse_auto_pad(const Attributes& attrs, const std::string& where) {
  std::string s = attrs.get_string("auto_pad", "NOTSET");
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  fail(where, ": attribute auto_pad is '", s, "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
}

ConvAttrs parse_conv_attrs(const Attributes& attrs, bool transpose, const std::string& where) {
  ConvAttrs a;
  a.transpose = transpose;
  a.auto_pad = parse_auto_pad(attrs, where);
  a.group = attrs.get_int("group", 1);
  if (a.group < 1) fail(where, ": attribute group must be >= 1, got ", a.group);
  a.kernel_shape = attrs.get_ints("kernel_shape", {});
  a.strides = attrs.get_ints("strides", {});
  a.dilations = attrs.get_ints("dilations", {});
  a.pads = attrs.get_ints("pads", {});
  if (transpose) {
    a.output_padding = attrs.get_ints("output_padding", {});
    a.output_shape = attrs.get_ints("output_shape", {});
  }
  check_window_attrs(a.kernel_shape, a.strides, a.dilations, transpose ? nullptr : &a.pads, where);
  return a;
}

void check_window_attrs(const std::vector<int64_t>& kernel_shape, const std::vector<int64_t>& strides,
                        const std::vector<int64_t>& dilations, const std::vector<int64_t>* pads,
                        const std::string& where) {
  for (int64_t s : strides)
    if (s < 1) fail(where, ": attribute strides must be >= 1, got ", s);
  for (int64_t d : dilations)
    if (d < 1) fail(where, ": attribute dilations must be >= 1, got ", d);
  for (int64_t k : kernel_shape)
    if (k < 1) fail(where, ": attribute kernel_shape must be >= 1, got ", k);
  if (pads)
    for (int64_t p : *pads)
      if (p < 0) fail(where, ": attribute pads must be >= 0, got ", p);
}

std::vector<int64_t> window_attr_values(const std::vector<int64_t>& values, const char* name, int64_t dflt, size_t n,
                                        const std::string& where, const std::string& for_what) {
  if (values.empty()) return std::vector<int64_t>(n, dflt);
  if (values.size() != n)
    fail(where, ": attribute ", name, " has ", values.size(), " values, expected ", n, " for ", for_what);
  return values;
}

Shape ConvGeometry::output_shape() const {
  Shape s{batch, out_channels};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

namespace {

// Channel counts from X and W (and B's shape); errors name the mismatch.
void conv_channels(const ConvAttrs& a, const Shape& x, const Shape& w, const Shape* b, ConvGeometry& g,
                   const std::string& where) {
  if (g.in_channels % g.group) fail(where, ": X has ", g.in_channels, " channels, not divisible by group ", g.group);
  if (!a.transpose) {
    if (w[1] * g.group != g.in_channels)
      fail(where, ": W ", shape_to_string(w), " expects ", w[1] * g.group, " input channels (W[1] * group ", g.group,
           "), X ", shape_to_string(x), " has ", g.in_channels);
    g.out_channels = w[0];
    if (g.out_channels % g.group)
      fail(where, ": W has ", g.out_channels, " output channels, not divisible by group ", g.group);
  } else {
    if (w[0] != g.in_channels)
      fail(where, ": W ", shape_to_string(w), " expects ", w[0], " input channels (W[0]), X ", shape_to_string(x),
           " has ", g.in_channels);
    g.out_channels = w[1] * g.group;
  }
  if (b) {
    if (b->size() != 1 || (*b)[0] != g.out_channels)
      fail(where, ": input B has shape ", shape_to_string(*b), ", expected [", g.out_channels, "]");
  }
}

// Conv: padding (auto_pad) and output length of spatial axis i.
void conv_axis(const ConvAttrs& a, size_t i, const Shape& x, ConvGeometry& g, const std::string& where) {
  int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1, in = g.in_spatial[i], s = g.strides[i];
  if (a.auto_pad == AutoPad::kValid) g.pad_begin[i] = g.pad_end[i] = 0;
  if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
    g.pad_begin[i] = a.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    g.pad_end[i] = total - g.pad_begin[i];
  }
  int64_t span = in + g.pad_begin[i] + g.pad_end[i] - dk;
  if (span < 0)
    fail(where, ": input X ", shape_to_string(x), " is smaller than the dilated kernel (", dk, ") in spatial dim ", i,
         " even with padding");
  g.out_spatial[i] = span / s + 1;
}

// ConvTranspose: padding and output length of spatial axis i (output_padding `op`).
void conv_transpose_axis(const ConvAttrs& a, size_t i, int64_t op, const Shape& x, ConvGeometry& g,
                         const std::string& where) {
  const size_t nsp = g.in_spatial.size();
  int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1, in = g.in_spatial[i], s = g.strides[i];
  if (op < 0) fail(where, ": attribute output_padding must be >= 0, got ", op);
  int64_t natural = s * (in - 1) + op + dk;
  bool same = a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower;
  if (!a.output_shape.empty() || same) {
    int64_t out;
    if (!a.output_shape.empty()) {
      if (a.output_shape.size() != nsp && a.output_shape.size() != nsp + 2)
        fail(where, ": attribute output_shape ", shape_to_string(a.output_shape), " must have ", nsp, " values");
      out = a.output_shape[a.output_shape.size() - nsp + i];
    } else {
      out = in * s;
    }
    int64_t total = natural - out;
    g.pad_begin[i] = a.auto_pad == AutoPad::kSameUpper ? floor_div(total, 2) : total - floor_div(total, 2);
    g.pad_end[i] = total - g.pad_begin[i];
    g.out_spatial[i] = out;
  } else {
    if (a.auto_pad == AutoPad::kValid) g.pad_begin[i] = g.pad_end[i] = 0;
    g.out_spatial[i] = natural - g.pad_begin[i] - g.pad_end[i];
  }
  if (g.out_spatial[i] < 0)
    fail(where, ": output spatial dim ", i, " would be ", g.out_spatial[i], " for X ", shape_to_string(x));
}

}  // namespace

ConvGeometry conv_geometry(const ConvAttrs& a, const Shape& x, const Shape& w, const Shape* b,
                           const std::string& where) {
  if (x.size() < 3) fail(where, ": input X must have rank >= 3 ([N, C, spatial...]), got shape ", shape_to_string(x));
  if (w.size() != x.size())
    fail(where, ": input W has shape ", shape_to_string(w), ", expected rank ", x.size(), " to match X ",
         shape_to_string(x));
  size_t nsp = x.size() - 2;
  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = a.group;
  g.in_spatial.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty() && a.kernel_shape != g.kernel)
    fail(where, ": attribute kernel_shape ", shape_to_string(a.kernel_shape), " does not match W's spatial shape ",
         shape_to_string(g.kernel));
  for (int64_t k : g.kernel)
    if (k < 1) fail(where, ": W has an empty kernel ", shape_to_string(w));
  conv_channels(a, x, w, b, g, where);
  const std::string for_x = "input X " + shape_to_string(x);
  auto per_dim = [&](const std::vector<int64_t>& v, const char* name, int64_t dflt, size_t n) {
    return window_attr_values(v, name, dflt, n, where, for_x);
  };
  g.strides = per_dim(a.strides, "strides", 1, nsp);
  g.dilations = per_dim(a.dilations, "dilations", 1, nsp);
  std::vector<int64_t> pads = per_dim(a.pads, "pads", 0, 2 * nsp);
  g.pad_begin.assign(pads.begin(), pads.begin() + nsp);
  g.pad_end.assign(pads.begin() + nsp, pads.end());
  g.out_spatial.assign(nsp, 0);
  const std::vector<int64_t> output_padding =
      a.transpose ? per_dim(a.output_padding, "output_padding", 0, nsp) : std::vector<int64_t>();
  for (size_t i = 0; i < nsp; ++i) {
    if (a.transpose)
      conv_transpose_axis(a, i, output_padding[i], x, g, where);
    else
      conv_axis(a, i, x, g, where);
  }
  if (g.batch < 0 || g.in_channels < 0) fail(where, ": bad input shape ", shape_to_string(x));
  return g;
}

void conv_ref(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y) {
  Geo3 t = to_geo3(g);
  int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  int64_t in_size = t.in[0] * t.in[1] * t.in[2], out_size = t.out[0] * t.out[1] * t.out[2];
  int64_t k_size = t.k[0] * t.k[1] * t.k[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t m = 0; m < g.out_channels; ++m) {
      int64_t grp = m / mg;
      float* yo = y + (n * g.out_channels + m) * out_size;
      for (int64_t o0 = 0; o0 < t.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < t.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < t.out[2]; ++o2) {
            double acc = b ? b[m] : 0.0;
            for (int64_t c = 0; c < cg; ++c) {
              const float* xc = x + (n * g.in_channels + grp * cg + c) * in_size;
              const float* wc = w + (m * cg + c) * k_size;
              for (int64_t k0 = 0; k0 < t.k[0]; ++k0) {
                int64_t i0 = o0 * t.s[0] - t.p[0] + k0 * t.d[0];
                if (i0 < 0 || i0 >= t.in[0]) continue;
                for (int64_t k1 = 0; k1 < t.k[1]; ++k1) {
                  int64_t i1 = o1 * t.s[1] - t.p[1] + k1 * t.d[1];
                  if (i1 < 0 || i1 >= t.in[1]) continue;
                  for (int64_t k2 = 0; k2 < t.k[2]; ++k2) {
                    int64_t i2 = o2 * t.s[2] - t.p[2] + k2 * t.d[2];
                    if (i2 < 0 || i2 >= t.in[2]) continue;
                    acc += double(xc[(i0 * t.in[1] + i1) * t.in[2] + i2]) * wc[(k0 * t.k[1] + k1) * t.k[2] + k2];
                  }
                }
              }
            }
            yo[(o0 * t.out[1] + o1) * t.out[2] + o2] = static_cast<float>(acc);
          }
    }
}

void conv_transpose_ref(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y) {
  Geo3 t = to_geo3(g);
  int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  int64_t in_size = t.in[0] * t.in[1] * t.in[2], out_size = t.out[0] * t.out[1] * t.out[2];
  int64_t k_size = t.k[0] * t.k[1] * t.k[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t m = 0; m < g.out_channels; ++m) {
      int64_t grp = m / mg, mm = m % mg;
      float* yo = y + (n * g.out_channels + m) * out_size;
      std::vector<double> acc(out_size, b ? b[m] : 0.0);
      for (int64_t c = 0; c < cg; ++c) {
        int64_t ci = grp * cg + c;
        const float* xc = x + (n * g.in_channels + ci) * in_size;
        const float* wc = w + (ci * mg + mm) * k_size;  // W [C, M/group, K..]
        for (int64_t i0 = 0; i0 < t.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < t.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < t.in[2]; ++i2) {
              double xv = xc[(i0 * t.in[1] + i1) * t.in[2] + i2];
              for (int64_t k0 = 0; k0 < t.k[0]; ++k0) {
                int64_t o0 = i0 * t.s[0] - t.p[0] + k0 * t.d[0];
                if (o0 < 0 || o0 >= t.out[0]) continue;
                for (int64_t k1 = 0; k1 < t.k[1]; ++k1) {
                  int64_t o1 = i1 * t.s[1] - t.p[1] + k1 * t.d[1];
                  if (o1 < 0 || o1 >= t.out[1]) continue;
                  for (int64_t k2 = 0; k2 < t.k[2]; ++k2) {
                    int64_t o2 = i2 * t.s[2] - t.p[2] + k2 * t.d[2];
                    if (o2 < 0 || o2 >= t.out[2]) continue;
                    acc[(o0 * t.out[1] + o1) * t.out[2] + o2] += xv * wc[(k0 * t.k[1] + k1) * t.k[2] + k2];
                  }
                }
              }
            }
      }
      for (int64_t i = 0; i < out_size; ++i) yo[i] = static_cast<float>(acc[i]);
    }
}

}  // namespace pointrt::nn
