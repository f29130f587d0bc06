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
#include <memory>
#include <mutex>

#include "graph/onnx_convert.h"
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
      if (a.type() == onnx::AttributeProto::GRAPHS) return "node '" + n.name() + "' has a list of subgraphs";
      if (a.type() == onnx::AttributeProto::GRAPH) {
        std::string inner = unsafe_for_onnx_inference(a.g());
        if (!inner.empty()) return inner;
      }
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
  // Every name of the main graph is in scope: subgraphs (If/Loop/Scan bodies) may read any of
  // them, and the file's nodes need not be sorted.
  onnx::checker::LexicalScopeContext scope;
  for (const auto& in : proto.graph().input()) scope.add(in.name());
  for (const auto& init : proto.graph().initializer()) scope.add(init.name());
  for (const auto& n : proto.graph().node())
    for (const auto& o : n.output()) scope.add(o);
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

// value_info and output types of `typed` (the same graph after inference) into `g`, and likewise
// into every subgraph.
void copy_inferred_types(onnx::GraphProto& typed, onnx::GraphProto& g) {  // moves typed's parts into g
  g.mutable_value_info()->Swap(typed.mutable_value_info());
  if (typed.output_size() == g.output_size()) g.mutable_output()->Swap(typed.mutable_output());
  if (typed.node_size() != g.node_size()) return;
  for (int i = 0; i < g.node_size(); ++i) {
    auto* tn = typed.mutable_node(i);
    auto* n = g.mutable_node(i);
    if (tn->attribute_size() != n->attribute_size()) continue;
    for (int j = 0; j < n->attribute_size(); ++j)
      if (n->attribute(j).type() == onnx::AttributeProto::GRAPH && tn->attribute(j).has_g())
        copy_inferred_types(*tn->mutable_attribute(j)->mutable_g(), *n->mutable_attribute(j)->mutable_g());
  }
}

bool has_subgraphs(const onnx::GraphProto& g) {
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH && a.has_g()) return true;
  return false;
}

// What copy_inferred_types reads of an inferred graph and nothing else: its value_info and
// outputs, and (only where there are subgraphs) one placeholder node per node with the graph
// attributes in place. Copying and sending the whole graph instead cost a third of the prepare
// time of a 33k-node file.
onnx::GraphProto inferred_types_only(const onnx::GraphProto& g) {
  onnx::GraphProto typed;
  *typed.mutable_value_info() = g.value_info();
  *typed.mutable_output() = g.output();
  if (!has_subgraphs(g)) return typed;
  for (const auto& n : g.node()) {
    auto* tn = typed.add_node();
    for (const auto& a : n.attribute()) {
      auto* ta = tn->add_attribute();
      ta->set_type(a.type());
      if (a.type() == onnx::AttributeProto::GRAPH && a.has_g()) *ta->mutable_g() = inferred_types_only(a.g());
    }
  }
  return typed;
}

