// `pointrt run --eval / --scene / --render` (docs/pipelines.md): score a pose model's or a
// detector's answers against ground truth and draw them, after the run of tools/cmd_run.cc.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "pointrt/pointrt.h"
#include "tools/cli_common.h"

namespace pointrt::cli {

struct PipelineFlags {
  std::string eval, scene, render;
  double iou = 0.5, score_threshold = 0.3;
  bool enabled() const { return !eval.empty() || !render.empty(); }
};
void add_pipeline_flags(CLI::App* app, PipelineFlags& flags);

/// Prints the evaluation (with --eval) and writes the picture (with --render); `labels_file` ("" =
/// none) names the classes. Returns {"eval": ..., "render": file} for --json.
nlohmann::json run_pipeline_flags(const PipelineFlags& flags, const Session& session,
                                  const std::map<std::string, Tensor>& feeds, const std::vector<Tensor>& outputs,
                                  const std::string& labels_file, std::ostream& os);

}  // namespace pointrt::cli
