#include "io/reference_file.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/common.h"
#include "io/npy.h"

namespace pointrt {

std::string base64_decode(const std::string& text, const std::string& where) {
  auto value_of = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int nbits = 0, pad = 0;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    int v = value_of(c);
    if (v < 0 || pad) fail(where, ": not base64 (character '", c, "')");
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (pad > 2) fail(where, ": not base64 (", pad, " padding characters)");
  return out;
}

namespace {

using Json = nlohmann::json;

// An encoded array: {"array": base64 of an .npy}, possibly inside a LazyNumpyArray's {"values": ...}.
Tensor decode_array(const Json& j, const std::string& where) {
  if (j.is_object() && j.contains("values")) return decode_array(j["values"], where);
  if (!j.is_object() || !j.contains("array") || !j["array"].is_string())
    fail(where, ": not an encoded array (expected {\"array\": <base64 .npy>})");
  std::string bytes = base64_decode(j["array"].get<std::string>(), where);
  return parse_npy(bytes.data(), bytes.size(), where);
}

}  // namespace

std::map<std::string, Tensor> parse_polygraphy_json(const std::string& text, const std::string& where,
                                                    const std::string& runner) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail(where, ": not valid JSON");
  if (!j.is_object() || !j.contains("lst") || !j["lst"].is_array())
    fail(where, ": not Polygraphy run results (no \"lst\" list of runners)");
  std::string names;
  for (const Json& entry : j["lst"]) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_array())
      fail(where, ": a runner entry is not [name, [iterations]]");
    std::string name = entry[0].get<std::string>();
    names += (names.empty() ? "" : ", ") + name;
    if (!runner.empty() && name != runner) continue;
    if (entry[1].empty()) fail(where, ": runner '", name, "' has no iterations");
    const Json& it = entry[1][0];
    if (!it.is_object() || !it.contains("outputs") || !it["outputs"].is_object())
      fail(where, ": runner '", name, "' iteration 0 has no \"outputs\"");
    std::map<std::string, Tensor> result;
    for (const auto& [key, value] : it["outputs"].items())
      result[key] = decode_array(value, str_cat(where, ": runner '", name, "' output '", key, "'"));
    return result;
  }
  fail(where, ": no runner named '", runner, "' (runners: ", names, ")");
}

std::map<std::string, Tensor> read_reference_file(const std::string& path, const std::string& runner) {
  auto ends_with = [&](const char* suffix) {
    std::string s = suffix;
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with(".json")) {
    std::ifstream f(path);
    if (!f) fail(path, ": cannot open the reference file");
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_polygraphy_json(ss.str(), path, runner);
  }
  if (ends_with(".npz")) return read_npz(path);
  fail(path, ": a reference file is an .npz (numpy.savez) or Polygraphy's --save-outputs .json");
}

}  // namespace pointrt
