// Import of NVIDIA CUDA-CenterPoint / 3DSparseConvolution `scn.onnx` files (OPS.md "Files written
// by other exporters"): their default-domain SparseConvolution / ScatterDense nodes are rewritten
// in place into the pointrt domain so that the ordinary importer can read the model.
//
// Rewrite:
//  - the features graph input keeps its element type (float16 in NVIDIA's files) and gets N
//    symbolic; the graph gains an int32 input `indices` [N, 4] (columns in the order of
//    input_spatial_shape: (batch, z, y, x) for format "zyx");
//  - initializers and graph outputs keep their types: float16 weights and features run through
//    float32 kernels with casts that prepare inserts (runtime/low_precision.h), and the outputs
//    are float16 as the file declares;
//  - SparseConvolution(x, W, b) -> pointrt::SparseConv(x, idx(x), W, b) -> (y, idx(y));
//  - Relu / Add on sparse tensors stay standard nodes on the features; the result keeps the
//    sites of the (first) input;
//  - ScatterDense(x) -> pointrt::ScatterDense(x, idx(x)) with spatial_shape = input_spatial_shape,
//    batch_size = output_shape[0];
//  - Reshape / Transpose with a `dims` attribute -> standard Reshape (shape as an int64
//    initializer) / Transpose (perm);
//  - stale value_info is dropped.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "graph/onnx_import.h"
#include "graph/scn_import.h"

#include "core/checked_size.h"
#include "onnx/onnx_pb.h"

