// Einsum: operands are contracted left to right. For each pair the labels are classed as batch
// (in both, still needed), contracted (in both, not needed later), left-only and right-only;
// each operand is gathered once into [batch, M, K] / [batch, K, N] order (diagonals taken,
// labels needed nowhere else summed, size-1 broadcast dims expanded, copy skipped when the
// layout already fits) and the pair becomes one batched GEMM (oneDNN sgemm for float32).
#include "ops/onnx/reduce/einsum.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "ops/onnx/reduce/matmul.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

// A strided view of an operand: dims/strides per position, labels may repeat (diagonal).
template <typename T>
struct View {
  const T* data = nullptr;
  std::vector<T> storage;  // owns data when it is an intermediate
  std::vector<int> labels;
  Shape dims;
  std::vector<int64_t> strides;
};

template <typename T>
View<T> view_of(const Tensor& t, const std::vector<int>& labels) {
  View<T> v;
  v.data = t.data_as<T>();
  v.labels = labels;
  v.dims = t.shape();
  v.strides.assign(v.dims.size(), 1);
  for (size_t i = v.dims.size(); i-- > 1;) v.strides[i - 1] = v.strides[i] * v.dims[i];
  return v;
}

// dst[o] = sum over the summed dims of src[offset(o) + offset(s)].
template <typename T>
void gather_sum(const T* src, const Shape& osz, const std::vector<int64_t>& ost, const Shape& ssz,
                const std::vector<int64_t>& sst, T* dst) {
  const int64_t out_n = shape_numel(osz), sum_n = shape_numel(ssz);
  if (out_n == 0) return;
  if (sum_n == 0) {
    std::fill(dst, dst + out_n, T(0));
    return;
  }
  const size_t orank = osz.size();
  const int64_t last = orank ? osz.back() : 1, last_stride = orank ? ost.back() : 0;
  const int64_t rows = out_n / last;
#pragma omp parallel if (out_n * sum_n > (1 << 15))
  {
    std::vector<int64_t> idx(ssz.size(), 0);  // odometer over the summed dims, one per thread
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      int64_t base = 0, rem = r;
      for (size_t a = orank - (orank ? 1 : 0); a-- > 0;) {
        base += (rem % osz[a]) * ost[a];
        rem /= osz[a];
      }
      T* out = dst + r * last;
      if (sum_n == 1) {
        for (int64_t j = 0; j < last; ++j) out[j] = src[base + j * last_stride];
        continue;
      }
      for (int64_t j = 0; j < last; ++j) out[j] = T(0);
      std::fill(idx.begin(), idx.end(), 0);
      int64_t soff = 0;
      for (int64_t s = 0; s < sum_n; ++s) {
        const T* p = src + base + soff;
        for (int64_t j = 0; j < last; ++j) out[j] = detail::wadd(out[j], p[j * last_stride]);
        for (size_t a = ssz.size(); a-- > 0;) {
          soff += sst[a];
          if (++idx[a] < ssz[a]) break;
          soff -= sst[a] * ssz[a];
          idx[a] = 0;
        }
      }
    }
  }
}

// True when `v` already is the contiguous operand with labels `keep` in that order (no
// diagonal, no summed or broadcast label), so materialize() would not copy.
template <typename T>
bool fits_without_copy(const View<T>& v, const std::vector<int>& keep, const std::vector<int64_t>& label_size) {
  if (v.labels != keep) return false;
  int64_t stride = 1;
  for (size_t i = keep.size(); i-- > 0;) {
    if (v.dims[i] != label_size[keep[i]]) return false;
    if (v.dims[i] != 1 && v.strides[i] != stride) return false;
    stride *= v.dims[i];
  }
  return true;
}

