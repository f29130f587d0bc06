// Load a model, prepare a session once, run it on a caller-owned buffer.
//   run_model model.onnx
// Every input is fed with zeros of its declared shape (symbolic dimensions = 1).
#include <iostream>
#include <vector>

#include "pointrt/pointrt.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: run_model model.onnx\n";
    return 2;
  }
  try {
    pointrt::Model model = pointrt::Model::load(argv[1]);
    pointrt::SessionOptions options;
    options.intra_op_threads = 1;
    pointrt::Session session(model, options);
    std::map<std::string, pointrt::Tensor> feeds;
    std::vector<std::vector<char>> buffers;  // caller-owned storage, bound without copies
    for (const auto& in : session.inputs()) {
      pointrt::Shape shape;
      for (const auto& d : in.shape) shape.push_back(d.is_fixed() ? d.value : 1);
      buffers.emplace_back(pointrt::shape_numel(shape) * pointrt::dtype_size(in.dtype), 0);
      feeds[in.name] = pointrt::Tensor::wrap(in.dtype, shape, buffers.back().data());
    }
    std::vector<pointrt::Tensor> outputs = session.run(feeds);
    for (size_t i = 0; i < outputs.size(); ++i)
      std::cout << session.outputs()[i].name << ": " << pointrt::dtype_name(outputs[i].dtype()) << " "
                << pointrt::shape_to_string(outputs[i].shape()) << "\n";
  } catch (const pointrt::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
