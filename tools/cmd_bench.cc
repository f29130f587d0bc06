// `pointrt bench MODEL`: prepare once, warm up, time repeated runs (median latency, peak memory,
// per-operator profile).
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <memory>

#include "core/common.h"
#include "tools/cli_inputs.h"
#include "tools/cli_options.h"
#include "tools/commands.h"

namespace pointrt::cli {

namespace {

struct BenchFlags {
  ModelFlags model;
  SessionFlags session;
  InputOptions inputs;
  int warmup = 3, iterations = 20, profile_nodes = 10;
  bool profile = false;
  std::string json;
};

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

// Per-operator and slowest-node tables of --profile.
nlohmann::json print_profile(const std::map<std::string, double>& op_ms, const std::map<std::string, double>& node_ms,
                             int iterations, int profile_nodes, std::ostream& os) {
  nlohmann::json j = {{"operators", nlohmann::json::object()}, {"slowest_nodes", nlohmann::json::array()}};
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (auto& [k, v] : op_ms) {
    rows.push_back({v / iterations, k});
    total += v / iterations;
  }
  std::sort(rows.rbegin(), rows.rend());
  os << "per operator (mean ms per run, share):\n";
  for (auto& [ms, k] : rows) {
    os << "  " << std::setw(28) << std::left << k << std::right << std::setw(10) << ms << "  " << std::setw(5)
       << std::setprecision(1) << 100 * ms / std::max(total, 1e-9) << "%\n"
       << std::setprecision(3);
    j["operators"][k] = ms;
  }
  std::vector<std::pair<double, std::string>> nodes;
  for (auto& [k, v] : node_ms) nodes.push_back({v / iterations, k});
  std::sort(nodes.rbegin(), nodes.rend());
  os << "slowest nodes:\n";
  for (size_t i = 0; i < std::min<size_t>(static_cast<size_t>(profile_nodes), nodes.size()); ++i) {
    os << "  " << std::setw(10) << nodes[i].first << "  " << nodes[i].second << "\n";
    j["slowest_nodes"].push_back({{"node", nodes[i].second}, {"ms", nodes[i].first}});
  }
  return j;
}

int bench(const BenchFlags& f) {
  Output out(f.json);
  std::ostream& os = out.text();
  SessionOptions so = session_options(f.session);
  so.profile = f.profile;
  InputOptions in = f.inputs;
  in.max_tensor_bytes = so.max_tensor_bytes;
  in.model = f.model.path;
  auto tp = std::chrono::steady_clock::now();
  std::vector<std::string> memory_log;
  Model model = load_model(f.model);
  const auto tl = std::chrono::steady_clock::now();
  memory_log.push_back("after load: " + memory_line());
  const auto ts = std::chrono::steady_clock::now();
  Session session(model, so);
  const auto te = std::chrono::steady_clock::now();
  memory_log.push_back("after prepare: " + memory_line());
  // Drop the Model: once the session is prepared, only its (packed) weights remain.
  model = Model();
  memory_log.push_back("after dropping the Model: " + memory_line());
  double prepare_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
  auto feeds = make_feeds(session.inputs(), in, std::cerr);
  for (int i = 0; i < f.warmup; ++i) {
    session.run(feeds);
    memory_log.push_back(str_cat("after warmup run ", i + 1, ": ", memory_line()));
  }
  std::vector<double> times;
  std::map<std::string, double> op_ms, node_ms;
  for (int i = 0; i < f.iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    session.run(feeds);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (f.profile)
      for (const auto& p : session.last_profile()) {
        op_ms[p.op_type] += p.milliseconds;
        node_ms[p.op_type + " " + p.node_name] += p.milliseconds;
      }
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double med = median(times), mean = 0;
  for (double t : times) mean += t;
  mean /= static_cast<double>(times.size());
  std::sort(times.begin(), times.end());
  os << std::fixed << std::setprecision(3);
  os << "model: " << f.model.path << "\nthreads: " << (f.session.threads ? std::to_string(f.session.threads) : "all")
     << ", warmup: " << f.warmup << ", iterations: " << f.iterations << "\n";
  auto span_ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  os << "prepare: " << prepare_ms << " ms (loading the file " << span_ms(tp, tl) << " ms, the session "
     << span_ms(ts, te) << " ms)\n";
  os << "latency ms: median " << med << ", mean " << mean << ", min " << times.front() << ", max " << times.back()
     << "\n";
  os << "peak RSS: " << ru.ru_maxrss / 1024.0 << " MiB\n";
  memory_log.push_back("after timed runs: " + memory_line());
  MemoryStats ms = session.memory_stats();
  os << "memory: arena plan " << ms.arena_bytes / 1048576.0 << " MiB (" << ms.planned_signatures << " signature(s)), "
     << ms.arena_allocations << " tensors from arena blocks, " << ms.pool_allocations << " from the pool\n";
  for (const auto& l : memory_log) os << "  " << l << "\n";
  nlohmann::json j = {{"model", f.model.path},
                      {"threads", f.session.threads},
                      {"warmup", f.warmup},
                      {"iterations", f.iterations},
                      {"prepare_ms", prepare_ms},
                      {"median_ms", med},
                      {"mean_ms", mean},
                      {"min_ms", times.front()},
                      {"max_ms", times.back()},
                      {"peak_rss_mib", ru.ru_maxrss / 1024.0},
                      {"arena_bytes", ms.arena_bytes},
                      {"arena_allocations", ms.arena_allocations},
                      {"pool_allocations", ms.pool_allocations}};
  if (f.profile) j["profile"] = print_profile(op_ms, node_ms, f.iterations, f.profile_nodes, os);
  out.write_json(j);
  return kExitOk;
}

}  // namespace

Subcommand add_bench_command(CLI::App& app) {
  auto* c = app.add_subcommand("bench", "time repeated runs (median latency, peak memory)");
  c->footer("Exit status: 0 success, 2 an error.");
  auto f = std::make_shared<BenchFlags>();
  add_model_flags(c, f->model);
  add_input_flags(c, f->inputs);
  add_session_flags(c, f->session);
  c->add_option("--warmup", f->warmup, "untimed runs first")->check(kNonNegative);
  c->add_option("--iterations,-n", f->iterations, "timed runs")->check(kPositive);
  c->add_flag("--profile", f->profile, "per-operator and per-node time");
  c->add_option("--profile-nodes", f->profile_nodes, "how many of the slowest nodes --profile lists")
      ->check(kNonNegative);
  add_json_option(c, f->json);
  return {c, [f] { return bench(*f); }};
}

}  // namespace pointrt::cli
