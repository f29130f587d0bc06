// The `pointrt` command line: inspect, run, bench, list-ops.
#include <malloc.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "core/common.h"
#include "graph/onnx_import.h"
#include "io/npy.h"
#include "ops/kernel.h"
#include "runtime/prepare.h"
#include "tools/cli_inputs.h"
#include "tools/ref_report.h"

using namespace pointrt;

namespace {

std::string domain_label(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// The prepare passes in order, run on a copy of the model's graph: what each changed.
void print_passes(const detail::ModelImpl& m) {
  std::vector<GraphPass> passes = prepare_passes(SessionOptions{}, m.path);
  Graph g = m.graph;
  std::vector<PassReport> reports;
  std::cout << "prepare passes (" << m.graph.nodes.size() << " nodes before):\n";
  std::string error;
  try {
    run_passes(g, passes, &reports);
  } catch (const Error& e) {
    error = e.what();
  }
  for (size_t i = 0; i < passes.size(); ++i) {
    std::cout << "  " << std::setw(2) << i + 1 << ". " << std::left << std::setw(22) << passes[i].name << std::right;
    if (i < reports.size())
      std::cout << (reports[i].changed ? "changed" : "no change") << ", " << reports[i].nodes_after << " nodes, "
                << std::fixed << std::setprecision(2) << reports[i].milliseconds << " ms";
    else
      std::cout << (i == reports.size() ? "FAILED (below)" : "not run");
    std::cout << "  (" << passes[i].description << ")\n";
  }
  if (!error.empty()) std::cout << "  " << error << "\n";
  std::cout << "then: the executor builds one kernel per node (packed weights), value lifetimes, and releases "
               "constants kept only as packed copies\n";
}

int cmd_inspect(const std::string& path, bool passes) {
  Model model = Model::load(path);
  const auto& m = *model.impl();
  std::cout << "model: " << path << "\n";
  std::cout << "ir_version: " << m.ir_version << (m.producer.empty() ? "" : ", producer: " + m.producer) << "\n";
  std::cout << "opsets:";
  for (const auto& [d, v] : m.graph.opsets) std::cout << " " << domain_label(d) << "=" << v;
  std::cout << "\n";
  for (const auto& n : m.import_notes) std::cout << "note: " << n << "\n";
  std::cout << "inputs:\n";
  for (const auto& v : model.inputs()) std::cout << "  " << v.to_string() << "\n";
  std::cout << "outputs:\n";
  for (const auto& v : model.outputs()) std::cout << "  " << v.to_string() << "\n";
  size_t weights = 0, weight_bytes = 0;
  for (const auto& v : m.graph.values)
    if (v.constant) {
      ++weights;
      weight_bytes += v.constant->nbytes();
    }
  std::cout << "initializers: " << weights << " (" << std::fixed << std::setprecision(2) << weight_bytes / 1048576.0
            << " MiB)\n";
  std::map<std::pair<std::string, std::string>, int> histogram;
  std::vector<std::string> unsupported;
  for (const auto& n : m.graph.nodes) {
    ++histogram[{n.domain, n.op_type}];
    if (!op_table().find(n.domain, n.op_type, n.opset))
      unsupported.push_back(str_cat(n.describe(), " at opset ", n.opset));
  }
  std::cout << "nodes: " << m.graph.nodes.size() << "\n";
  std::vector<std::pair<int, std::string>> rows;
  for (const auto& [k, c] : histogram) rows.push_back({c, (k.first.empty() ? "" : k.first + "::") + k.second});
  std::sort(rows.begin(), rows.end(),
            [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (const auto& [c, name] : rows) std::cout << "  " << std::setw(5) << c << "  " << name << "\n";
  // Numerics a deployed model rarely means, and settings users compare with PyTorch by hand.
  std::vector<std::string> warnings;
  for (const auto& n : m.graph.nodes) {
    if (!n.domain.empty()) continue;
    if (n.op_type == "BatchNormalization" && n.opset >= 14 && n.attrs.get_int("training_mode", 0) != 0)
      warnings.push_back(n.describe() +
                         " is in training mode: it normalises with batch statistics, not the running ones"
                         " (export after model.eval())");
    if (n.op_type == "Dropout" && n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const auto& v = m.graph.values[n.inputs[2]];
      if (!v.constant || (v.constant->numel() == 1 && v.constant->data_as<uint8_t>()[0]))
        warnings.push_back(n.describe() + " may run in training mode (training_mode input '" + v.name + "')");
    }
    if (n.op_type == "Resize" || n.op_type == "Upsample")
      warnings.push_back(str_cat(
          "note: ", n.describe(), " mode=", n.attrs.get_string("mode", "nearest"),
          " coordinate_transformation_mode=", n.attrs.get_string("coordinate_transformation_mode", "half_pixel"),
          n.attrs.get_string("mode", "nearest") == "nearest"
              ? " nearest_mode=" + n.attrs.get_string("nearest_mode", "round_prefer_floor")
              : ""));
  }
  for (const auto& w : warnings) std::cout << (w.rfind("note: ", 0) == 0 ? "" : "warning: ") << w << "\n";
  if (unsupported.empty())
    std::cout << "unsupported: none (every node has a kernel)\n";
  else {
    std::cout << "unsupported: " << unsupported.size() << " node(s)\n";
    for (const auto& u : unsupported) std::cout << "  " << u << "\n";
  }
  if (passes) print_passes(m);
  return unsupported.empty() ? 0 : 3;
}

int cmd_list_ops(bool markdown) {
  auto ops = supported_ops();
  auto types_text = [](const std::vector<DType>& ts) {
    if (ts.empty()) return std::string("any");
    std::string s;
    for (DType t : ts) s += (s.empty() ? "" : " ") + std::string(dtype_name(t));
    return s;
  };
  if (markdown) {
    std::cout << "| domain | operator | opsets | types | notes |\n|---|---|---|---|---|\n";
    for (const auto& o : ops)
      std::cout << "| " << domain_label(o.domain) << " | " << o.op_type << " | " << o.since_version << "-"
                << o.until_version << " | " << types_text(o.types) << " | " << o.note << " |\n";
  } else {
    for (const auto& o : ops)
      std::cout << std::left << std::setw(10) << domain_label(o.domain) << std::setw(28) << o.op_type << std::setw(8)
                << (std::to_string(o.since_version) + "-" + std::to_string(o.until_version)) << types_text(o.types)
                << (o.note.empty() ? "" : "  (" + o.note + ")") << "\n";
    std::cout << ops.size() << " kernels\n";
  }
  return 0;
}

std::string safe_file_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s;
}

// Softmax over the last axis of a classification output [C] or [1, C], printed as top-k names.
void print_top_classes(const Tensor& logits, const std::string& labels_file, int top) {
  std::ifstream f(labels_file);
  if (!f) fail(labels_file, ": cannot open the labels file");
  std::vector<std::string> names;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) names.push_back(line);
  int64_t classes = logits.rank() ? logits.shape().back() : 1;
  if (logits.dtype() != DType::kFloat32 || logits.numel() != classes)
    fail("--labels: the first output must be float32 [C] or [1, C] logits, got ", dtype_name(logits.dtype()), " ",
         shape_to_string(logits.shape()));
  if (static_cast<int64_t>(names.size()) != classes)
    fail(labels_file, ": has ", names.size(), " class names, the model outputs ", classes, " scores");
  const float* z = logits.data_as<float>();
  float mx = *std::max_element(z, z + classes);
  std::vector<std::pair<double, int64_t>> p;
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c) sum += std::exp(z[c] - mx);
  for (int64_t c = 0; c < classes; ++c) p.push_back({std::exp(z[c] - mx) / sum, c});
  std::sort(p.begin(), p.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::cout << "predicted:";
  for (int k = 0; k < std::min<int64_t>(top, classes); ++k)
    std::cout << (k ? "," : "") << " " << names[p[k].second] << " (" << std::fixed << std::setprecision(3) << p[k].first
              << ")";
  std::cout << "\n";
}

int cmd_run(const std::string& path, const InputOptions& in, const std::string& output_dir, const std::string& ref,
            const CompareOptions& compare, int threads, const std::string& labels, int top) {
  SessionOptions so;
  so.intra_op_threads = threads;
  Session session(Model::load(path), so);
  auto feeds = make_feeds(session.inputs(), in);
  auto t0 = std::chrono::steady_clock::now();
  auto outputs = session.run(feeds);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "ran " << path << " in " << std::fixed << std::setprecision(2) << ms << " ms\n";
  if (!output_dir.empty()) std::filesystem::create_directories(output_dir);
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    names.push_back(session.outputs()[i].name);
    std::cout << "output " << names[i] << ": " << summarize_tensor(outputs[i]) << "\n";
    if (!output_dir.empty()) write_npy(output_dir + "/" + safe_file_name(names[i]) + ".npy", outputs[i]);
  }
  if (!labels.empty() && !outputs.empty()) print_top_classes(outputs[0], labels, top);
  if (!output_dir.empty()) std::cout << "wrote " << outputs.size() << " output(s) to " << output_dir << "\n";
  if (ref.empty()) return 0;
  return report_against_reference(names, outputs, ref, compare) ? 1 : 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Resident memory now (MiB), and malloc's view of it: bytes in use, free inside the heap
// (resident but unused), and in mmapped chunks.
std::string memory_line() {
  std::ifstream f("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  f >> pages_total >> pages_resident;
  struct mallinfo2 mi = mallinfo2();
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << "RSS " << pages_resident * 4096.0 / 1048576 << " MiB (malloc: in use "
     << mi.uordblks / 1048576.0 << ", free in heap " << mi.fordblks / 1048576.0 << ", mmapped " << mi.hblkhd / 1048576.0
     << ")";
  return os.str();
}

int cmd_bench(const std::string& path, const InputOptions& in, int threads, int warmup, int iterations, bool profile,
              int profile_nodes, const std::string& json_out) {
  SessionOptions so;
  so.intra_op_threads = threads;
  so.profile = profile;
  auto tp = std::chrono::steady_clock::now();
  std::vector<std::string> memory_log;
  Model model = Model::load(path);
  memory_log.push_back("after load: " + memory_line());
  Session session(model, so);
  memory_log.push_back("after prepare: " + memory_line());
  // Drop the Model: once the session is prepared, only its (packed) weights remain.
  model = Model();
  memory_log.push_back("after dropping the Model: " + memory_line());
  double prepare_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
  auto feeds = make_feeds(session.inputs(), in);
  for (int i = 0; i < warmup; ++i) {
    session.run(feeds);
    memory_log.push_back(str_cat("after warmup run ", i + 1, ": ", memory_line()));
  }
  std::vector<double> times;
  std::map<std::string, double> op_ms;
  std::map<std::string, double> node_ms;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    session.run(feeds);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (profile)
      for (const auto& p : session.last_profile()) {
        op_ms[p.op_type] += p.milliseconds;
        node_ms[p.op_type + " " + p.node_name] += p.milliseconds;
      }
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double med = median(times);
  double mean = 0;
  for (double t : times) mean += t;
  mean /= std::max<size_t>(1, times.size());
  std::sort(times.begin(), times.end());
  std::cout << std::fixed << std::setprecision(3);
  std::cout << "model: " << path << "\nthreads: " << (threads ? std::to_string(threads) : "all")
            << ", warmup: " << warmup << ", iterations: " << iterations << "\n";
  std::cout << "prepare: " << prepare_ms << " ms\n";
  std::cout << "latency ms: median " << med << ", mean " << mean << ", min " << times.front() << ", max "
            << times.back() << "\n";
  std::cout << "peak RSS: " << ru.ru_maxrss / 1024.0 << " MiB\n";
  memory_log.push_back("after timed runs: " + memory_line());
  MemoryStats ms = session.memory_stats();
  std::cout << "memory: arena plan " << ms.arena_bytes / 1048576.0 << " MiB (" << ms.planned_signatures
            << " signature(s)), " << ms.arena_allocations << " tensors from arena blocks, " << ms.pool_allocations
            << " from the pool\n";
  for (const auto& l : memory_log) std::cout << "  " << l << "\n";
  if (profile) {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (auto& [k, v] : op_ms) {
      rows.push_back({v / iterations, k});
      total += v / iterations;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::cout << "per operator (mean ms per run, share):\n";
    for (auto& [ms, k] : rows)
      std::cout << "  " << std::setw(28) << std::left << k << std::right << std::setw(10) << ms << "  " << std::setw(5)
                << std::setprecision(1) << 100 * ms / std::max(total, 1e-9) << "%\n"
                << std::setprecision(3);
    std::vector<std::pair<double, std::string>> nodes;
    for (auto& [k, v] : node_ms) nodes.push_back({v / iterations, k});
    std::sort(nodes.rbegin(), nodes.rend());
    std::cout << "slowest nodes:\n";
    for (size_t i = 0; i < std::min<size_t>(static_cast<size_t>(std::max(profile_nodes, 0)), nodes.size()); ++i)
      std::cout << "  " << std::setw(10) << nodes[i].first << "  " << nodes[i].second << "\n";
  }
  if (!json_out.empty()) {
    std::ofstream f(json_out);
    f << "{\"model\": \"" << path << "\", \"threads\": " << threads << ", \"median_ms\": " << med
      << ", \"mean_ms\": " << mean << ", \"min_ms\": " << times.front()
      << ", \"peak_rss_mib\": " << ru.ru_maxrss / 1024.0 << ", \"prepare_ms\": " << prepare_ms << "}\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pointrt: run ONNX point-cloud networks on the CPU"};
  app.require_subcommand(1);
  std::string model_path;

  auto* inspect = app.add_subcommand("inspect", "inputs/outputs, opsets, operator histogram, unsupported nodes");
  inspect->add_option("model", model_path, "ONNX file")->required();
  bool show_passes = false;
  inspect->add_flag("--passes", show_passes, "list the prepare passes in order and what each changed in this model");

  auto* list_ops = app.add_subcommand("list-ops", "every supported (domain, operator, opset range)");
  bool markdown = false;
  list_ops->add_flag("--markdown", markdown, "print a Markdown table (docs/operators.md)");

  InputOptions in;
  auto add_input_options = [&](CLI::App* c) {
    c->add_option("--input,-i", in.inputs,
                  "NAME=FILE (.npy, or a point cloud .bin/.ply/.pcd), or a .npz holding every input");
    c->add_option("--dim", in.dims, "SYMBOL=VALUE for symbolic dimensions of random inputs (e.g. N=16384)");
    c->add_option("--seed", in.seed, "seed for random inputs");
    c->add_option("--bin-fields", in.bin_fields,
                  "floats per point in .bin clouds (KITTI 4, nuScenes 5; default: the model's last input dimension if "
                  ">= 4, else 4)");
  };
  std::string output_dir, ref;
  double atol = 1e-5, rtol = 1e-3;
  int threads = 0, warmup = 3, iterations = 20;
  bool profile = false;
  int profile_nodes = 10;
  std::string json_out;

  auto* run = app.add_subcommand("run", "run a model once; inputs not given are random");
  run->add_option("model", model_path, "ONNX file")->required();
  add_input_options(run);
  run->add_option("--output-dir,-o", output_dir, "write every output as NAME.npy here");
  run->add_option("--ref", ref, "expected outputs keyed by output name: .npz, or Polygraphy's --save-outputs .json");
  run->add_option("--atol", atol, "absolute tolerance for --ref")->capture_default_str();
  run->add_option("--rtol", rtol, "relative tolerance for --ref")->capture_default_str();
  std::string tolerance = "magnitude";
  run->add_option("--tolerance", tolerance,
                  "--ref rule: magnitude (|err| <= atol + rtol*max|ref| of the output) or elementwise (<= atol + "
                  "rtol*|ref| per element)")
      ->capture_default_str();
  run->add_option("--threads", threads, "intra-op threads (0 = all cores)");
  std::string labels;
  int top = 0;
  run->add_option("--labels", labels, "class names, one per line: print the top classes of the first output");
  run->add_option("--top", top, "how many classes to print with --labels (default 3)");

  auto* bench = app.add_subcommand("bench", "time repeated runs (median latency, peak memory)");
  bench->add_option("model", model_path, "ONNX file")->required();
  add_input_options(bench);
  bench->add_option("--threads", threads, "intra-op threads (0 = all cores)");
  bench->add_option("--warmup", warmup, "untimed runs first")->capture_default_str();
  bench->add_option("--iterations,-n", iterations, "timed runs")->capture_default_str();
  bench->add_flag("--profile", profile, "per-operator and per-node time");
  bench->add_option("--profile-nodes", profile_nodes, "how many of the slowest nodes --profile lists")
      ->capture_default_str();
  bench->add_option("--json", json_out, "also write the summary as JSON");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*inspect) return cmd_inspect(model_path, show_passes);
    if (*list_ops) return cmd_list_ops(markdown);
    if (*run) {
      CompareOptions compare;
      compare.atol = atol;
      compare.rtol = rtol;
      compare.tolerance = parse_tolerance(tolerance);
      compare.any_float_reference = true;  // float64 references are compared in float64
      return cmd_run(model_path, in, output_dir, ref, compare, threads, labels, top > 0 ? top : 3);
    }
    if (*bench)
      return cmd_bench(model_path, in, threads, warmup, std::max(1, iterations), profile, profile_nodes, json_out);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
