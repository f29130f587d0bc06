#include "graph/onnx_import.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define POINTRT_HAS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POINTRT_HAS_ASAN 1
#endif
#endif
#if POINTRT_HAS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <queue>

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace pointrt {

namespace {

// ONNX 1.12's shape-inference functions trust some attribute values (a zero stride divides
// by zero inside convPoolShapeInference). Inference runs on untrusted files, so skip it when a
// node carries a value those functions cannot take; our kernels report such nodes properly.
std::string unsafe_for_onnx_inference(const onnx::GraphProto& g) {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      const std::string& k = a.name();
      bool must_be_positive = k == "strides" || k == "dilations" || k == "kernel_shape" || k == "blocksize";
      if (must_be_positive) {
        for (auto v : a.ints())
          if (v <= 0) return "node '" + n.name() + "' has " + k + " value " + std::to_string(v);
        if (a.has_i() && a.i() <= 0) return "node '" + n.name() + "' has " + k + " value " + std::to_string(a.i());
      }
      if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
        return "node '" + n.name() + "' has a subgraph";
    }
  }
  return "";
}

// Every node checked against its ONNX schema (attribute names and types, input and output
// counts); "" when all pass. Graph-level rules (declared output types, ...) are not required.
std::string nodes_failing_onnx_checker(const onnx::ModelProto& proto) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(proto.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const auto& op : proto.opset_import()) opsets[op.domain()] = static_cast<int>(op.version());
  ctx.set_opset_imports(opsets);
  onnx::checker::LexicalScopeContext scope;
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& n : proto.graph().node()) {
    // An opset newer than this ONNX library knows (18+ with Debian's 1.12) cannot be checked,
    // and inference would run stale functions on it (the fuzzer crashed one that way).
    std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto range = known.find(domain);
    auto imported = opsets.find(domain);
    if (range != known.end() && imported != opsets.end() && imported->second > range->second.second)
      return "opset " + std::to_string(imported->second) + " of domain '" + domain +
             "' is newer than the ONNX library's (" + std::to_string(range->second.second) + ")";
    try {
      onnx::checker::check_node(n, ctx, scope);
    } catch (const std::exception& e) {
      std::string what = e.what();
      return "node '" + n.name() + "' fails the ONNX checker: " + what.substr(0, what.find('\n'));
    }
  }
  return "";
}

// ONNX 1.12's inference functions can crash on malformed files even after the checks above (the
// fuzzer keeps finding ways into convPoolShapeInference), so inference runs in a forked child:
// it sends back the inferred value_info and output types; a crash, error or hang (60 s) there
// only costs the shape information. Returns "" on success, else why it was skipped.
std::string infer_shapes_isolated(onnx::ModelProto& proto) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe() failed";
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "fork() failed";
  }
  if (pid == 0) {  // child: infer, send the typed edges, exit without running destructors
    close(fds[0]);
    int devnull = open("/dev/null", O_WRONLY);  // a crash here is expected and handled: keep it quiet
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    // Die by the signal itself: handlers inherited from the parent (a sanitizer's, libFuzzer's,
    // an embedding application's) would otherwise run here, e.g. libFuzzer writing a crash-*
    // file for a crash that this function contains.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP}) signal(sig, SIG_DFL);
#if POINTRT_HAS_ASAN
    __sanitizer_set_death_callback(nullptr);  // likewise for an ASan report: the exit status says it
#endif
    int status = 0;
    try {
      onnx::shape_inference::InferShapes(proto);
      onnx::GraphProto typed;
      *typed.mutable_value_info() = proto.graph().value_info();
      *typed.mutable_output() = proto.graph().output();
      std::string bytes = typed.SerializeAsString();
      for (size_t done = 0; done < bytes.size();) {
        ssize_t n = write(fds[1], bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
          status = 3;
          break;
        }
        done += static_cast<size_t>(n);
      }
    } catch (...) {
      status = 2;
    }
    close(fds[1]);
    _exit(status);
  }
  close(fds[1]);
  std::string bytes;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool timed_out = false;
  for (;;) {
    pollfd pfd{fds[0], POLLIN, 0};
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0 || poll(&pfd, 1, left) <= 0) {
      timed_out = true;
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (timed_out) return "it did not finish within 60 s";
  if (WIFSIGNALED(status))
    return "it crashed inside the ONNX library (signal " + std::to_string(WTERMSIG(status)) + ")";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the ONNX library reported an inconsistency";
  onnx::GraphProto typed;
  if (!typed.ParseFromString(bytes)) return "its result could not be read";
  *proto.mutable_graph()->mutable_value_info() = typed.value_info();
  if (typed.output_size() == proto.graph().output_size()) *proto.mutable_graph()->mutable_output() = typed.output();
  return "";
}

void fill_value_info(const onnx::ValueInfoProto& vi, Value& v) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 0) {
    try {
      v.dtype = dtype_from_onnx_code(tt.elem_type(), "value '" + vi.name() + "'");
    } catch (const Error&) {}
  }
  if (tt.has_shape()) {
    v.has_shape = true;
    v.shape.clear();
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value())
        dim.value = d.dim_value();
      else if (d.has_dim_param())
        dim.symbol = d.dim_param();
      v.shape.push_back(dim);
    }
  }
}

