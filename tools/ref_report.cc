#include "tools/ref_report.h"

#include <iostream>
#include <map>

#include "core/common.h"
#include "io/npy.h"
#include "io/reference_file.h"

namespace pointrt {

Tolerance parse_tolerance(const std::string& text) {
  if (text == "elementwise") return Tolerance::kElementwise;
  if (text == "magnitude") return Tolerance::kMagnitude;
  fail("--tolerance: '", text, "' is not one of elementwise, magnitude");
}

int report_against_reference(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                             const std::string& ref_path, const CompareOptions& options) {
  std::map<std::string, Tensor> refs = read_reference_file(ref_path);
  int differing = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::cout << "output " << names[i] << ":\n";
    auto it = refs.find(names[i]);
    if (it == refs.end()) {
      std::cout << "  ref: no array '" << names[i] << "' in " << ref_path << "\n";
      ++differing;
      continue;
    }
    CompareResult c = compare_tensors(outputs[i], it->second, options);
    std::cout << "  vs ref: " << (c.ok ? "ok" : "DIFFERS") << ": " << c.message << "\n";
    if (!c.ok) ++differing;
  }
  std::cout << (differing ? "FAILED: " : "OK: ") << outputs.size() - differing << "/" << outputs.size()
            << " outputs match the reference ("
            << (options.tolerance == Tolerance::kMagnitude ? "|err| <= atol + rtol*max|ref|"
                                                           : "|err| <= atol + rtol*|ref| per element")
            << ")\n";
  return differing;
}

}  // namespace pointrt
