#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/point_cloud.h"

using namespace pointrt;
namespace fs = std::filesystem;

namespace {
fs::path write_file(const std::string& name, const std::string& content) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream f(p, std::ios::binary);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  return p;
}
std::string floats_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}
}  // namespace

TEST(PointCloud, KittiBin) {
  auto p = write_file("c.bin", floats_bytes({1, 2, 3, 0.5f, 4, 5, 6, 0.25f}));
  Tensor t = read_point_cloud(p.string());
  ASSERT_EQ(t.shape(), (Shape{2, 4}));
  EXPECT_EQ(t.data_as<float>()[4], 4.f);
  Tensor n = read_point_cloud(write_file("n.bin", floats_bytes({1, 2, 3, 4, 5})).string(), 5);
  EXPECT_EQ(n.shape(), (Shape{1, 5}));
  EXPECT_THROW(read_point_cloud(write_file("bad.bin", "abcdefg").string()), Error);
  Tensor empty = read_point_cloud(write_file("empty.bin", "").string());
  EXPECT_EQ(empty.shape(), (Shape{0, 4}));
}

TEST(PointCloud, PlyAsciiAndBinary) {
  auto a = write_file(
      "a.ply",
      "ply\nformat ascii 1.0\ncomment x\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
      "property uchar red\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n1 2 3 255\n-1 -2 -3.5 "
      "7\n");
  Tensor t = read_point_cloud(a.string());
  ASSERT_EQ(t.shape(), (Shape{2, 4}));
  EXPECT_FLOAT_EQ(t.data_as<float>()[6], -3.5f);
  EXPECT_FLOAT_EQ(t.data_as<float>()[3], 255.f);
  std::string body = floats_bytes({1, 2, 3});
  double d = 9.5;
  body += std::string(reinterpret_cast<const char*>(&d), 8);
  auto b = write_file("b.ply",
                      "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float "
                      "y\nproperty float z\nproperty double intensity\nend_header\n" +
                          body);
  Tensor u = read_point_cloud(b.string());
  ASSERT_EQ(u.shape(), (Shape{1, 4}));
  EXPECT_FLOAT_EQ(u.data_as<float>()[3], 9.5f);
  auto trunc = write_file("t.ply",
                          "ply\nformat binary_little_endian 1.0\nelement vertex 5\nproperty float x\nproperty float "
                          "y\nproperty float z\nend_header\n" +
                              floats_bytes({1, 2}));
  EXPECT_THROW(read_point_cloud(trunc.string()), Error);
}

TEST(PointCloud, PcdAsciiAndBinary) {
  auto a = write_file("a.pcd",
                      "# .PCD v0.7\nVERSION 0.7\nFIELDS x y z intensity\nSIZE 4 4 4 4\nTYPE F F F F\nCOUNT 1 1 1 "
                      "1\nWIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3 4\n5 6 7 8\n");
  Tensor t = read_point_cloud(a.string());
  ASSERT_EQ(t.shape(), (Shape{2, 4}));
  EXPECT_FLOAT_EQ(t.data_as<float>()[7], 8.f);
  uint16_t ring = 3;
  std::string rec = floats_bytes({1, 2, 3}) + std::string(reinterpret_cast<const char*>(&ring), 2);
  auto b = write_file(
      "b.pcd",
      "VERSION 0.7\nFIELDS x y z ring\nSIZE 4 4 4 2\nTYPE F F F U\nCOUNT 1 1 1 1\nPOINTS 2\nDATA binary\n" + rec + rec);
  Tensor u = read_point_cloud(b.string());
  ASSERT_EQ(u.shape(), (Shape{2, 4}));
  EXPECT_FLOAT_EQ(u.data_as<float>()[7], 3.f);
  auto c = write_file("c.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nPOINTS 1\nDATA binary_compressed\n");
  try {
    read_point_cloud(c.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("binary_compressed"), std::string::npos);
  }
}
