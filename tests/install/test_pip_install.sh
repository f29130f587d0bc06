#!/usr/bin/env bash
# The Python package as users get it: `pip wheel ./python` and `pip install ./python` each into a
# fresh venv (no system site-packages), then, outside the checkout and with no environment
# variables but PATH, `import pointrt; pointrt.Session` runs a model and `pointrt --version`
# works. The build directory (build-wheel/) persists, so a second run only relinks.
#   tests/install/test_pip_install.sh SOURCE_DIR MODEL.onnx   (MODEL: x float32 [3, 4, 5] -> Relu -> y)
set -euo pipefail
SRC=$(cd "$1" && pwd)
MODEL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
PIP_FLAGS=(-q --disable-pip-version-check)

check() {  # check VENV: the installed package, not the checkout's, runs the model
  env -i PATH=/usr/bin:/bin HOME="$HOME" "$1/bin/python" - "$MODEL" <<'PY'
import sys
import numpy as np
import pointrt
assert pointrt.__file__.startswith(sys.prefix), pointrt.__file__
s = pointrt.Session(sys.argv[1])
got = [(v.name, str(v.dtype), v.shape) for v in s.inputs]
assert got == [("x", "float32", [3, 4, 5])], got
x = np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 4, 5)
np.testing.assert_array_equal(s.run({"x": x})["y"], np.maximum(x, 0))
try:
    s.run({"x": None})
except pointrt.Error as e:
    assert "input 'x' is None" in str(e)
else:
    raise AssertionError("None feed accepted")
print("ok:", pointrt.build_info().splitlines()[0], "from", pointrt.__file__)
PY
  env -i PATH="$1/bin:/usr/bin:/bin" pointrt --version | head -1
}

/usr/bin/python3 -m venv "$TMP/wheel-venv"
"$TMP/wheel-venv/bin/pip" wheel "${PIP_FLAGS[@]}" --no-deps "$SRC/python" -w "$TMP/wheels"
ls "$TMP"/wheels/pointrt-*.whl
"$TMP/wheel-venv/bin/pip" install "${PIP_FLAGS[@]}" "$TMP"/wheels/pointrt-*.whl
check "$TMP/wheel-venv"

/usr/bin/python3 -m venv "$TMP/install-venv"
"$TMP/install-venv/bin/pip" install "${PIP_FLAGS[@]}" "$SRC/python"
check "$TMP/install-venv"
echo "pip package: wheel and install OK"