Attribute convert_attribute(const onnx::AttributeProto& a, const ExternalDataRoots& roots, const std::string& where) {
  Attribute r;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      r.kind = Attribute::Kind::kFloat;
      r.f = a.f();
      break;
    case onnx::AttributeProto::INT:
      r.kind = Attribute::Kind::kInt;
      r.i = a.i();
      break;
    case onnx::AttributeProto::STRING:
      r.kind = Attribute::Kind::kString;
      r.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      r.kind = Attribute::Kind::kTensor;
      r.t = tensor_from_proto(a.t(), roots, where);
      break;
    case onnx::AttributeProto::GRAPH: r.kind = Attribute::Kind::kGraph; break;  // subgraphs: not executed
    case onnx::AttributeProto::FLOATS:
      r.kind = Attribute::Kind::kFloats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      r.kind = Attribute::Kind::kInts;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      r.kind = Attribute::Kind::kStrings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::TENSORS: r.kind = Attribute::Kind::kTensors; break;
    default:
      // Old files leave `type` unset; infer it from the populated field.
      if (a.has_f()) {
        r.kind = Attribute::Kind::kFloat;
        r.f = a.f();
      } else if (a.has_i()) {
        r.kind = Attribute::Kind::kInt;
        r.i = a.i();
      } else if (a.has_s()) {
        r.kind = Attribute::Kind::kString;
        r.s = a.s();
      } else if (a.has_t()) {
        r.kind = Attribute::Kind::kTensor;
        r.t = tensor_from_proto(a.t(), roots, where);
      } else if (a.floats_size()) {
        r.kind = Attribute::Kind::kFloats;
        r.floats.assign(a.floats().begin(), a.floats().end());
      } else if (a.ints_size()) {
        r.kind = Attribute::Kind::kInts;
        r.ints.assign(a.ints().begin(), a.ints().end());
      } else if (a.strings_size()) {
        r.kind = Attribute::Kind::kStrings;
        r.strings.assign(a.strings().begin(), a.strings().end());
      } else
        fail(where, ": attribute '", a.name(), "' has no value");
  }
  return r;
}

// Constant node -> tensor.
Tensor constant_node_value(const Node& n) {
  const auto& items = n.attrs.items;
  if (items.size() != 1) fail(n.describe(), ": a Constant node needs exactly one value attribute");
  const auto& [key, a] = *items.begin();
  if (key == "value") return a.t;
  if (key == "value_float") {
    Tensor t = Tensor::allocate(DType::kFloat32, {});
    *t.data_as<float>() = a.f;
    return t;
  }
  if (key == "value_int") {
    Tensor t = Tensor::allocate(DType::kInt64, {});
    *t.data_as<int64_t>() = a.i;
    return t;
  }
  if (key == "value_floats") {
    Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(a.floats.size())});
    std::copy(a.floats.begin(), a.floats.end(), t.data_as<float>());
    return t;
  }
  if (key == "value_ints") {
    Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(a.ints.size())});
    std::copy(a.ints.begin(), a.ints.end(), t.data_as<int64_t>());
    return t;
  }
  fail(n.describe(), ": Constant attribute '", key, "' is not supported");
}

void topological_sort(Graph& g, const std::string& file) {
  size_t n = g.nodes.size();
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i)
    for (int in : g.nodes[i].inputs) {
      if (in < 0) continue;
      int p = g.values[in].producer;
      if (p >= 0) {
        ++indegree[i];
        consumers[p].push_back(static_cast<int>(i));
      }
    }
  // Keep file order among ready nodes (a min-heap on the original index) for stable plans.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!indegree[i]) ready.push(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--indegree[c] == 0) ready.push(c);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (indegree[i]) fail(file, ": the graph has a cycle through ", g.nodes[i].describe());
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(sorted);
  g.compact();
}

// A node's outputs as new values it produces ("" = omitted: -1). Every ONNX operator has at least
// one output; the graph passes and kernels may rely on outputs[0].
void add_node_outputs(Graph& g, const onnx::NodeProto& np, Node& n, const std::string& file) {
  for (const auto& o : np.output()) {
    if (o.empty()) {
      n.outputs.push_back(-1);
      continue;
    }
    if (g.find_value(o) >= 0)
      fail(file, ": ", n.describe(), " output '", o, "' is already produced elsewhere (SSA violation)");
    int id = g.add_value(o);
    g.values[id].producer = static_cast<int>(g.nodes.size());
    n.outputs.push_back(id);
  }
  if (std::none_of(n.outputs.begin(), n.outputs.end(), [](int id) { return id >= 0; }))
    fail(file, ": ", n.describe(), " has no outputs (every ONNX operator produces at least one)");
}

}  // namespace