// Gather `v` into a contiguous operand whose labels are `keep` (in that order); labels of `v`
// not in `keep` are summed; kept size-1 dims broadcast to label_size.
template <typename T>
View<T> materialize(const View<T>& v, const std::vector<int>& keep, const std::vector<int64_t>& label_size) {
  // Per unique label: combined stride (diagonal = sum of strides) and size.
  std::vector<int> uniq;
  std::vector<int64_t> ustride, usize;
  for (size_t p = 0; p < v.labels.size(); ++p) {
    auto it = std::find(uniq.begin(), uniq.end(), v.labels[p]);
    if (it == uniq.end()) {
      uniq.push_back(v.labels[p]);
      ustride.push_back(v.strides[p]);
      usize.push_back(v.dims[p]);
    } else
      ustride[it - uniq.begin()] += v.strides[p];
  }
  Shape osz, ssz;
  std::vector<int64_t> ost, sst;
  bool identity = uniq.size() == v.labels.size() && keep.size() == uniq.size();
  for (size_t k = 0; k < keep.size(); ++k) {
    auto it = std::find(uniq.begin(), uniq.end(), keep[k]);
    if (it == uniq.end()) fail("einsum: internal error, label missing from an operand");
    const size_t u = it - uniq.begin();
    const int64_t full = label_size[keep[k]];
    const bool bcast = usize[u] == 1 && full != 1;
    osz.push_back(bcast ? full : usize[u]);
    ost.push_back(bcast ? 0 : ustride[u]);
    if (u != k || bcast) identity = false;
  }
  for (size_t u = 0; u < uniq.size(); ++u)
    if (std::find(keep.begin(), keep.end(), uniq[u]) == keep.end()) {
      ssz.push_back(usize[u]);
      sst.push_back(ustride[u]);
    }
  View<T> r;
  r.labels = keep;
  r.dims = osz;
  r.strides.assign(osz.size(), 1);
  for (size_t i = osz.size(); i-- > 1;) r.strides[i - 1] = r.strides[i] * osz[i];
  // Already contiguous in this order: no copy.
  bool contiguous = identity;
  for (size_t i = 0; contiguous && i < osz.size(); ++i) contiguous = osz[i] == 1 || ost[i] == r.strides[i];
  if (contiguous) {
    r.data = v.data;
    return r;
  }
  r.storage.resize(static_cast<size_t>(shape_numel(osz)));
  gather_sum(v.data, osz, ost, ssz, sst, r.storage.data());
  r.data = r.storage.data();
  return r;
}