// ONNX 1.12's inference functions can crash on malformed files even after the checks above (the
// fuzzer keeps finding ways into convPoolShapeInference), so inference runs in a forked child:
// it sends back the inferred value_info and output types; a crash, error or hang (60 s) there
// only costs the shape information. The parent may convert the graph meanwhile (import_onnx).
class ShapeInferenceChild {
 public:
  explicit ShapeInferenceChild(onnx::ModelProto& proto) {
    int fds[2];
    if (pipe(fds) != 0) {
      problem_ = "pipe() failed";
      return;
    }
    pid_ = fork();
    if (pid_ < 0) {
      close(fds[0]);
      close(fds[1]);
      problem_ = "fork() failed";
      return;
    }
    if (pid_ == 0) {
      close(fds[0]);
      run_child(proto, fds[1]);  // does not return
    }
    close(fds[1]);
    fd_ = fds[0];
  }
  // A conversion error while the child runs: it is killed and reaped, never left behind.
  ~ShapeInferenceChild() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    reap();
  }
  ShapeInferenceChild(const ShapeInferenceChild&) = delete;
  ShapeInferenceChild& operator=(const ShapeInferenceChild&) = delete;

  /// Waits for the result: "" and `typed` filled, or why there is none.
  std::string finish(onnx::GraphProto& typed) {
    if (pid_ <= 0) return problem_;
    std::string bytes;
    char buf[65536];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool timed_out = false;
    for (;;) {
      pollfd pfd{fd_, POLLIN, 0};
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      if (left <= 0 || poll(&pfd, 1, left) <= 0) {
        timed_out = true;
        break;
      }
      ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) break;
      bytes.append(buf, static_cast<size_t>(n));
    }
    if (timed_out) kill(pid_, SIGKILL);
    const int status = reap();
    if (timed_out) return "it did not finish within 60 s";
    if (WIFSIGNALED(status))
      return "it crashed inside the ONNX library (signal " + std::to_string(WTERMSIG(status)) + ")";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the ONNX library reported an inconsistency";
    if (!typed.ParseFromString(bytes)) return "its result could not be read";
    return "";
  }

 private:
  [[noreturn]] static void run_child(onnx::ModelProto& proto, int fd) {  // infer, send, exit without destructors
    int devnull = open("/dev/null", O_WRONLY);  // a crash here is expected and handled: keep it quiet
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    // Die by the signal itself: handlers inherited from the parent (a sanitizer's, libFuzzer's,
    // an embedding application's) would otherwise run here, e.g. libFuzzer writing a crash-*
    // file for a crash that this function contains.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP}) ::signal(sig, SIG_DFL);
#if POINTRT_HAS_ASAN
    __sanitizer_set_death_callback(nullptr);  // likewise for an ASan report: the exit status says it
#endif
    int status = 0;
    try {
      onnx::shape_inference::InferShapes(proto);
      std::string bytes = inferred_types_only(proto.graph()).SerializeAsString();
      for (size_t done = 0; done < bytes.size();) {
        ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
          status = 3;
          break;
        }
        done += static_cast<size_t>(n);
      }
    } catch (...) {
      status = 2;
    }
    close(fd);
    _exit(status);
  }
  int reap() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    pid_ = -1;
    return status;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string problem_;
};

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
  // "ai.onnx" and "" name the same default domain; ONNX's checker and inference know only "",
  // so a file importing "ai.onnx" (NVIDIA's scn.onnx does) would lose its type inference.
  bool has_default = false;
  for (const auto& op : proto.opset_import()) has_default |= op.domain().empty();
  for (auto& op : *proto.mutable_opset_import())
    if (!has_default && op.domain() == "ai.onnx") {
      op.set_domain("");
      has_default = true;
    }

  // ONNX shape/type inference fills value_info for intermediate edges; a failure here is not
  // fatal (our own kernels check shapes at run time), but a message is kept for `inspect`.
  // ONNX's inference functions assume a model that passes ONNX's checker (fuzzing found
  // crashes inside them on malformed attributes), so they only run on checked models.
  std::string unsafe = unsafe_for_onnx_inference(proto.graph());
  if (unsafe.empty()) unsafe = nodes_failing_onnx_checker(proto);
  std::unique_ptr<ShapeInferenceChild> inference;
  if (!unsafe.empty())
    impl->import_notes.push_back("ONNX shape inference skipped: " + unsafe);
  else
    inference = std::make_unique<ShapeInferenceChild>(proto);
  auto inferred = [&](onnx::GraphProto& typed) {
    std::string problem = inference->finish(typed);
    if (!problem.empty()) impl->import_notes.push_back("ONNX shape inference skipped: " + problem);
    inference.reset();
    return problem.empty();
  };
  // Subgraphs take their inferred types from the proto, before conversion; a graph without them
  // is converted while the child infers (a third of a 33k-node file's load time) and takes them
  // afterwards.
  if (inference && has_subgraphs(proto.graph())) {
    onnx::GraphProto typed;
    if (inferred(typed)) copy_inferred_types(typed, *proto.mutable_graph());
  }

  Graph& g = impl->graph;
  const auto& gp = proto.graph();
  for (const auto& op : proto.opset_import()) {
    std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    g.opsets[domain] = op.version();
  }
  if (!g.opsets.count("") && proto.opset_import_size() == 0) g.opsets[""] = 1;

  convert_graph(gp, g.opsets, roots, file, /*subgraph=*/false, g);
  if (inference) {
    onnx::GraphProto typed;
    if (inferred(typed)) apply_inferred_types(typed, g);
  }
  check_outer_scopes(g, file);

  auto info = [&](int id) { return value_info_of(g.values[id]); };
  for (int id : g.inputs) impl->inputs.push_back(info(id));
  for (int id : g.outputs) impl->outputs.push_back(info(id));
  return impl;
}

}  // namespace pointrt
