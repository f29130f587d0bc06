// A node with no outputs (none listed, or only omitted ones) is refused when the file is read:
// every ONNX operator produces at least one, and the graph passes rely on outputs[0]. The
// fuzzer reached the int8 QDQ pass with such a Reshape (corpus/loader/crash-7fafd550...).
#include <gtest/gtest.h>

#include "support/model_builder.h"

using namespace pointrt;
using pointrt::test::ModelBuilder;

namespace {

std::string error_of(const std::vector<std::string>& outputs) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(2), int64_t(3)});
  b.node("Relu", {"x"}, {"y"}, "", "relu");
  b.node("Reshape", {"y", "y"}, outputs, "", "reshape_nothing");
  b.output("y", DType::kFloat32);
  std::string bytes = b.bytes();
  try {
    Session s(Model::load_from_bytes(bytes.data(), bytes.size(), "", "no_outputs.onnx"));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Loader, NodeWithoutOutputsIsRefusedNamingFileAndNode) {
  for (const auto& outputs : {std::vector<std::string>{}, std::vector<std::string>{""}}) {
    std::string msg = error_of(outputs);
    EXPECT_NE(msg.find("no_outputs.onnx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 'reshape_nothing' (Reshape) has no outputs"), std::string::npos) << msg;
  }
}

}  // namespace
