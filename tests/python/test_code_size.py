"""scripts/check_code_size.py finds C++ functions and their lengths the way a reader counts them."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "check_code_size.py"
_SPEC = importlib.util.spec_from_file_location("check_code_size", _PATH)
assert _SPEC and _SPEC.loader
check_code_size = importlib.util.module_from_spec(_SPEC)
sys.modules["check_code_size"] = check_code_size  # dataclasses look their module up
_SPEC.loader.exec_module(check_code_size)

SOURCE = r'''
#include <string>
namespace pointrt {
namespace {
const char* kText = "not { a function }";
struct Point {
  int x = 0;
  int norm() const {
    return x;
  }
};
}  // namespace

class Kernel : public Base {
 public:
  Kernel(int a, int b) : a_(a), b_{b}, c_(f(a)) {
    run([&](int v) { return v + 1; });
  }

 private:
  template <typename T>
  T twice(T v) const noexcept {
    auto lambda = [](T w) {
      return w * 2;  // a } in a comment
    };
    return lambda(v);
  }
  int a_, b_, c_;
};

std::string raw() {
  return R"x(})x";
}
int kTable[] = {1, 2, 3};
}  // namespace pointrt
'''


def test_functions_and_lengths() -> None:
    found = dict(check_code_size.cpp_functions(SOURCE))
    assert found == {"norm": 3, "Kernel": 3, "twice": 7, "raw": 3}

