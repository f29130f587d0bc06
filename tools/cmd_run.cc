// `pointrt run MODEL`: one run on inputs from files (or random), outputs printed, written and
// compared with a reference (exit status 1 when any differs).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <memory>

#include "core/common.h"
#include "core/file_io.h"
#include "io/npy.h"
#include "io/tensor_compare.h"
#include "tools/cli_inputs.h"
#include "tools/cli_options.h"
#include "tools/commands.h"

namespace pointrt::cli {

namespace {

struct RunFlags {
  ModelFlags model;
  SessionFlags session;
  InputOptions inputs;
  std::string output_dir, ref, labels, json;
  double atol = 1e-5, rtol = 1e-3;
  int top = 3;
};

std::string safe_file_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return s;
}

// Softmax over the last axis of a classification output [C] or [1, C], printed as top-k names.
nlohmann::json print_top_classes(const Tensor& logits, const std::string& labels_file, int top, std::ostream& os) {
  std::string text = read_regular_file(labels_file, uint64_t(64) << 20);
  std::vector<std::string> names;
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);)
    if (!line.empty()) names.push_back(line);
  int64_t classes = logits.rank() ? logits.shape().back() : 1;
  if (logits.dtype() != DType::kFloat32 || logits.numel() != classes || classes == 0)
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
  nlohmann::json j = nlohmann::json::array();
  os << "predicted:";
  for (int k = 0; k < std::min<int64_t>(top, classes); ++k) {
    os << (k ? "," : "") << " " << names[p[k].second] << " (" << std::fixed << std::setprecision(3) << p[k].first
       << ")";
    j.push_back({{"class", names[p[k].second]}, {"probability", p[k].first}});
  }
  os << "\n";
  return j;
}

nlohmann::json compare_with_ref(const std::map<std::string, Tensor>& refs, const std::string& ref_file,
                                const std::string& name, const Tensor& out, const RunFlags& f, std::ostream& os,
                                int& mismatches) {
  auto it = refs.find(name);
  if (it == refs.end()) {
    os << "  ref: no array '" << name << "' in " << ref_file << "\n";
    ++mismatches;
    return {{"ok", false}, {"message", "no array '" + name + "' in " + ref_file}};
  }
  CompareResult c = compare_tensors(out, it->second, f.atol, f.rtol);
  os << "  vs ref: " << c.message << "\n";
  if (!c.ok) ++mismatches;
  return {{"ok", c.ok},
          {"max_abs_error", c.max_abs_error},
          {"max_rel_error", c.max_rel_error},
          {"mismatches", c.mismatches},
          {"message", c.message}};
}

int run(const RunFlags& f) {
  Output out(f.json);
  std::ostream& os = out.text();
  InputOptions in = f.inputs;
  SessionOptions so = session_options(f.session);
  in.max_tensor_bytes = so.max_tensor_bytes;
  in.model = f.model.path;
  Session session(load_model(f.model), so);
  auto feeds = make_feeds(session.inputs(), in, std::cerr);
  std::map<std::string, Tensor> refs;
  if (!f.ref.empty()) refs = read_npz(f.ref);
  for (const auto& [k, t] : refs) {
    bool is_output = false;
    for (const auto& v : session.outputs()) is_output |= v.name == k;
    if (!is_output) std::cerr << "warning: " << f.ref << ": array '" << k << "' is not a model output (ignored)\n";
  }
  auto t0 = std::chrono::steady_clock::now();
  auto outputs = session.run(feeds);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  os << "ran " << f.model.path << " in " << std::fixed << std::setprecision(2) << ms << " ms\n";
  nlohmann::json j = {{"model", f.model.path}, {"run_ms", ms}, {"outputs", nlohmann::json::array()}};
  if (!f.output_dir.empty()) std::filesystem::create_directories(f.output_dir);
  int mismatches = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = session.outputs()[i].name;
    std::string summary = summarize_tensor(outputs[i]);
    os << "output " << name << ": " << summary << "\n";
    nlohmann::json o = {
        {"name", name}, {"dtype", dtype_name(outputs[i].dtype())}, {"shape", outputs[i].shape()}, {"summary", summary}};
    if (!f.output_dir.empty()) {
      std::string file = f.output_dir + "/" + safe_file_name(name) + ".npy";
      write_npy(file, outputs[i]);
      o["file"] = file;
    }
    if (!f.ref.empty()) o["ref"] = compare_with_ref(refs, f.ref, name, outputs[i], f, os, mismatches);
    j["outputs"].push_back(o);
  }
  if (!f.labels.empty() && !outputs.empty()) j["predicted"] = print_top_classes(outputs[0], f.labels, f.top, os);
  if (!f.output_dir.empty()) os << "wrote " << outputs.size() << " output(s) to " << f.output_dir << "\n";
  if (!f.ref.empty()) {
    os << (mismatches ? "FAILED: " : "OK: ") << outputs.size() - mismatches << "/" << outputs.size()
       << " outputs match the reference\n";
    j["ref_ok"] = mismatches == 0;
  }
  out.write_json(j);
  return mismatches ? kExitCheckFailed : kExitOk;
}

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto* c = app.add_subcommand("run", "run a model once; inputs not given are random");
  c->footer("Exit status: 0 success, 1 some output differs from --ref, 2 an error.");
  auto f = std::make_shared<RunFlags>();
  add_model_flags(c, f->model);
  add_input_flags(c, f->inputs);
  add_session_flags(c, f->session);
  c->add_option("--output-dir,-o", f->output_dir, "write every output as NAME.npy here")->default_str("none");
  c->add_option("--ref", f->ref, ".npz of expected outputs, keyed by output name")->default_str("none");
  c->add_option("--atol", f->atol, "absolute tolerance for --ref")->check(kFiniteNonNegative);
  c->add_option("--rtol", f->rtol, "relative tolerance for --ref")->check(kFiniteNonNegative);
  c->add_option("--labels", f->labels, "class names, one per line: print the top classes of the first output")
      ->default_str("none");
  c->add_option("--top", f->top, "how many classes to print with --labels")->check(kPositive);
  add_json_option(c, f->json);
  return {c, [f] { return run(*f); }};
}

}  // namespace pointrt::cli