template <typename T>
void einsum_typed(const EinsumPlan& plan, const std::vector<const Tensor*>& ins, Tensor& y) {
  const size_t n = ins.size();
  T* out = y.data_as<T>();
  if (y.numel() == 0) return;
  View<T> cur = view_of<T>(*ins[0], plan.inputs[0]);
  auto unique_labels = [](const std::vector<int>& l) {
    std::vector<int> u;
    for (int x : l)
      if (std::find(u.begin(), u.end(), x) == u.end()) u.push_back(x);
    return u;
  };
  for (size_t i = 1; i < n; ++i) {
    std::set<int> later(plan.output.begin(), plan.output.end());
    for (size_t j = i + 1; j < n; ++j) later.insert(plan.inputs[j].begin(), plan.inputs[j].end());
    View<T> x = view_of<T>(*ins[i], plan.inputs[i]);
    std::vector<int> lu = unique_labels(cur.labels), ru = unique_labels(x.labels);
    std::vector<int> batch, contracted, left, right;
    for (int l : lu) {
      const bool in_right = std::find(ru.begin(), ru.end(), l) != ru.end();
      if (in_right)
        (later.count(l) ? batch : contracted).push_back(l);
      else if (later.count(l))
        left.push_back(l);
    }
    for (int l : ru)
      if (std::find(lu.begin(), lu.end(), l) == lu.end() && later.count(l)) right.push_back(l);
    auto size_of = [&](const std::vector<int>& ls) {
      int64_t s = 1;
      for (int l : ls) s *= plan.label_size[l];
      return s;
    };
    std::vector<int> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), left.begin(), left.end());
    a_order.insert(a_order.end(), contracted.begin(), contracted.end());
    b_order.insert(b_order.end(), contracted.begin(), contracted.end());
    b_order.insert(b_order.end(), right.begin(), right.end());
    // An operand already laid out as [batch, K, M] or [batch, N, K] goes to the GEMM transposed
    // instead of being copied (e.g. attention's "bhqd,bhkd->bhqk").
    std::vector<int> a_trans_order = batch, b_trans_order = batch;
    a_trans_order.insert(a_trans_order.end(), contracted.begin(), contracted.end());
    a_trans_order.insert(a_trans_order.end(), left.begin(), left.end());
    b_trans_order.insert(b_trans_order.end(), right.begin(), right.end());
    b_trans_order.insert(b_trans_order.end(), contracted.begin(), contracted.end());
    const bool trans_a =
        !fits_without_copy(cur, a_order, plan.label_size) && fits_without_copy(cur, a_trans_order, plan.label_size);
    const bool trans_b =
        !fits_without_copy(x, b_order, plan.label_size) && fits_without_copy(x, b_trans_order, plan.label_size);
    View<T> a = materialize(cur, trans_a ? a_trans_order : a_order, plan.label_size);
    View<T> b = materialize(x, trans_b ? b_trans_order : b_order, plan.label_size);
    const int64_t nb = size_of(batch), M = size_of(left), K = size_of(contracted), N = size_of(right);
    View<T> r;
    r.labels = batch;
    r.labels.insert(r.labels.end(), left.begin(), left.end());
    r.labels.insert(r.labels.end(), right.begin(), right.end());
    for (int l : r.labels) r.dims.push_back(plan.label_size[l]);
    r.strides.assign(r.dims.size(), 1);
    for (size_t k = r.dims.size(); k-- > 1;) r.strides[k - 1] = r.strides[k] * r.dims[k];
    r.storage.assign(static_cast<size_t>(nb * M * N), T(0));
    if (K > 0) batched_matmul<T>(nb, M, N, K, a.data, M * K, b.data, K * N, r.storage.data(), trans_a, trans_b);
    r.data = r.storage.data();
    cur = std::move(r);
    if (cur.storage.size() && cur.data != cur.storage.data()) cur.data = cur.storage.data();
  }
  View<T> fin = materialize(cur, plan.output, plan.label_size);
  std::copy(fin.data, fin.data + y.numel(), out);
}

class EinsumKernel : public OpKernel {
 public:
  explicit EinsumKernel(const KernelInit& init) {
    terms_ = parse_einsum_equation(init.attrs().get_string("equation", ""), init.where());
    if (terms_.inputs.size() != init.num_inputs())
      fail(init.where(), ": the equation has ", terms_.inputs.size(), " input terms but the node has ",
           init.num_inputs(), " inputs");
  }
  void run(KernelContext& ctx) const override {
    std::vector<const Tensor*> ins;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      ins.push_back(&ctx.input(i));
      shapes.push_back(ins.back()->shape());
      if (ins.back()->dtype() != ins[0]->dtype())
        fail(ctx.where(), ": input ", i, " has element type ", dtype_name(ins.back()->dtype()), ", expected ",
             dtype_name(ins[0]->dtype()));
    }
    EinsumPlan plan = resolve_einsum(terms_, shapes, ctx.where());
    Tensor& y = ctx.output(0, ins[0]->dtype(), plan.output_shape);
    einsum_optimized(plan, ins, y);
  }

 private:
  EinsumTerms terms_;
};

}  // namespace

EinsumTerms parse_einsum_equation(const std::string& equation, const std::string& where) {
  std::string s;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  EinsumTerms t;
  auto parse_term = [&](const std::string& term) {
    std::vector<int> labels;
    bool ellipsis = false;
    for (size_t i = 0; i < term.size();) {
      if (term.compare(i, 3, "...") == 0) {
        if (ellipsis) fail(where, ": equation '", equation, "' has two ellipses in the term '", term, "'");
        ellipsis = true;
        labels.push_back(EinsumTerms::kEllipsis);
        i += 3;
      } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
        labels.push_back(static_cast<unsigned char>(term[i]));
        ++i;
      } else
        fail(where, ": equation '", equation, "' has an unexpected character '", term[i], "'");
    }
    return labels;
  };
  const size_t arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    t.inputs.push_back(parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    t.explicit_output = true;
    t.output = parse_term(s.substr(arrow + 2));
  }
  return t;
}

