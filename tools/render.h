// `pointrt run --render out.png`: a picture of a pipeline's answers, written with libpng.
//   detector: bird's-eye view of the scan (points shaded by height), predicted boxes in a colour
//             per class with a heading tick, ground-truth boxes (from --eval) in green;
//   pose:     the RGB input with each found object's model points projected with the predicted
//             pose (a colour per class) and its axes (x red, y green, z blue); ground-truth axes
//             (from --eval) thin and white.
// The pose picture needs the camera (fx, fy, cx, cy) and the model points: arrays `camera` [4]
// and `model_points` [C, P, 3] of the --scene or --eval file.
#pragma once

#include <map>
#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {
namespace pipelines {

struct RenderInputs {
  const std::map<std::string, Tensor>* feeds = nullptr;    // the model's inputs
  const std::map<std::string, Tensor>* outputs = nullptr;  // by output name
  std::map<std::string, Tensor> scene;                     // --scene and --eval arrays (may be empty)
  double score_threshold = 0.3;                            // detections drawn from this score
};

/// Draws the answers of a pose model or a detector (by output names) into a PNG at `path`.
void render_png(const RenderInputs& in, const std::string& path);

}  // namespace pipelines
}  // namespace pointrt