namespace pointrt {

namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::string node_text(const onnx::NodeProto& n) {
  return str_cat("scn.onnx node '", n.name(), "' (", n.op_type(), ")");
}

std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name, bool required) {
  const auto* a = find_attr(n, name);
  if (!a) {
    if (required) fail(node_text(n), ": attribute '", name, "' is missing");
    return {};
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string canonical_activation(std::string s) {
  std::string l = s;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l.empty() || l == "none") return "None";
  if (l == "relu") return "ReLU";
  if (l == "leakyrelu") return "LeakyReLU";
  if (l == "sigmoid") return "Sigmoid";
  return s;  // left for the kernel to reject with its message
}

// One rewrite of a scn.onnx graph: the names taken, the sparse values' indices, what was done.
class ScnRewrite {
 public:
  explicit ScnRewrite(onnx::ModelProto& model) : model_(model), g_(model.mutable_graph()) {
    for (const auto& i : g_->input()) names_.insert(i.name());
    for (const auto& i : g_->initializer()) names_.insert(i.name());
    for (const auto& n : g_->node())
      for (const auto& o : n.output()) names_.insert(o);
  }

  void run() {
    features_input_ = find_features_input();
    indices_input_ = unique_name("indices");
    indices_of_[features_input_] = indices_input_;
    retype_inputs();
    for (auto& n : *g_->mutable_node()) rewrite_node(n);
    g_->clear_value_info();
    add_opsets();
  }

  std::string note() const {
    return str_cat(
        "rewritten from NVIDIA scn.onnx: ", convs_, " SparseConvolution -> pointrt::SparseConv, ", scatters_,
        " ScatterDense -> pointrt::ScatterDense, ", feature_ops_, " Add/Relu on sparse features, ", dims_nodes_,
        " Reshape/Transpose 'dims' -> standard inputs/attributes; input '", features_input_, "' is ",
        dtype_name(features_type_), " [N, ", channels_ >= 0 ? std::to_string(channels_) : std::string("C"),
        "] and the new int32 input '", indices_input_, "' [N, 4] holds the sites ",
        format_ == "zyx" ? "(batch, z, y, x)" : "(batch, i0, i1, i2)", " in the order of input_spatial_shape ",
        first_shape_, format_.empty() ? "" : str_cat(" (format '", format_, "')"));
  }

 private:
  std::string unique_name(const std::string& base) {
    std::string s = base;
    for (int i = 1; names_.count(s); ++i) s = str_cat(base, "_", i);
    names_.insert(s);
    return s;
  }

  // The sparse features input: the first graph input a SparseConvolution reads.
  std::string find_features_input() const {
    std::set<std::string> initializer_names;
    for (const auto& i : g_->initializer()) initializer_names.insert(i.name());
    for (const auto& n : g_->node()) {
      if (n.op_type() != "SparseConvolution" || n.input_size() < 1) continue;
      for (const auto& in : g_->input())
        if (in.name() == n.input(0) && !initializer_names.count(in.name())) return in.name();
    }
    fail("scn.onnx: no graph input feeds a SparseConvolution node; cannot locate the voxel features input");
  }

  // Features keep their element type (float16 in NVIDIA's files; it runs through float32, see
  // runtime/low_precision.h) with N symbolic; a new int32 input [N, 4] holds the sites.
  void retype_inputs() {
    for (auto& in : *g_->mutable_input()) {
      if (in.name() != features_input_) continue;
      features_type_ = static_cast<DType>(in.type().tensor_type().elem_type());
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (shape->dim_size() != 2)
        fail("scn.onnx: the features input '", features_input_, "' must be [N, C], it has rank ", shape->dim_size());
      shape->mutable_dim(0)->clear_dim_value();
      shape->mutable_dim(0)->set_dim_param("N");
      if (shape->dim(1).has_dim_value()) channels_ = shape->dim(1).dim_value();
    }
    auto* idx = g_->add_input();
    idx->set_name(indices_input_);
    auto* tt = idx->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::INT32);
    tt->mutable_shape()->add_dim()->set_dim_param("N");
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  }

  std::string sparse_indices(const onnx::NodeProto& n, const std::string& v) const {
    auto it = indices_of_.find(v);
    if (it == indices_of_.end())
      fail(node_text(n), ": input '", v,
           "' is not a sparse tensor (no SparseConvolution or the features input produces it)");
    return it->second;
  }

  // pointrt::<op> named like `n`, reading n's sparse input: its features and their indices.
  onnx::NodeProto sparse_node(const onnx::NodeProto& n, const char* op) const {
    onnx::NodeProto r;
    r.set_name(n.name());
    r.set_op_type(op);
    r.set_domain("pointrt");
    r.add_input(n.input(0));
    r.add_input(sparse_indices(n, n.input(0)));
    return r;
  }

  void rewrite_node(onnx::NodeProto& n) {
    if (!is_default_domain(n.domain())) return;
    const std::string op = n.op_type();
    if (op == "SparseConvolution") {
      n = sparse_conv(n);
      ++convs_;
    } else if (op == "ScatterDense") {
      n = scatter_dense(n);
      ++scatters_;
    } else if ((op == "Reshape" || op == "Transpose") && find_attr(n, "dims")) {
      n = standard_dims(n);
      ++dims_nodes_;
    } else if ((op == "Relu" || op == "Add") && n.input_size() >= 1 && indices_of_.count(n.input(0))) {
      // Features-only op on a sparse tensor: the sites pass through from the first input.
      if (op == "Add" && (n.input_size() != 2 || !indices_of_.count(n.input(1))))
        fail(node_text(n), ": Add between a sparse and a non-sparse tensor is not supported");
      indices_of_[n.output(0)] = indices_of_[n.input(0)];
      ++feature_ops_;
    }
  }

  onnx::NodeProto sparse_conv(const onnx::NodeProto& n) {
    static const std::set<std::string> kept_conv_attrs = {"kernel_size",
                                                          "stride",
                                                          "padding",
                                                          "dilation",
                                                          "subm",
                                                          "inverse",
                                                          "rulebook",
                                                          "activation",
                                                          "input_spatial_shape",
                                                          "output_spatial_shape",
                                                          "alpha"};
    if (n.input_size() < 2 || n.output_size() < 1)
      fail(node_text(n), ": needs inputs (x, weight[, bias]) and one output");
    onnx::NodeProto r = sparse_node(n, "SparseConv");
    for (int i = 1; i < n.input_size(); ++i) r.add_input(n.input(i));
    const std::string y = n.output(0);
    const std::string y_idx = unique_name(y + "_indices");
    r.add_output(y);
    r.add_output(y_idx);
    indices_of_[y] = y_idx;
    if (first_shape_.empty()) {
      auto s = attr_ints(n, "input_spatial_shape", true);
      first_shape_ = "[";
      for (size_t i = 0; i < s.size(); ++i) first_shape_ += str_cat(i ? ", " : "", s[i]);
      first_shape_ += "]";
    }
    const auto* inverse = find_attr(n, "inverse");
    const auto* transposed = find_attr(n, "transposed");
    bool is_inverse = inverse && inverse->i() != 0;
    for (const auto& a : n.attribute()) {
      if (kept_conv_attrs.count(a.name())) {
        auto* na = r.add_attribute();
        *na = a;
        if (a.name() == "activation") na->set_s(canonical_activation(a.s()));
      }
    }
    // A real transposed convolution (not spconv's inverse, which also sets `transposed`) keeps it.
    if (transposed && transposed->i() != 0 && !is_inverse) {
      *r.add_attribute() = *transposed;
      if (const auto* op_attr = find_attr(n, "output_padding")) *r.add_attribute() = *op_attr;
    }
    return r;
  }

  onnx::NodeProto scatter_dense(const onnx::NodeProto& n) {
    if (n.input_size() < 1 || n.output_size() < 1) fail(node_text(n), ": needs one input and one output");
    onnx::NodeProto r = sparse_node(n, "ScatterDense");
    r.add_output(n.output(0));
    auto shape = attr_ints(n, "input_spatial_shape", true);
    if (shape.size() != 3) fail(node_text(n), ": input_spatial_shape must have 3 values, got ", shape.size());
    auto out_shape = attr_ints(n, "output_shape", false);
    if (!out_shape.empty() && (out_shape.size() != 5 || !std::equal(shape.begin(), shape.end(), out_shape.begin() + 2)))
      fail(node_text(n), ": output_shape must be [B, C, S0, S1, S2] with S = input_spatial_shape [", shape[0], ", ",
           shape[1], ", ", shape[2], "]");
    auto* a = r.add_attribute();
    a->set_name("spatial_shape");
    a->set_type(onnx::AttributeProto::INTS);
    for (auto v : shape) a->add_ints(v);
    a = r.add_attribute();
    a->set_name("batch_size");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(out_shape.empty() ? 1 : out_shape[0]);
    if (const auto* f = find_attr(n, "format")) format_ = f->s();
    return r;
  }

  // Reshape / Transpose with a `dims` attribute: a shape initializer / the `perm` attribute.
  onnx::NodeProto standard_dims(const onnx::NodeProto& n) {
    const std::string op = n.op_type();
    auto dims = attr_ints(n, "dims", true);
    onnx::NodeProto r;
    r.set_name(n.name());
    r.set_op_type(op);
    r.add_input(n.input(0));
    r.add_output(n.output(0));
    if (op == "Reshape") {
      const std::string shape_name = unique_name(n.name().empty() ? n.output(0) + "_shape" : n.name() + "_shape");
      auto* t = g_->add_initializer();
      t->set_name(shape_name);
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(static_cast<int64_t>(dims.size()));
      for (auto d : dims) t->add_int64_data(d);
      r.add_input(shape_name);
    } else {
      auto* a = r.add_attribute();
      a->set_name("perm");
      a->set_type(onnx::AttributeProto::INTS);
      for (auto d : dims) a->add_ints(d);
    }
    return r;
  }

  void add_opsets() {
    bool has_pointrt = false;
    for (const auto& o : model_.opset_import()) has_pointrt |= o.domain() == "pointrt";
    if (!has_pointrt) {
      auto* o = model_.add_opset_import();
      o->set_domain("pointrt");
      o->set_version(1);
    }
    bool has_default = false;
    for (const auto& o : model_.opset_import()) has_default |= is_default_domain(o.domain());
    if (!has_default) {
      auto* o = model_.add_opset_import();
      o->set_domain("");
      o->set_version(11);
    }
  }

  onnx::ModelProto& model_;
  onnx::GraphProto* g_;
  std::set<std::string> names_;
  std::map<std::string, std::string> indices_of_;  // sparse features value -> its indices value
  std::string features_input_, indices_input_, format_, first_shape_;
  int64_t channels_ = -1;
  DType features_type_ = DType::kUndefined;
  int convs_ = 0, scatters_ = 0, dims_nodes_ = 0, feature_ops_ = 0;
};

}  // namespace

bool rewrite_nvidia_scn(onnx::ModelProto& model, std::vector<std::string>& notes) {
  bool found = false;
  for (const auto& n : model.graph().node())
    if (is_default_domain(n.domain()) && (n.op_type() == "SparseConvolution" || n.op_type() == "ScatterDense"))
      found = true;
  if (!found) return false;
  ScnRewrite rewrite(model);
  rewrite.run();
  notes.push_back(rewrite.note());
  return true;
}

}  // namespace pointrt
