#include "tools/run_pipeline.h"

#include <ostream>
#include <sstream>
#include <string>

#include "core/file_io.h"
#include "io/npy.h"
#include "tools/pipeline_eval.h"
#include "tools/render.h"

namespace pointrt::cli {

namespace {

// An IoU threshold: 0 would match every detection, above 1 none.
const CLI::Validator kUnitInterval = CLI::Validator(
    [](std::string& s) -> std::string {
      try {
        size_t used = 0;
        double v = std::stod(s, &used);
        if (used == s.size() && v > 0 && v <= 1) return "";
      } catch (...) {}
      return "must be a number in (0, 1], got '" + s + "'";
    },
    "FLOAT in (0,1]");

std::vector<std::string> read_names(const std::string& file) {
  std::vector<std::string> names;
  if (file.empty()) return names;
  std::istringstream is(read_regular_file(file, uint64_t(64) << 20));
  for (std::string line; std::getline(is, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

}  // namespace

void add_pipeline_flags(CLI::App* app, PipelineFlags& f) {
  app->add_option("--eval", f.eval,
                  ".npz ground truth: print ADD/ADD-S per object (pose models) or box matches and AP (detectors)")
      ->default_str("none");
  app->add_option("--scene", f.scene, ".npz with camera [4] and model_points [C, P, 3] for --render of a pose model")
      ->default_str("none");
  app->add_option("--render", f.render, "draw the answers into a PNG (bird's-eye view or the projected models)")
      ->default_str("none");
  app->add_option("--iou", f.iou, "3D IoU for a detection to match a ground-truth box (--eval)")
      ->check(kUnitInterval)
      ->capture_default_str();
  app->add_option("--score-threshold", f.score_threshold, "draw detections from this score (--render)")
      ->check(kFiniteNonNegative)
      ->capture_default_str();
}

nlohmann::json run_pipeline_flags(const PipelineFlags& f, const Session& session,
                                  const std::map<std::string, Tensor>& feeds, const std::vector<Tensor>& outputs,
                                  const std::string& labels_file, std::ostream& os) {
  nlohmann::json j = nlohmann::json::object();
  std::map<std::string, Tensor> by_name;
  for (size_t i = 0; i < outputs.size(); ++i) by_name[session.outputs()[i].name] = outputs[i];
  if (!f.eval.empty()) j["eval"] = pipelines::print_evaluation(by_name, f.eval, f.iou, read_names(labels_file), os);
  if (f.render.empty()) return j;
  pipelines::RenderInputs ri;
  ri.feeds = &feeds;
  ri.outputs = &by_name;
  ri.score_threshold = f.score_threshold;
  for (const std::string& file : {f.scene, f.eval})
    if (!file.empty())
      for (auto& [k, v] : read_npz(file)) ri.scene.emplace(k, v);
  pipelines::render_png(ri, f.render);
  os << "rendered " << f.render << "\n";
  j["render"] = f.render;
  return j;
}

}  // namespace pointrt::cli
