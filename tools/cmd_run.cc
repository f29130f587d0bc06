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
#include "io/reference_file.h"
#include "io/tensor_compare.h"
#include "tools/cli_inputs.h"
#include "tools/cli_options.h"
#include "tools/commands.h"
#include "tools/ref_report.h"
#include "tools/run_pipeline.h"

namespace pointrt::cli {

namespace {

struct RunFlags {
  ModelFlags model;
  SessionFlags session;
  InputOptions inputs;
  PipelineFlags pipeline;
  std::string output_dir, ref, labels, json, tolerance = "magnitude";
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

bool has_non_tensor_io(const Session& s) {
  for (const auto* list : {&s.inputs(), &s.outputs()})
    for (const auto& v : *list)
      if (!v.is_tensor()) return true;
  return false;
}

// --ref for sequence outputs: element k of output NAME is compared with the array NAME.k, tensors
// with NAME; a reference with more elements than the output, or an array for an empty optional,
// counts as a difference. Returns the number of differing outputs or elements.
int compare_any_outputs(const std::vector<std::string>& names, const std::vector<AnyValue>& outputs,
                        const std::string& ref, const CompareOptions& compare) {
  std::vector<std::string> flat_names;
  std::vector<Tensor> flat;
  int extra = 0;
  const std::map<std::string, Tensor> refs = read_reference_file(ref);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const AnyValue& v = outputs[i];
    const size_t n = v.is_sequence() ? v.sequence().size() : 0;
    for (size_t k = 0; k < n; ++k) {
      flat_names.push_back(names[i] + "." + std::to_string(k));
      flat.push_back(v.sequence().at(k));
    }
    if (v.is_tensor()) {
      flat_names.push_back(names[i]);
      flat.push_back(v.tensor());
    }
    const std::string beyond = v.is_sequence() ? names[i] + "." + std::to_string(n) : names[i];
    if (!v.is_tensor() && refs.count(beyond)) {
      std::cout << "output " << names[i] << ": " << v.describe() << ", but " << ref << " has '" << beyond << "'\n";
      ++extra;
    }
  }
  return report_against_reference(flat_names, flat, ref, compare) + extra;
}

// A model with sequence or optional inputs/outputs: feeds from make_any_feeds, one run with
// run_any; a sequence output is printed element by element and written as NAME.0.npy, NAME.1.npy,
// ...; an empty optional is printed as none and writes nothing. --labels and the pipeline flags
// are for tensor models only.
int run_any_model(const RunFlags& f, const Session& session, Output& out, const InputOptions& in,
                  const CompareOptions& compare) {
  if (!f.labels.empty() || f.pipeline.enabled())
    fail("--labels, --eval and --render are not supported for models with sequence or optional values");
  std::ostream& os = out.text();
  auto feeds = make_any_feeds(session.inputs(), in, std::cerr);
  auto t0 = std::chrono::steady_clock::now();
  auto outputs = session.run_any(feeds);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  os << "ran " << f.model.path << " in " << std::fixed << std::setprecision(2) << ms << " ms\n";
  nlohmann::json j = {{"model", f.model.path}, {"run_ms", ms}, {"outputs", nlohmann::json::array()}};
  if (!f.output_dir.empty()) std::filesystem::create_directories(f.output_dir);
  size_t files = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = session.outputs()[i].name;
    const AnyValue& v = outputs[i];
    nlohmann::json o = {{"name", name}, {"type", session.outputs()[i].type_string()}};
    std::vector<std::pair<std::string, Tensor>> parts;  // (file suffix, tensor)
    if (v.is_tensor()) parts.emplace_back("", v.tensor());
    if (v.is_sequence())
      for (size_t k = 0; k < v.sequence().size(); ++k) parts.emplace_back("." + std::to_string(k), v.sequence().at(k));
    os << "output " << name << ": " << (v.is_tensor() ? summarize_tensor(v.tensor()) : v.describe()) << "\n";
    o["kind"] = v.is_tensor() ? "tensor" : v.is_sequence() ? "sequence" : "none";
    for (const auto& [suffix, t] : parts) {
      if (v.is_sequence()) os << "  " << name << suffix << ": " << summarize_tensor(t) << "\n";
      nlohmann::json e = {{"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}, {"summary", summarize_tensor(t)}};
      if (!f.output_dir.empty()) {
        e["file"] = f.output_dir + "/" + safe_file_name(name + suffix) + ".npy";
        write_npy(e["file"].get<std::string>(), t);
        ++files;
      }
      if (v.is_tensor())
        o.update(e);
      else
        o["elements"].push_back(e);
    }
    j["outputs"].push_back(o);
  }
  if (!f.output_dir.empty()) os << "wrote " << files << " file(s) to " << f.output_dir << "\n";
  int mismatches = 0;
  if (!f.ref.empty()) {
    std::vector<std::string> names;
    for (const auto& v : session.outputs()) names.push_back(v.name);
    mismatches = compare_any_outputs(names, outputs, f.ref, compare);  // prints to stdout
    j["ref_ok"] = mismatches == 0;
    j["ref_mismatches"] = mismatches;
  }
  out.write_json(j);
  return mismatches ? kExitCheckFailed : kExitOk;
}

int run(const RunFlags& f) {
  Output out(f.json);
  std::ostream& os = out.text();
  InputOptions in = f.inputs;
  SessionOptions so = session_options(f.session);
  in.max_tensor_bytes = so.max_tensor_bytes;
  in.model = f.model.path;
  Session session(load_model(f.model), so);
  CompareOptions compare;
  compare.atol = f.atol;
  compare.rtol = f.rtol;
  compare.tolerance = parse_tolerance(f.tolerance);
  compare.any_float_reference = true;  // float64 references are compared in float64
  if (has_non_tensor_io(session)) return run_any_model(f, session, out, in, compare);
  auto feeds = make_feeds(session.inputs(), in, std::cerr);
  auto t0 = std::chrono::steady_clock::now();
  auto outputs = session.run(feeds);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  os << "ran " << f.model.path << " in " << std::fixed << std::setprecision(2) << ms << " ms\n";
  nlohmann::json j = {{"model", f.model.path}, {"run_ms", ms}, {"outputs", nlohmann::json::array()}};
  if (!f.output_dir.empty()) std::filesystem::create_directories(f.output_dir);
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = session.outputs()[i].name;
    names.push_back(name);
    std::string summary = summarize_tensor(outputs[i]);
    os << "output " << name << ": " << summary << "\n";
    nlohmann::json o = {
        {"name", name}, {"dtype", dtype_name(outputs[i].dtype())}, {"shape", outputs[i].shape()}, {"summary", summary}};
    if (!f.output_dir.empty()) {
      std::string file = f.output_dir + "/" + safe_file_name(name) + ".npy";
      write_npy(file, outputs[i]);
      o["file"] = file;
    }
    j["outputs"].push_back(o);
  }
  // With --eval/--render, --labels names the pipeline's classes instead of ranking the first output.
  if (f.pipeline.enabled())
    j.update(run_pipeline_flags(f.pipeline, session, feeds, outputs, f.labels, os));
  else if (!f.labels.empty() && !outputs.empty())
    j["predicted"] = print_top_classes(outputs[0], f.labels, f.top, os);
  if (!f.output_dir.empty()) os << "wrote " << outputs.size() << " output(s) to " << f.output_dir << "\n";
  int mismatches = 0;
  if (!f.ref.empty()) {
    mismatches = report_against_reference(names, outputs, f.ref, compare);  // prints to stdout
    j["ref_ok"] = mismatches == 0;
    j["ref_mismatches"] = mismatches;
  }
  out.write_json(j);
  return mismatches ? kExitCheckFailed : kExitOk;
}

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto* c = app.add_subcommand("run", "run a model once; inputs not given are random");
  c->footer(
      "Sequence and optional inputs come from an --input .npz: a sequence NAME as the arrays NAME.0, NAME.1, ... "
      "(none: empty), an optional as NAME (absent: an empty optional). Sequence outputs are written as "
      "NAME.0.npy, NAME.1.npy, ... and compared with --ref arrays of those names.\n"
      "Exit status: 0 success, 1 some output differs from --ref, 2 an error.");
  auto f = std::make_shared<RunFlags>();
  add_model_flags(c, f->model);
  add_input_flags(c, f->inputs);
  add_session_flags(c, f->session);
  c->add_option("--output-dir,-o", f->output_dir, "write every output as NAME.npy here")->default_str("none");
  c->add_option("--ref", f->ref, "expected outputs keyed by output name: .npz, or Polygraphy's --save-outputs .json")
      ->default_str("none");
  c->add_option("--atol", f->atol, "absolute tolerance for --ref")->check(kFiniteNonNegative);
  c->add_option("--rtol", f->rtol, "relative tolerance for --ref")->check(kFiniteNonNegative);
  c->add_option("--tolerance", f->tolerance,
                "--ref rule: magnitude (|err| <= atol + rtol*max|ref| of the output) or elementwise (<= atol + "
                "rtol*|ref| per element)")
      ->check(CLI::IsMember({"magnitude", "elementwise"}));
  c->add_option("--labels", f->labels, "class names, one per line: print the top classes of the first output")
      ->default_str("none");
  c->add_option("--top", f->top, "how many classes to print with --labels")->check(kPositive);
  add_pipeline_flags(c, f->pipeline);
  add_json_option(c, f->json);
  return {c, [f] { return run(*f); }};
}

}  // namespace pointrt::cli
