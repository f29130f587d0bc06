// External data of hostile models (issue 12, item 2): the real path (symbolic links resolved)
// must stay inside the model's folder or an allowed one, only regular files are read (a FIFO does
// not hang, a directory is named), offsets and lengths are parsed strictly and checked against the
// file's size. Also the model path itself: a directory or a FIFO is a clear error.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/expect_error.h"
#include "support/model_builder.h"

using namespace pointrt;
using pointrt::test::expect_error;
using pointrt::test::ModelBuilder;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test: <tmp>/pointrt_external_<name>/{model,outside}.
struct Folders {
  explicit Folders(const std::string& name) {
    root = fs::temp_directory_path() / ("pointrt_external_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(root);
    model = root / "model";
    outside = root / "outside";
    fs::create_directories(model);
    fs::create_directories(outside);
  }
  ~Folders() { fs::remove_all(root); }
  fs::path root, model, outside;
};

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string four_floats() {
  Tensor w = test::iota_tensor({4}, -2.f);
  return std::string(static_cast<const char*>(w.data()), w.nbytes());
}

// A model whose initializer 'w' (float32 [4]) has the given external_data entries.
std::string model_with_external(const std::vector<std::pair<std::string, std::string>>& entries) {
  ModelBuilder b;
  b.node("Relu", {"w"}, {"y"}, "", "relu_w");
  b.output("y");
  auto* init = b.proto().mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(4);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : entries) {
    auto* e = init->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  return b.bytes();
}

// Write the model into `dir`/model.onnx and load it from there.
Model load_in(const fs::path& dir, const std::string& bytes, const LoadOptions& options = {}) {
  write_file(dir / "model.onnx", bytes);
  return Model::load((dir / "model.onnx").string(), options);
}

}  // namespace

TEST(ExternalData, SymlinkOutOfTheModelFolderIsRefused) {
  Folders f("symlink");
  write_file(f.outside / "secret.bin", four_floats());
  fs::create_symlink(f.outside, f.model / "weights");  // weights -> ../outside (like weights -> /etc)
  std::string m = model_with_external({{"location", "weights/secret.bin"}});
  expect_error([&] { load_in(f.model, m); },
               {"model.onnx", "tensor 'w'", "weights/secret.bin", "outside the model's folder", "--external-data-dir"});
  fs::create_symlink(f.outside / "secret.bin", f.model / "direct.bin");
  expect_error(
      [&] {
        load_in(f.model, model_with_external({{"location", "direct.bin"}}));
      },
      {"tensor 'w'", "outside the model's folder"});
  expect_error(
      [&] {
        load_in(f.model, model_with_external({{"location", "../outside/secret.bin"}}));
      },
      {"tensor 'w'", "outside the model's folder"});
  expect_error(
      [&] {
        load_in(f.model, model_with_external({{"location", "/etc/passwd"}}));
      },
      {"tensor 'w'", "'/etc/passwd'", "relative path"});
  // The same files are readable once their folder is allowed.
  LoadOptions allow;
  allow.external_data_dirs = {f.outside.string()};
  Session s(load_in(f.model, m, allow));
  EXPECT_EQ(s.run({})[0].data_as<float>()[3], 1.f);
}

TEST(ExternalData, LinksAndDotDotThatStayInsideAreFine) {
  Folders f("inside");
  fs::create_directories(f.model / "data");
  write_file(f.model / "data" / "w.bin", four_floats());
  fs::create_symlink("data/w.bin", f.model / "link.bin");
  for (const char* loc : {"data/w.bin", "link.bin", "data/../data/w.bin"}) {
    Session s(load_in(f.model, model_with_external({{"location", loc}})));
    EXPECT_EQ(s.run({})[0].data_as<float>()[3], 1.f) << loc;
  }
}

TEST(ExternalData, OnlyRegularFilesAreReadAndNothingHangs) {
  Folders f("special");
  ASSERT_EQ(mkfifo((f.model / "pipe.bin").c_str(), 0600), 0);
  expect_error(
      [&] {
        load_in(f.model, model_with_external({{"location", "pipe.bin"}}));
      },
      {"model.onnx", "tensor 'w'", "pipe.bin", "is a FIFO, not a regular file"});
  fs::create_directories(f.model / "dir.bin");
  expect_error(
      [&] {
        load_in(f.model, model_with_external({{"location", "dir.bin"}}));
      },
      {"tensor 'w'", "dir.bin", "is a directory, not a regular file"});
  expect_error(
      [&] {
        load_in(f.model, model_with_external({{"location", "missing.bin"}}));
      },
      {"tensor 'w'", "missing.bin", "No such file"});
}

TEST(ExternalData, OffsetsAndLengthsAreParsedStrictlyAndCheckedAgainstTheFile) {
  Folders f("offsets");
  write_file(f.model / "w.bin", std::string(16, '\0') + four_floats());
  auto with = [&](const std::string& offset, const std::string& length) {
    std::vector<std::pair<std::string, std::string>> e = {{"location", "w.bin"}};
    if (!offset.empty()) e.push_back({"offset", offset});
    if (!length.empty()) e.push_back({"length", length});
    return model_with_external(e);
  };
  Session ok(load_in(f.model, with("16", "16")));
  EXPECT_EQ(ok.run({})[0].data_as<float>()[3], 1.f);
  for (const char* bad : {"abc", "-16", "16x", "1e3", " 16", "99999999999999999999"})
    expect_error([&] { load_in(f.model, with(bad, "")); }, {"tensor 'w'", "external data offset", bad});
  expect_error([&] { load_in(f.model, with("16", "sixteen")); }, {"tensor 'w'", "external data length", "sixteen"});
  expect_error([&] { load_in(f.model, with("16", "8")); }, {"tensor 'w'", "length 8", "16 bytes"});
  expect_error([&] { load_in(f.model, with("24", "")); }, {"tensor 'w'", "32 bytes", "needs 16 at offset 24"});
  expect_error([&] { load_in(f.model, with("9223372036854775807", "16")); },
               {"tensor 'w'", "offset 9223372036854775807"});
}

TEST(ExternalData, WithoutAFileOrWithoutALocationIsAnError) {
  std::string m = model_with_external({{"location", "w.bin"}});
  expect_error([&] { Model::load_from_bytes(m.data(), m.size(), "", "mem.onnx"); },
               {"mem.onnx", "tensor 'w'", "not loaded from a file"});
  std::string none = model_with_external({{"offset", "0"}});
  Folders f("nolocation");
  expect_error([&] { load_in(f.model, none); }, {"tensor 'w'", "without a location"});
}

TEST(ModelFile, DirectoryFifoAndMissingModelPathsAreNamed) {
  Folders f("modelpath");
  expect_error([&] { Model::load(f.model.string()); }, {f.model.string(), "is a directory, not a regular file"});
  ASSERT_EQ(mkfifo((f.model / "m.onnx").c_str(), 0600), 0);
  expect_error([&] { Model::load((f.model / "m.onnx").string()); }, {"m.onnx", "is a FIFO"});
  expect_error([&] { Model::load((f.model / "nothing.onnx").string()); }, {"nothing.onnx", "cannot open"});
  write_file(f.model / "empty.onnx", "");
  expect_error([&] { Model::load((f.model / "empty.onnx").string()); }, {"empty.onnx", "empty"});
}