EinsumPlan resolve_einsum(const EinsumTerms& terms, const std::vector<Shape>& shapes, const std::string& where) {
  if (terms.inputs.size() != shapes.size())
    fail(where, ": the equation has ", terms.inputs.size(), " input terms but ", shapes.size(), " inputs were given");
  // Ellipsis rank of each input, and the largest.
  std::vector<int64_t> ell(shapes.size(), 0);
  int64_t E = 0;
  bool any_ellipsis = false;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& term = terms.inputs[i];
    const bool has = std::find(term.begin(), term.end(), EinsumTerms::kEllipsis) != term.end();
    const int64_t letters = static_cast<int64_t>(term.size()) - (has ? 1 : 0), rank = shapes[i].size();
    if (has ? rank < letters : rank != letters)
      fail(where, ": input ", i, " has shape ", shape_to_string(shapes[i]), " (rank ", rank, ") but its term names ",
           letters, " dimensions", has ? " plus an ellipsis" : "");
    ell[i] = has ? rank - letters : 0;
    E = std::max(E, ell[i]);
    any_ellipsis |= has;
  }
  EinsumPlan p;
  p.label_size.assign(128 + E, -1);
  std::vector<int> count(128 + E, 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<int> labels;
    for (int l : terms.inputs[i]) {
      if (l == EinsumTerms::kEllipsis)
        for (int64_t j = 0; j < ell[i]; ++j) labels.push_back(static_cast<int>(128 + E - ell[i] + j));
      else
        labels.push_back(l);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t size = shapes[i][d];
      int64_t& known = p.label_size[l];
      ++count[l];
      if (l >= 128) {  // ellipsis dims broadcast
        if (known == -1 || known == 1)
          known = size;
        else if (size != 1 && size != known)
          fail(where, ": ellipsis dimensions do not broadcast: input ", i, " has shape ", shape_to_string(shapes[i]));
      } else if (known == -1)
        known = size;
      else if (known != size)
        fail(where, ": label '", static_cast<char>(l), "' has size ", known, " elsewhere but ", size, " in input ", i,
             " (shape ", shape_to_string(shapes[i]), ")");
    }
    p.inputs.push_back(labels);
  }
  if (terms.explicit_output) {
    for (int l : terms.output) {
      if (l == EinsumTerms::kEllipsis) {
        for (int64_t j = 0; j < E; ++j) p.output.push_back(static_cast<int>(128 + j));
        continue;
      }
      if (p.label_size[l] < 0) fail(where, ": output label '", static_cast<char>(l), "' does not occur in any input");
      if (std::find(p.output.begin(), p.output.end(), l) != p.output.end())
        fail(where, ": output label '", static_cast<char>(l), "' is repeated");
      p.output.push_back(l);
    }
  } else {
    if (any_ellipsis)
      for (int64_t j = 0; j < E; ++j) p.output.push_back(static_cast<int>(128 + j));
    for (int l = 0; l < 128; ++l)
      if (count[l] == 1) p.output.push_back(l);
  }
  for (int l : p.output) p.output_shape.push_back(p.label_size[l]);
  return p;
}

void einsum_optimized(const EinsumPlan& plan, const std::vector<const Tensor*>& inputs, Tensor& y) {
  dispatch_numeric(y.dtype(), "Einsum", [&](auto tag) { einsum_typed<decltype(tag)>(plan, inputs, y); });
}

std::unique_ptr<OpKernel> make_einsum_kernel(const KernelInit& init) { return std::make_unique<EinsumKernel>(init); }

}  // namespace pointrt::reduce