std::shared_ptr<detail::ModelImpl> import_onnx(const void* data, size_t size, const ExternalDataRoots& roots,
                                               const std::string& file, const std::vector<ForeignImporter>& importers) {
  if (size == 0) fail(file, ": the model file is empty");
  if (size > static_cast<size_t>(INT32_MAX))
    fail(file, ": the model protobuf is ", size, " bytes; files over 2 GB must keep their weights as external data");
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    fail(file,
         ": not a valid ONNX model (the protobuf could not be parsed; the file may be truncated or not an ONNX file)");
  if (!proto.has_graph()) fail(file, ": the model has no graph (is this an ONNX file?)");

  auto impl = std::make_shared<detail::ModelImpl>();
  impl->path = file;
  impl->ir_version = proto.ir_version();
  impl->producer = proto.producer_name();
  for (auto importer : importers)
    if (importer(proto, impl->import_notes)) break;

  // ONNX shape/type inference fills value_info for intermediate edges; a failure here is not
  // fatal (our own kernels check shapes at run time), but a message is kept for `inspect`.
  // ONNX's inference functions assume a model that passes ONNX's checker (fuzzing found
  // crashes inside them on malformed attributes), so they only run on checked models.
  std::string unsafe = unsafe_for_onnx_inference(proto.graph());
  if (unsafe.empty()) unsafe = nodes_failing_onnx_checker(proto);
  if (!unsafe.empty()) {
    impl->import_notes.push_back("ONNX shape inference skipped: " + unsafe);
  } else {
    std::string problem = infer_shapes_isolated(proto);
    if (!problem.empty()) impl->import_notes.push_back("ONNX shape inference skipped: " + problem);
  }

  Graph& g = impl->graph;
  const auto& gp = proto.graph();
  g.name = gp.name();
  for (const auto& op : proto.opset_import()) {
    std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    g.opsets[domain] = op.version();
  }
  if (!g.opsets.count("") && proto.opset_import_size() == 0) g.opsets[""] = 1;

  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) fail(file, ": an initializer has no name");
    int id = g.add_value(init.name());
    g.values[id].constant = tensor_from_proto(init, roots, file + ":");
    g.values[id].dtype = g.values[id].constant->dtype();
    g.values[id].has_shape = true;
    for (int64_t d : g.values[id].constant->shape()) g.values[id].shape.push_back(Dim{d, ""});
  }
  for (const auto& in : gp.input()) {
    int id = g.find_value(in.name());
    if (id >= 0) continue;  // an input that is also an initializer: a constant with a default
    id = g.add_value(in.name());
    fill_value_info(in, g.values[id]);
    g.inputs.push_back(id);
  }

  // Create every node's outputs first: files need not be topologically sorted.
  g.nodes.reserve(gp.node_size());
  for (int ni = 0; ni < gp.node_size(); ++ni) {
    const auto& np = gp.node(ni);
    Node n;
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name().empty() ? str_cat(n.op_type, "_", ni) : np.name();
    if (n.op_type.empty()) fail(file, ": node ", ni, " has no op_type");
    auto ops = g.opsets.find(n.domain);
    if (ops == g.opsets.end())
      fail(file, ": ", n.describe(), " uses domain '", n.domain, "' which the model does not import (opset_import)");
    n.opset = ops->second;
    n.attrs.owner = n.describe();
    for (const auto& a : np.attribute())
      n.attrs.items[a.name()] = convert_attribute(a, roots, file + ": " + n.describe());
    add_node_outputs(g, np, n, file);
    g.nodes.push_back(std::move(n));
  }
  for (int ni = 0; ni < gp.node_size(); ++ni) {
    Node& n = g.nodes[ni];
    for (const auto& in : gp.node(ni).input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      int id = g.find_value(in);
      if (id < 0)
        fail(file, ": ", n.describe(), " input '", in,
             "' is not a graph input, an initializer or another node's output");
      n.inputs.push_back(id);
    }
  }
  for (const auto& vi : gp.value_info()) {
    int id = g.find_value(vi.name());
    if (id >= 0 && !g.values[id].constant) fill_value_info(vi, g.values[id]);
  }
  for (const auto& out : gp.output()) {
    int id = g.find_value(out.name());
    if (id < 0) fail(file, ": graph output '", out.name(), "' is not produced by any node");
    fill_value_info(out, g.values[id]);
    g.outputs.push_back(id);
  }
  topological_sort(g, file);

  // Constant nodes become constants right away.
  for (auto& n : g.nodes) {
    if (n.op_type != "Constant" || !n.domain.empty()) continue;
    if (n.outputs.size() != 1 || n.outputs[0] < 0) fail(file, ": ", n.describe(), " must have one output");
    Value& v = g.values[n.outputs[0]];
    v.constant = constant_node_value(n);
    v.dtype = v.constant->dtype();
    v.has_shape = true;
    v.shape.clear();
    for (int64_t d : v.constant->shape()) v.shape.push_back(Dim{d, ""});
    n.removed = true;
  }
  g.compact();

  auto info = [&](int id) {
    const Value& v = g.values[id];
    ValueInfo vi;
    vi.name = v.name;
    vi.dtype = v.dtype;
    vi.has_shape = v.has_shape;
    vi.shape = v.shape;
    return vi;
  };
  for (int id : g.inputs) impl->inputs.push_back(info(id));
  for (int id : g.outputs) impl->outputs.push_back(info(id));
  return impl;
}

}  // namespace pointrt
