// Strict array and point-cloud readers (issue 12, item 4): malformed headers, trailing garbage,
// missing x/y/z, inconsistent or absurd counts are one-line Errors naming the file; nothing is
// allocated from a claimed count the data cannot back.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "io/nonfinite.h"
#include "io/npy.h"
#include "io/point_cloud.h"
#include "support/expect_error.h"
#include "support/model_builder.h"

using namespace pointrt;
using pointrt::test::expect_error;

namespace {

// An .npy image with the given header dict (padded as NumPy pads it) and body.
std::string npy_with_header(const std::string& dict, const std::string& body) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  return out + h + body;
}

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

Tensor npy(const std::string& bytes) { return parse_npy(bytes.data(), bytes.size(), "a.npy"); }
Tensor ply(const std::string& bytes) { return parse_ply(bytes.data(), bytes.size(), "c.ply"); }
Tensor pcd(const std::string& bytes) { return parse_pcd(bytes.data(), bytes.size(), "c.pcd"); }

const std::string kXyzPly = "property float x\nproperty float y\nproperty float z\n";
const std::string kPcdXyz = "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n";

}  // namespace

TEST(NpyReader, AcceptsWhatNumPyWritesAndConvertsBigEndian) {
  Tensor a = npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", floats({1.5f, -2.f})));
  EXPECT_EQ(a.shape(), (Shape{2}));
  EXPECT_EQ(a.data_as<float>()[1], -2.f);
  std::string big = floats({1.5f});
  std::reverse(big.begin(), big.end());
  Tensor b = npy(npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", big));
  EXPECT_EQ(b.data_as<float>()[0], 1.5f);  // byte-swapped, not misread as ~1e-38
  Tensor s = npy(npy_with_header("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": ()}", std::string(8, 0)));
  EXPECT_EQ(s.rank(), 0u);
}

TEST(NpyReader, MalformedHeadersAndSizesAreErrors) {
  const std::string ok_body = floats({1, 2});
  auto header = [&](const std::string& dict) { return npy_with_header(dict, ok_body); };
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } garbage")); },
               {"a.npy", "trailing characters"});
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}")); },
               {"a.npy", "unknown key 'x'"});
  expect_error([&] { npy(header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}")); },
               {"a.npy", "appears twice"});
  expect_error([&] { npy(header("{'descr': '<f4', 'shape': (2,)}")); }, {"a.npy", "fortran_order"});
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}")); }, {"a.npy"});
  expect_error([&] { npy(header("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}")); },
               {"a.npy", "unsupported npy dtype '|O'"});
  expect_error([&] { npy(header("{'descr': '<U3', 'fortran_order': False, 'shape': (2,)}")); }, {"'<U3'"});
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}")); }, {"Fortran"});
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}")); },
               {"a.npy", "8 bytes", "declares 12"});
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}")); },
               {"a.npy", "8 bytes", "declares 4"});  // trailing data
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}")); },
               {"a.npy", "more elements than int64"});
  expect_error([&] { npy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}")); },
               {"a.npy", "64 bits"});
  std::string v9 = header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}");
  v9[6] = 9;
  expect_error([&] { npy(v9); }, {"a.npy", "version 9.0"});
}

TEST(NpzReader, CorruptArchivesAndAbsurdSizesAreErrors) {
  std::string path = testing::TempDir() + "/ab.npz";
  write_npz(path, {{"a", test::iota_tensor({3})}, {"b", test::iota_tensor({2})}});
  std::string z;
  {
    std::ifstream f(path, std::ios::binary);
    z.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  EXPECT_EQ(parse_npz(z.data(), z.size(), "ab.npz").size(), 2u);
  expect_error([&] { parse_npz(z.data(), 10, "ab.npz"); }, {"ab.npz", "not a .npz"});
  for (size_t cut : {z.size() - 30, z.size() / 2, size_t(40)}) {
    try {
      parse_npz(z.data(), cut, "cut.npz");
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.npz"), std::string::npos) << e.what();
    }
  }
  // A deflated member claiming 4 GB from a few bytes is refused before inflating.
  std::string bomb = z;
  size_t cd = bomb.rfind("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  bomb[cd + 10] = 8;  // method: deflate
  for (int i = 0; i < 4; ++i) bomb[cd + 24 + i] = '\xfe';
  expect_error([&] { parse_npz(bomb.data(), bomb.size(), "bomb.npz"); }, {"bomb.npz", "more than deflate"});
}

TEST(PlyReader, MissingAxesCountsAndTrailingDataAreErrors) {
  std::string head = "ply\nformat ascii 1.0\nelement vertex 2\n";
  expect_error([&] { ply(head + "property float a\nproperty float b\nproperty float c\nend_header\n1 2 3\n4 5 6\n"); },
               {"c.ply", "no 'x' field"});
  expect_error([&] { ply(head + kXyzPly + "end_header\n1 2 3\n4 5 6\n7 8 9\n"); }, {"c.ply", "more data after"});
  expect_error([&] { ply(head + kXyzPly + "end_header\n1 2 3\n4 5 x6\n"); }, {"c.ply", "'x6' is not a number"});
  expect_error([&] { ply("ply\nformat ascii 1.0\nelement vertex 2x\n" + kXyzPly + "end_header\n"); },
               {"c.ply", "'2x'"});
  expect_error(
      [&] {
        ply("ply\nformat binary_little_endian 1.0\nelement vertex 4000000000000\n" + kXyzPly + "end_header\n" +
            floats({1, 2, 3}));
      },
      {"c.ply", "claims 4000000000000 points", "only 1 records"});
  expect_error(
      [&] {
        ply("ply\nformat binary_little_endian 1.0\nelement vertex 1\n" + kXyzPly + "end_header\n" +
            floats({1, 2, 3, 4}));
      },
      {"c.ply", "4 bytes after the 1 points"});
  expect_error([&] { ply("ply\nformat ascii 1.0\nelement vertex 1\n" + kXyzPly + "property float x\nend_header\n"); },
               {"c.ply", "'x' appears twice"});
  expect_error([&] { ply("ply\nformat ascii 1.0\nbogus line\n"); }, {"c.ply", "unknown PLY header line"});
  expect_error([&] { ply("ply\nformat ascii 1.0\nelement vertex 1\n" + kXyzPly); }, {"c.ply", "end_header"});
}

TEST(PlyReader, XyzComeFirstWhateverTheFileOrder) {
  Tensor t =
      ply("ply\nformat ascii 1.0\nelement vertex 1\nproperty float nx\nproperty float z\nproperty float y\n"
          "property float x\nend_header\n9 3 2 1\n");
  ASSERT_EQ(t.shape(), (Shape{1, 4}));
  EXPECT_EQ(std::vector<float>(t.data_as<float>(), t.data_as<float>() + 4), (std::vector<float>{1, 2, 3, 9}));
}

TEST(PcdReader, InconsistentCountsMissingAxesAndGarbageAreErrors) {
  expect_error([&] { pcd(kPcdXyz + "WIDTH 3\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6\n"); },
               {"c.pcd", "WIDTH 3 x HEIGHT 1 = 3 disagrees with POINTS 2"});
  expect_error([&] { pcd("FIELDS x y i\nSIZE 4 4 4\nTYPE F F F\nPOINTS 1\nDATA ascii\n1 2 3\n"); },
               {"c.pcd", "no 'z' field"});
  expect_error(
      [&] {
        pcd(kPcdXyz + "POINTS 4000000000000\nDATA binary\n" + floats({1, 2, 3}));
      },
      {"c.pcd", "claims 4000000000000 points"});
  expect_error([&] { pcd(kPcdXyz + "POINTS 1\nDATA binary\n" + floats({1, 2, 3, 4})); }, {"c.pcd", "bytes after"});
  expect_error([&] { pcd(kPcdXyz + "POINTS 1\nDATA ascii\n1 2 3 4\n"); }, {"c.pcd", "more data after"});
  expect_error([&] { pcd("FIELDS x y z\nSIZE 4 4 four\nTYPE F F F\nPOINTS 1\nDATA ascii\n1 2 3\n"); },
               {"c.pcd", "SIZE", "'four'"});
  expect_error([&] { pcd("FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 999999999\nPOINTS 1\nDATA ascii\n1 2 3\n"); },
               {"c.pcd", "COUNT 999999999"});
  expect_error([&] { pcd("FIELDS x y z\nSIZE 4 4\nTYPE F F F\nPOINTS 1\nDATA ascii\n1 2 3\n"); },
               {"c.pcd", "different lengths"});
  expect_error([&] { pcd(kPcdXyz + "POINTS 1\nPOINTS 1\nDATA ascii\n1 2 3\n"); }, {"c.pcd", "appears twice"});
  expect_error([&] { pcd(kPcdXyz + "POINTS 1\n"); }, {"c.pcd", "no DATA line"});
  Tensor padded = pcd("FIELDS x _ y z\nSIZE 4 4 4 4\nTYPE F F F F\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 7 2 3\n");
  EXPECT_EQ(padded.shape(), (Shape{1, 3}));  // "_" is padding
  EXPECT_EQ(padded.data_as<float>()[1], 2.f);
}

TEST(BinReader, FieldCountsAndSizesAreChecked) {
  std::string b = floats({1, 2, 3, 4});
  EXPECT_EQ(parse_bin_cloud(b.data(), b.size(), 4, "c.bin").shape(), (Shape{1, 4}));
  expect_error([&] { parse_bin_cloud(b.data(), b.size(), 0, "c.bin"); }, {"c.bin", "got 0"});
  expect_error([&] { parse_bin_cloud(b.data(), b.size(), 5, "c.bin"); }, {"c.bin", "16 bytes", "5-float"});
  expect_error([&] { read_point_cloud("/nonexistent/c.bin"); }, {"/nonexistent/c.bin", "cannot open"});
}

TEST(NonfiniteInputs, CountFirstIndexAndPolicy) {
  Tensor t = test::iota_tensor({2, 3});
  t.data_as<float>()[4] = std::nanf("");
  t.data_as<float>()[5] = INFINITY;
  NonfiniteCount c = count_nonfinite(t);
  EXPECT_EQ(c.count, 2);
  EXPECT_EQ(c.first, 4);
  EXPECT_EQ(multi_index(t.shape(), 4), "[1, 1]");
  std::string w = check_nonfinite(NonfinitePolicy::kWarn, "points", "cloud.npy", t);
  EXPECT_NE(w.find("input 'points' (cloud.npy): 2 of 6 values are NaN or infinite, the first at [1, 1]"),
            std::string::npos)
      << w;
  expect_error([&] { check_nonfinite(NonfinitePolicy::kError, "points", "", t); }, {"input 'points'", "2 of 6"});
  EXPECT_EQ(check_nonfinite(NonfinitePolicy::kAllow, "points", "", t), "");
  EXPECT_EQ(check_nonfinite(NonfinitePolicy::kError, "points", "", test::iota_tensor({3})), "");
  expect_error([] { parse_nonfinite_policy("maybe", "--nonfinite"); }, {"--nonfinite", "'maybe'"});
}
